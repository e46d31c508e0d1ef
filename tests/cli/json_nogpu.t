# nogpu: under --json a command that needs a GPU and finds none prints one JSON object on
# standard output, {"command", "error", "kind": "no_device", "status": 77}, and exits 77; the
# message on standard error is as without --json (docs/cli.md, "JSON output"). Each output is
# decoded whole (cjson refuses a second document) and its lines counted.
$ { kreach oracle 19 --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), select(2, s:gsub("\n", "")))'
= status 77
= oracle	no_device	77	1
$ { kreach oracle dlrm-bench --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), select(2, s:gsub("\n", "")))'
= status 77
= oracle	no_device	77	1
$ { kreach oracle 19 --torch --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), v.error:match("^no CUDA device: ") ~= nil)'
= status 77
= oracle	no_device	77	true
$ { kreach check 19 tests/candidates/019_relu.lua --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), select(2, s:gsub("\n", "")))'
= status 77
= check	no_device	77	1
$ { kreach calibrate --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), select(2, s:gsub("\n", "")))'
= status 77
= calibrate	no_device	77	1
$ { kreach scan-trivial 19 --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), select(2, s:gsub("\n", "")))'
= status 77
= scan-trivial	no_device	77	1
$ { kreach eval 19 tests/candidates/019_relu.lua --db "$TMPDIR/e.db" --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), select(2, s:gsub("\n", "")))'
= status 77
= eval	no_device	77	1
$ { kreach bench 19 --db "$TMPDIR/b.db" --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), select(2, s:gsub("\n", "")))'
= status 77
= bench	no_device	77	1
# profile: --json before "--" is kreach's; after it, the program's own
$ { kreach profile --json -- true 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), select(2, s:gsub("\n", "")))'
= status 77
= profile	no_device	77	1
$ kreach profile -- true --json
? 77
~ ^kreach: no CUDA device: 
! "kind"
# info keeps its own object: what it learnt without a GPU, with the error
$ { kreach info --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.device == require("cjson").null, v.error:match("^no CUDA device: ") ~= nil, select(2, s:gsub("\n", "")))'
= status 77
= true	true	1
# the message itself is unchanged without --json
$ kreach oracle 19
? 77
~ ^kreach: no CUDA device: 
! ^{
