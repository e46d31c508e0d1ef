# kreach generate's refusals that come before any request (no server is started here): a missing
# --model, a key variable that is not set where a request must go (no database to answer from),
# --no-torch without --eval, a bad --timeout.
$ kreach generate 19
? 2
~ ^kreach generate: %-%-model is required
$ env -u OPENAI_API_KEY kreach generate 19 --model some-model --provider openai --out /nonexistent/never --db /nonexistent/never.db
? 2
~ ^kreach generate: the API key: %$OPENAI_API_KEY is not set
$ kreach generate 19 --model some-model --no-torch
? 2
= kreach generate: --no-torch goes with --eval (it changes how the candidates are evaluated here)
$ kreach generate 19 --model some-model --timeout 0
? 2
~ ^kreach generate: %-%-request%-timeout: a positive number of seconds
# a base URL that is not http or https (libcurl would read file:// from the disk), and values
# that no API takes, refused before any request, naming the option
$ env KREACH_T_KEY=k kreach generate 19 --model some-model --provider openai --api-key-env KREACH_T_KEY --base-url file:///etc/passwd --out /nonexistent/never
? 2
= kreach generate: --base-url 'file:///etc/passwd': the scheme 'file' is not http or https (the only protocols kreach speaks)
$ env KREACH_T_KEY=k kreach generate 19 --model some-model --provider openai --api-key-env KREACH_T_KEY --base-url 127.0.0.1:8000/v1 --out /nonexistent/never
? 2
~ ^kreach generate: %-%-base%-url '127%.0%.0%.1:8000/v1': not a URL
$ env KREACH_T_KEY=k kreach generate 19 --model some-model --provider openai --api-key-env KREACH_T_KEY --base-url http://127.0.0.1:9/v1 --temperature 1e999 --out /nonexistent/never
? 2
= kreach generate: --temperature: a finite number >= 0
$ kreach generate 19 --model some-model --timeout 1e999
? 2
~ ^kreach generate: %-%-request%-timeout: a positive number of seconds
# a name that is no configuration, without --provider: a usage error naming where it looked,
# not a request for a model of that name
$ env OPENAI_API_KEY=k kreach generate 19 --model frontierr --out /nonexistent/never
? 2
~ ^kreach generate: %-%-model 'frontierr': no model configuration frontierr%.lua %(looked in: .*experiments/models.*%); for a model id, name its %-%-provider
