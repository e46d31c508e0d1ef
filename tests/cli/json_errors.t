# --json means one JSON document on standard output, for a failure too: a user error (usage 2,
# a file or database that cannot be loaded 3, a failure 1) is also written there as
# {"command", "error", "kind", "status"}, with the usual message on standard error
# (docs/cli.md, "JSON output"). Each output is decoded whole: cjson refuses a second document.
$ { kreach results runs --db "$TMPDIR/missing.db" --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), v.error, select(2, s:gsub("\n", "")))'
= status 3
~ ^results	database	3	.*/missing%.db: no such results database	1$
$ kreach results runs --db "$TMPDIR/missing.db" --json
? 3
~ ^kreach results: .*/missing%.db: no such results database$
# a usage error argparse finds (an unknown option), where --json is among the words
$ { kreach results list --bogus --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), v.error)'
= status 2
= results	usage	2	unknown option '--bogus'
$ { kreach oracle nosuch-problem --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status))'
= status 2
= oracle	usage	2
# kreach profile's own failures: a trace that cannot be loaded (3), a usage error (2)
$ { kreach profile import "$TMPDIR/nosuch-trace.json" --no-store --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status), v.error:match("nosuch%-trace%.json: No such file or directory$") ~= nil)'
= status 3
= profile	load	3	true
$ { kreach profile --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.command, v.kind, math.tointeger(v.status))'
= status 2
= profile	usage	2
# without --json nothing is written to standard output
$ kreach results runs --db "$TMPDIR/missing.db" 2>/dev/null
? 3
! .
# kreach oracle: one problem is its object; a suite is one object, its problems under results
# (on the host device, at small sizes)
$ kreach --device host oracle 19 --small --json | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.problem, v.outputs[1].name, select(2, s:gsub("\n", "")))'
= 19_ReLU	y	1
$ kreach --device host oracle dlrm-bench-variants --small --json | kreach -e 'local s = io.read("a"); local v = require("cjson").decode(s); print(v.suite, math.tointeger(v.within), math.tointeger(v.problems), #v.outside, #v.results, v.results[1].problem, v.results[1].within, select(2, s:gsub("\n", "")))'
= dlrm-bench-variants	1	1	0	1	6_SparseSGD_index_add	true	1
