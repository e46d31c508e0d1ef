# Values are checked where they are parsed: a bad one is a usage error (status 2) that names
# the value, before any work starts (no GPU is needed to get it). A negative number after an
# option is read as its value, not as an option. A name that names nothing (a problem, a
# suite, a size) is a usage error too; a file that does not load is status 3.
$ kreach check 19 tests/candidates/019_relu.lua --trials -3
? 2
= kreach check: '-3' is not a positive integer
$ kreach check 19 tests/candidates/019_relu.lua --trials 2.5
? 2
= kreach check: '2.5' is not a positive integer
$ kreach check 19 tests/candidates/019_relu.lua --seed -1
? 2
= kreach check: '-1' is not an integer of 0 or more
$ kreach check 19 tests/candidates/019_relu.lua --rel-l2 0
? 2
= kreach check: '0' is not a positive number
$ kreach check 19 tests/candidates/019_relu.lua --guard-bytes=-8
? 2
= kreach check: '-8' is not an integer of 0 or more
$ kreach eval 19 tests/candidates/019_relu.lua --budget -1 --db /dev/null
? 2
= kreach eval: '-1' is not a positive number
$ kreach eval 19 tests/candidates/019_relu.lua --timing-sets 0 --db /dev/null
? 2
= kreach eval: '0' is not a positive integer
$ kreach eval 19 tests/candidates/019_relu.lua --min-samples nan --db /dev/null
? 2
= kreach eval: 'nan' is not a positive integer
$ kreach eval 19 tests/candidates/019_relu.lua --min-samples 100 --max-samples 10 --db /dev/null
? 2
= kreach eval: timing: min_samples (100) is more than max_samples (10)
$ kreach bench 19 --sol-margin=-0.5 --db /dev/null
? 2
= kreach bench: '-0.5' is not a number of 0 or more
$ kreach lint 19 tests/candidates/019_relu.lua --size dim=0
? 2
= kreach lint: --size dim: a size of 0 is not allowed (sizes are at least 1)
$ kreach lint 19 tests/candidates/019_relu.lua --size dim=-4
? 2
= kreach lint: --size dim: '-4' is not a positive integer
$ kreach show 19 --size dim=1e3
? 2
= kreach show: --size dim: '1e3' is not a positive integer
$ kreach lint 19 tests/candidates/019_relu.lua --dtype f64
? 2
~ ^kreach lint: argument for option '%-%-dtype' must be one of 'f32', 'bf16', 'f16'$
$ kreach oracle 19 --seed abc
? 2
= kreach oracle: 'abc' is not an integer of 0 or more
$ kreach profile report nothing.json --top 0
? 2
= kreach profile: '0' is not a positive integer
$ kreach show nosuch
? 2
= kreach show: no problem 'nosuch' (a path, an id or a name from a suite)
$ kreach show 19 --size nope=3
? 2
~ no size named 'nope'
$ d=$(mktemp -d) && printf 'return kreach.problem{ name = \n' > "$d/broken.lua" && kreach show "$d/broken.lua"; s=$?; rm -rf "$d"; exit $s
? 3
~ broken%.lua:2:
# eval says what it will evaluate; with nothing to evaluate (every candidate skipped) it says
# so and exits 1, before it needs a GPU or touches the database.
$ kreach check 19 tests/candidates/nosuch.lua
? 1
= tests/candidates/nosuch.lua on 19_ReLU at f32
= verdict: invalid_candidate (tests/candidates/nosuch.lua: cannot read the candidate: No such file or directory)
$ d=$(mktemp -d) && kreach eval 19 $d/nosuch.lua --db $d/r.db; s=$?; ls $d | wc -l; rm -rf $d; exit $s
? 1
~ ^kreach eval: skipped: .*nosuch%.lua: no such file or directory$
= kreach eval: nothing to evaluate on 19: 1 candidate skipped
= 0
$ d=$(mktemp -d) && kreach eval kernelbench-l1-repr $d --json; s=$?; rm -rf $d; exit $s
? 1
~ ^{"evaluations":%[%],"skipped":%[{"candidate_path":".*","why":".*no candidate files %(<id>_<name>%.lua or %.py%) and no manifest%.json"}%]}$
# --lua-memory (a candidate's Lua heap; lint, check, eval, bench) is a size of at least 1 MiB
$ kreach lint 19 tests/candidates/019_relu.lua --lua-memory 512K
? 2
= kreach lint: '512K' is too small a Lua heap: at least 1 MiB
$ kreach check 19 tests/candidates/019_relu.lua --lua-memory lots
? 2
= kreach check: 'lots' is not a size (such as 256M or 1G)
$ kreach eval 19 tests/candidates/019_relu.lua --lua-memory 9000000T --db /dev/null
? 2
= kreach eval: '9000000T' is too large a Lua heap (below 8 EiB)
$ kreach bench 19 --lua-memory=0
? 2
= kreach bench: '0' is too small a Lua heap: at least 1 MiB
# --arch is checked in full where it is parsed, by the rule the worker's compile applies: sm_90x
# passed the launch-limit check (which reads only the digits) and ended the worker with status 99,
# recorded as the candidate's runtime_error
$ kreach lint 19 tests/candidates/019_relu.lua --arch sm_90x
? 2
= kreach lint: --arch 'sm_90x' is not of the form sm_90 (or sm_90a, sm_100f)
! runtime_error
$ kreach lint 19 tests/candidates/019_relu.lua --arch sm_100x1
? 2
= kreach lint: --arch 'sm_100x1' is not of the form sm_90 (or sm_90a, sm_100f)
$ kreach lint 19 tests/candidates/019_relu.lua --arch sm_90a
~ ^tests/candidates/019_relu%.lua: ok %(dry run: 1 launch of relu4; compiled for sm_90a
