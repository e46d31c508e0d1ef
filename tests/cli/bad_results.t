# kreach results on bad input: a database with a JSON column damaged by hand is still listed and
# exported (the field left out, named on standard error, status 1); one whose evaluations table
# lacks a column is refused (status 3, no traceback); a candidate's error in Latin-1 is exported
# as valid UTF-8; a name with ESC or CR is shown visibly. Needs no GPU.
$ D=${TMPDIR:-/tmp}/kreach-bad-results-t.$PPID; rm -rf $D; mkdir -p $D && kreach -e 'local s = require("kreach.results.store"); local db = assert(s.open(arg[1])); local run = db:begin_run{command = {"kreach", "eval"}, config_hash = "h1"}; local P19 = {suite = "kernelbench-level1", problem_id = 19, name = "19_ReLU", file_hash = "a"}; db:record_evaluation{run_id = run, problem = P19, candidate = {hash = "c1", name = "evil\27[2K\rok", source = "x"}, eval_key = "k1", dtype = "f32", verdict = "runtime_error", reason = "caf\233", timing = {candidate = {summary = {median = 1.0}}}}; db:record_evaluation{run_id = run, problem = P19, eval_key = "k2", dtype = "f32", verdict = "baseline", baseline_ms = 0.5}; db:finish_run(run, "finished"); print("built")' $D/r.db && cp $D/r.db $D/nov.db
= built
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-bad-results-t.$PPID/r.db --format jsonl | kreach -e 'local n = 0; for l in io.lines() do n = n + 1; assert(utf8.len(l), "not UTF-8: " .. l) end; print("lines", n)'
= lines	2
$ kreach results list --db ${TMPDIR:-/tmp}/kreach-bad-results-t.$PPID/r.db
~ ^ +1 +19_ReLU +evil\x1b%[2K\x0dok +f32 +runtime_error/caf
! %c%[2K
! %cok
$ D=${TMPDIR:-/tmp}/kreach-bad-results-t.$PPID; kreach -e 'local db = require("kreach.core.sqlite").open(arg[1]); assert(db:exec("UPDATE evaluations SET timing = ? WHERE id = 1", "{not json"))' $D/r.db && kreach results export --db $D/r.db --format jsonl
? 1
~ ^kreach results: warning: .*/r%.db: evaluation 1: column 'timing' cannot be read %(json: expected a key at byte 2%); left out$
~ ^kreach results: 1 column of .*/r%.db could not be read and was left out %(see above%)$
~ ^{.*"id":1,.*"verdict":"runtime_error"}$
~ ^{.*"id":2,.*"verdict":"baseline"}$
! traceback
$ D=${TMPDIR:-/tmp}/kreach-bad-results-t.$PPID; kreach results export --db $D/r.db --format csv -o $D/out.csv; kreach -e 'local n = 0; for _ in io.lines(arg[1]) do n = n + 1 end; print("csv lines", n)' $D/out.csv
= csv lines	3
$ kreach results list --db ${TMPDIR:-/tmp}/kreach-bad-results-t.$PPID/r.db --json
? 1
~ ^kreach results: warning: .*evaluation 1: column 'timing'
~ ^{"evaluations":%[{.*"id":1,.*},{.*"id":2,.*}%]}$
$ D=${TMPDIR:-/tmp}/kreach-bad-results-t.$PPID; kreach -e 'local db = require("kreach.core.sqlite").open(arg[1]); assert(db:exec("ALTER TABLE evaluations DROP COLUMN verdict"))' $D/nov.db && kreach results list --db $D/nov.db
? 3
~ ^kreach results: .*/nov%.db: not a kreach results database %(schema version 4, but its table evaluations has no column verdict%)$
! traceback
$ rm -rf ${TMPDIR:-/tmp}/kreach-bad-results-t.$PPID
# --worker-memory past 64 bits: a usage error before any worker starts
$ kreach lint 19 examples/026_gelu_float4.lua --worker-memory 99999999T
? 2
~ ^kreach lint: '99999999T' is too large: a worker's memory limit %(%-%-worker%-memory%) is below 8 EiB %(8388608T%)$
! traceback
# a manifest whose problem is not a whole number: named with its entry, nothing evaluated (no GPU needed: planning comes first)
$ D=${TMPDIR:-/tmp}/kreach-bad-manifest-t.$PPID; rm -rf $D; mkdir -p $D; echo 'return {}' > $D/a.lua; echo '[{"file": "a.lua", "problem": 26.5}, null, {"file": "a.lua", "problem": "twenty-six"}]' > $D/manifest.json; kreach eval kernelbench-l1-repr $D; S=$?; rm -rf $D; exit $S
? 1
~ ^kreach eval: skipped: .*/manifest%.json: entry 1: "problem" must be a problem id, a whole number such as 19, not 26%.5$
~ ^kreach eval: skipped: .*/manifest%.json: entry 2 is null, not an object {"file": %.%.%.}$
~ ^kreach eval: skipped: .*/manifest%.json: entry 3: "problem" must be a problem id, a whole number such as 19, not "twenty%-six"$
~ ^kreach eval: nothing to evaluate on kernelbench%-l1%-repr: 3 candidates skipped$
! traceback
