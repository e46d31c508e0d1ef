# The sealed worker (docs/candidates.md, "The seal"). Candidates that reach for the host's
# files, with secrets planted in the environment that must appear nowhere; a memory bomb; an
# error message that would repaint the terminal; the refusal to run unsealed; the options'
# misuse; and what kreach info says. Needs no GPU.
$ OPENAI_API_KEY=sk-planted-kreach-secret KREACH_TEST_SECRET=planted-kreach-secret kreach lint 19 tests/candidates/bad_include_environ.lua
? 1
= tests/candidates/bad_include_environ.lua: invalid_candidate
~ bad_include_environ%.lua: source line 1: #include "/proc/self/environ" is not allowed: an absolute path
! planted
$ KREACH_TEST_SECRET=planted-kreach-secret kreach lint 19 tests/candidates/bad_include_passwd.lua --json
? 1
~ "verdict":"invalid_candidate"
~ source line 1: #include \"/etc/passwd\" is not allowed: an absolute path
~ "seal":{.*"filesystem":"landlock"
! planted
! root:
$ kreach lint 19 tests/candidates/bad_include_macro.lua
? 1
~ bad_include_macro%.lua: source line 3: #include of a name computed by a macro is not allowed
$ kreach lint 19 tests/candidates/bad_has_include.lua
? 1
~ bad_has_include%.lua: source line 1: __has_include is allowed only as __has_include%(<header>%)
$ kreach lint 19 tests/candidates/bad_include_array.lua
? 1
~ bad_include_array%.lua: source line 2: #include "/etc/hostname" is not allowed: an absolute path
# the worker's environment is an allow-list: the planted variables do not reach it
$ KREACH_TEST_SECRET=planted-kreach-secret OPENAI_API_KEY=sk-planted-kreach-secret kreach -e 'local k = require "kreach"; local r = assert(require("kreach.run.worker").run({ k.executable(), "-e", "local f = assert(io.open(\"/proc/self/environ\")); require(\"kreach.run.worker\").result({ env = f:read(\"a\") })" })); io.write((r.env:gsub("\\x00", "\n")))'
~ ^KREACH_WORKER_DIR=/.*kreach%-worker%-
~ ^HOME=/.*kreach%-worker%-
~ ^KREACH_CACHE_DIR=/
~ ^LANG=C$
~ ^PATH=
! planted
! ^OPENAI
# a memory bomb ends at once, at the candidate's Lua heap cap, as a verdict that names the cap
# and its option (timeout 60: not a hang)
$ timeout 60 kreach lint 19 tests/candidates/bad_memory_bomb.lua --arch sm_90 --worker-memory 1536M
? 1
= tests/candidates/bad_memory_bomb.lua: invalid_candidate
~ not enough memory %(out of memory: the candidate's Lua heap is limited to 256 MiB %(%-%-lua%-memory changes it%)%)$
$ timeout 60 kreach lint 19 tests/candidates/bad_memory_bomb.lua --arch sm_90 --lua-memory 64M
? 1
~ not enough memory %(out of memory: the candidate's Lua heap is limited to 64 MiB %(%-%-lua%-memory changes it%)%)$
# a cap above the worker's memory: the worker's limit (RLIMIT_DATA) may be the one that ends it, and is named too
$ timeout 60 kreach lint 19 tests/candidates/bad_memory_bomb.lua --arch sm_90 --lua-memory 4G --worker-memory 1536M
? 1
~ not enough memory %(out of memory: the candidate's Lua heap is limited to 4%.0 GiB %(%-%-lua%-memory changes it%); the worker's memory %(RLIMIT_DATA%) is limited to 1%.5 GiB %(%-%-worker%-memory changes it%)%)$
# terminal controls in a reason reach the terminal visible, and the reason is bounded
$ out=$(kreach lint 19 tests/candidates/bad_control_chars.lua 2>&1); echo "status $?"; printf '%s' "$out" | LC_ALL=C tr -dc '\001-\010\013-\037\177' | wc -c; [ $(printf '%s' "$out" | wc -c) -lt 70000 ] && echo bounded; printf '%s\n' "$out" | cut -c1-160
= status 1
= 0
= bounded
= tests/candidates/bad_control_chars.lua: invalid_candidate
~ ^  tests/candidates/bad_control_chars%.lua:7: \x0d\x1b%[1A\x1b%[2Ktests/candidates/bad_control_chars%.lua: ok
! ^tests/candidates/bad_control_chars%.lua: ok
$ d=$(mktemp -d) && f="$d/$(printf 'x\033[2K\rok')_19.lua" && cp tests/candidates/bad_io.lua "$f" && kreach lint 19 "$f" | LC_ALL=C tr -dc '\033\r' | wc -c
= 0
# without Landlock, candidates are refused (status 3) unless KREACH_UNSEALED=1, said loudly
$ KREACH_NO_LANDLOCK=1 kreach lint 19 tests/candidates/019_relu.lua
? 3
~ ^kreach lint: cannot seal the worker: KREACH_NO_LANDLOCK=1 is set%. Candidates are not run unsealed; set KREACH_UNSEALED=1
$ KREACH_NO_LANDLOCK=1 kreach eval 19 tests/candidates/019_relu.lua --db /dev/null
? 3
~ ^kreach eval: cannot seal the worker
$ KREACH_NO_LANDLOCK=1 KREACH_UNSEALED=1 kreach lint 19 tests/candidates/bad_include_passwd.lua --json
? 1
~ ^kreach lint: WARNING: KREACH_UNSEALED=1: candidates run WITHOUT the filesystem seal %(Landlock: KREACH_NO_LANDLOCK=1 is set%)
~ "unsealed":"KREACH_UNSEALED=1"
~ "filesystem":"none"
~ is not allowed: an absolute path
# misuse of the options: status 2
$ kreach lint 19 tests/candidates/bad_io.lua --timeout 0
? 2
~ kreach lint: '0' is not a positive number of seconds
$ kreach lint 19 tests/candidates/bad_io.lua --timeout=-1
? 2
~ kreach lint: '%-1' is not a positive number of seconds
$ kreach check 19 tests/candidates/019_relu.lua --timeout 0
? 2
~ kreach check: '0' is not a positive number of seconds
$ kreach eval 19 tests/candidates/019_relu.lua --timeout=-5
? 2
~ kreach eval: '%-5' is not a positive number of seconds
$ kreach bench 19 --timeout 0
? 2
~ kreach bench: '0' is not a positive number of seconds
$ kreach lint 19 tests/candidates/bad_io.lua --worker-memory 10M
? 2
~ kreach lint: '10M' is too small: at least 64 MiB
$ kreach check 19 tests/candidates/019_relu.lua --worker-memory lots
? 2
~ kreach check: 'lots' is not a size
# kreach info says which protections are active, GPU or not
$ kreach info 2>/dev/null; true
= worker seal:
~ ^  filesystem: Landlock ABI %d+ %(reads: the CUDA toolkit, kreach, the problem, the candidate; writes
~ ^  memory: %d+%.%d GiB per worker %(RLIMIT_DATA; the smaller of 16 GiB and half of the host's
~ ^  environment: an allow%-list of %d+ variables %(PATH, LD_LIBRARY_PATH, CUDA_HOME
~ ^  parent watch: pipe and PR_SET_PDEATHSIG$
~ ^  source check: includes only of literal CUDA toolkit headers
$ KREACH_NO_LANDLOCK=1 kreach info 2>/dev/null; true
= worker seal:
~ ^  filesystem: unavailable %(KREACH_NO_LANDLOCK=1 is set%): candidates are refused unless KREACH_UNSEALED=1$
# how cuDNN's engine is chosen for the convolutions' baselines, and a bad choice named
$ kreach info --json 2>/dev/null; true
~ "selection":"pytorch"
$ KREACH_CUDNN_SELECT=fastest kreach info --json 2>/dev/null; true
~ "selection":"fastest"
$ KREACH_CUDNN_SELECT=bogus kreach info --json 2>/dev/null; true
~ "selection_error":"KREACH_CUDNN_SELECT=bogus: expected pytorch or fastest"
$ kreach info --json 2>/dev/null; true
~ "pytorch":{"available":
~ "seal":{
~ "landlock_abi":%d+
~ "memory_bytes":%d+
