# issue 35: three time limits, three names: --phase-timeout (each phase of a worker: lint,
# check, eval, bench), --load-timeout (kreach list: loading a suite or problem file) and
# --request-timeout (kreach generate: one HTTP request). --timeout stays an alias of each, as it
# means one thing per command. Needs no GPU.
$ kreach check --help
~ ^ +%-%-phase%-timeout <seconds>,
~ ^ +%-%-timeout <seconds>
~ Seconds each phase of the worker may take
$ kreach eval --help
~ ^ +%-%-phase%-timeout <seconds>,
~ Seconds each worker phase may take
$ kreach list --help
~ ^ +%-%-load%-timeout <seconds>,
~ Seconds each suite or problem file may take to load
$ kreach generate --help
~ ^ +%-%-request%-timeout <seconds>,
~ Seconds one HTTP request may take
$ kreach lint 19 tests/candidates/019_relu.lua --phase-timeout 0
? 2
~ kreach lint: '0' is not a positive number of seconds
$ kreach bench 19 --phase-timeout=-1
? 2
~ kreach bench: '%-1' is not a positive number of seconds
$ kreach list --load-timeout 0
? 2
~ kreach list: '0' is not a positive number of seconds
$ kreach list --load-timeout 30
~ ^kernelbench
$ kreach list --timeout 30
~ ^kernelbench
$ kreach generate 19 --model m --request-timeout 0
? 2
~ kreach generate: %-%-request%-timeout: a positive number of seconds
$ kreach generate 19 --model m --timeout=-1
? 2
~ kreach generate: %-%-request%-timeout: a positive number of seconds
