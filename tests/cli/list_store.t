# What the results store holds can be listed: kreach results generations (the requests kreach
# generate made) and kreach profile list (the stored profiles), as text or one JSON object; an
# empty store says so (status 0), a missing one is status 3 naming it (docs/results.md).
$ kreach results generations --db "$TMPDIR/missing.db"
? 3
~ ^kreach results: .*/missing%.db: no such results database$
$ kreach profile list --db "$TMPDIR/missing.db"
? 3
~ ^kreach profile: .*/missing%.db: no such results database$
$ kreach -e 'assert(require("kreach.results.store").open(arg[1])):close()' "$TMPDIR/r.db" && kreach results generations --db "$TMPDIR/r.db"
~ ^no generations stored in .*/r%.db %(kreach generate stores each request it makes there%)$
$ kreach results generations --db "$TMPDIR/r.db" --json | kreach -e 'local v = require("cjson").decode(io.read("a")); print(#v.generations, v.db:match("r%.db$"))'
= 0	r.db
$ kreach profile list --db "$TMPDIR/r.db"
~ ^no profiles stored in .*/r%.db %(kreach profile %-%- <command%.%.%.> or kreach profile import <trace> stores one%)$
$ KREACH_DB="$TMPDIR/r.db" kreach profile list --json
~ ^{"db":".*/r%.db","profiles":%[%]}$
# two generations (one that failed), as kreach generate stores them
$ kreach -e 'local db = assert(require("kreach.results.store").open(arg[1])); db:save_generation{ key = "k1", prompt = "p", status = "ok", model = "m-1", suite = "kernelbench-l1", problem_id = 19, problem_name = "19_ReLU", sample = 1, turn = 1, input_tokens = 10, output_tokens = 20, cost_usd = 0.0012, candidate_file = "gen/019_1.lua", request = { model = "m-1" } }; db:save_generation{ key = "k2", prompt = "p", status = "error", model = "m-1", error = "HTTP 429", problem_name = "19_ReLU", sample = 2, turn = 1 }; db:close()' "$TMPDIR/r.db"
$ kreach results generations --db "$TMPDIR/r.db"
~ ^ +id  created_at +model +problem +sample turn  status +in_tok  out_tok  cost_usd  candidate$
~ ^ +1  %d+%-%d+%-%d+T[%d:]+Z m%-1 +19_ReLU +1 +1  ok +10 +20 +0%.0012  gen/019_1%.lua$
~ ^ +2  %S+ m%-1 +19_ReLU +2 +1  error +%- +%- +%-  error: HTTP 429$
$ kreach results generations --db "$TMPDIR/r.db" --json | kreach -e 'local v = require("cjson").decode(io.read("a")); local g = v.generations; print(#g, g[1].key, g[1].status, g[1].candidate_file, g[2].error, g[1].prompt, g[1].request)'
= 2	k1	ok	gen/019_1.lua	HTTP 429	nil	nil
# a profile, imported
$ kreach profile import tests/data/profile/kineto_small.json --db "$TMPDIR/r.db" --workload toy >/dev/null && kreach profile list --db "$TMPDIR/r.db"
~ ^  id  created_at +source +kernels +wall_s  workload +command$
~ ^   1  %S+ kineto +12 +0%.00024  toy +%-$
$ kreach profile list --db "$TMPDIR/r.db" --json | kreach -e 'local v = require("cjson").decode(io.read("a")); local p = v.profiles[1]; print(#v.profiles, math.tointeger(p.id), p.source, math.tointeger(p.n_kernels), p.workload)'
= 1	1	kineto	12	toy
