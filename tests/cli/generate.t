# kreach generate's refusals that come before any request (no server is started here): a missing
# --model, a key variable that is not set, --no-torch without --eval, a bad --timeout.
$ kreach generate 19
? 2
~ ^kreach generate: %-%-model is required
$ env -u OPENAI_API_KEY kreach generate 19 --model some-model --out /nonexistent/never
? 2
~ ^kreach generate: the API key: %$OPENAI_API_KEY is not set
$ kreach generate 19 --model some-model --no-torch
? 2
= kreach generate: --no-torch goes with --eval (it changes how the candidates are evaluated here)
$ kreach generate 19 --model some-model --timeout 0
? 2
~ ^kreach generate: %-%-timeout: a positive number of seconds
