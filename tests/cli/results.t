# kreach results: export (jsonl, csv, kernelbench), list and runs of a small database built
# first with kreach -e; the refusals (exit 3) leave the file as it was. Needs no GPU. Files go
# to a directory named after this transcript's process ($PPID), removed at the end.
$ D=${TMPDIR:-/tmp}/kreach-results-t.$PPID; rm -rf $D; mkdir -p $D && kreach -e 'local s = require("kreach.results.store"); local db = assert(s.open(arg[1])); local run = db:begin_run{command = {"kreach", "run"}, config_hash = "h1", device = {name = "NVIDIA H200"}}; local P19 = {suite = "kernelbench-level1", problem_id = 19, name = "19_ReLU", file_hash = "a"}; db:record_evaluation{run_id = run, problem = P19, candidate = {hash = "c1", name = "relu_v1", source = "x", origin = {model = "m", sample = 1}}, eval_key = "k1", dtype = "f32", verdict = "correct", baseline_ms = 0.5, candidate_ms = 0.25, speedup = 2.0, throttled = false, timing = {candidate = {summary = {n = 4, median = 0.25, mean = 0.25, min = 0.2, max = 0.3}, samples = {0.2, 0.25, 0.25, 0.3}}}}; db:record_evaluation{run_id = run, problem = {suite = "kernelbench-level1", problem_id = 2, name = "2_Matmul", file_hash = "b"}, candidate = {hash = "c2", name = "a \"quoted\", name", source = "y"}, eval_key = "k2", dtype = "bf16", verdict = "compile_error", reason = "nvrtc: error\nline 3"}; db:record_evaluation{run_id = run, problem = P19, eval_key = "k3", dtype = "f32", verdict = "correct", baseline_ms = 0.5, check_result = {max_rel = 0/0}}; db:finish_run(run, "finished"); print("built", run)' $D/r.db
= built	1
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db --format jsonl
~ ^{"baseline_ms":0%.5,"candidate_hash":"c1","candidate_ms":0%.25,"candidate_name":"relu_v1","candidate_ref":1,.*"dtype":"f32","eval_key":"k1",.*"id":1,.*"origin":{"model":"m","sample":1},.*"problem_id":19,"problem_name":"19_ReLU",.*"speedup":2%.0,.*"verdict":"correct"}$
~ ^{.*"candidate_name":"a \"quoted\", name",.*"reason":"nvrtc: error\nline 3",.*"verdict":"compile_error"}$
~ ^{"baseline_ms":0%.5,"check_result":{"max_rel":"NaN"},"dtype":"f32","eval_key":"k3",
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db --format jsonl | wc -l
~ ^ *3$
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db --format csv
= id,run_id,suite,problem_id,problem,candidate,candidate_hash,dtype,verdict,reason,kernelbench_allclose,baseline_ms,candidate_ms,speedup,speedup_lo,speedup_hi,pytorch_ms,pytorch_compiled_ms,speedup_pytorch,speedup_pytorch_lo,speedup_pytorch_hi,speedup_compiled,speedup_compiled_lo,speedup_compiled_hi,baseline_vs_pytorch,sol_fraction,throttled,time_method,other_stream_calls,timing_warnings,wall_s,finished_at,model,harness,measured_here,source_file
~ ^1,1,kernelbench%-level1,19,19_ReLU,relu_v1,c1,f32,correct,,,0%.5,0%.25,2%.0,,,,,,,,,,,,,false,,,,,%d%d%d%d%-%d%d%-%d%dT[%d:]+Z,m,,true,$
~ ^2,1,kernelbench%-level1,2,2_Matmul,"a ""quoted"", name",c2,bf16,compile_error,"nvrtc: error$
~ ^line 3",,,,,,,,,,,,,,,,,,,,,,%d%d%d%d%-
~ ^3,1,kernelbench%-level1,19,19_ReLU,,,f32,correct,,,0%.5,,,,,,,,
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db --format kernelbench
= {
= "2": [
~ ^  {"compiled":false,"correctness":false,"metadata":{"candidate_hash":"c2","dtype":"bf16","kreach_eval_id":2,"kreach_run_id":1,"problem":"2_Matmul","reason":"nvrtc: error\nline 3","verdict":"compile_error"},"runtime":%-1%.0,"runtime_stats":{},"sample_id":0}$
= ],
= "19": [
~ ^  {"compiled":true,"correctness":true,"metadata":{.*"kreach_eval_id":1,.*},"runtime":0%.25,"runtime_stats":{"device":"cuda:0","hardware":"NVIDIA H200","max":0%.3,"mean":0%.25,"min":0%.2,"num_trials":4,"std":0%.0353553390593%d*,?},"sample_id":1}$
= ]
= }
! kreach_eval_id":3
$ D=${TMPDIR:-/tmp}/kreach-results-t.$PPID; kreach results export --db $D/r.db --format kernelbench -o $D/kb.json && kreach -e 'local s = io.open(arg[1]):read("a"); local t = require("kreach.results.store").json.decode(s); print(#t["2"], #t["19"], s:find("\"2\"") < s:find("\"19\""))' $D/kb.json
= 1	1	true
# a run id that names no run is a usage error, as a problem name that names nothing is
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db --format csv --run 2
? 2
~ ^kreach results: %-%-run 2: there is no run 2 in .*/r%.db %(kreach results runs lists them%)$
! ^id,run_id
$ kreach results list --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db
~ ^ +id +problem +candidate +dtype +verdict +speedup$
~ ^ +1 +19_ReLU +relu_v1 +f32 +correct +2$
~ ^ +2 +2_Matmul +a "quoted", name +bf16 +compile_error/nvr~ +%-$
~ ^ +3 +19_ReLU +%(baseline%) +f32 +correct +%-$
$ kreach results runs --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db
~ ^ +1 +finished +[%dT:Z%-]+ +[%dT:Z%-]+ +3 +h1 +kreach run$
$ kreach results list --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db --json
~ ^{"evaluations":%[{"baseline_ms":0%.5,"candidate_hash":"c1",.*"candidate_name":"relu_v1",.*"speedup":2%.0,.*"verdict":"correct"},{.*"candidate_name":"a \"quoted\", name",.*"reason":"nvrtc: error\nline 3",.*}%]}$
$ kreach results runs --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db --json
~ ^{"runs":%[{"command":%["kreach","run"%],"config_hash":"h1","evaluations":3,"finished_at":"[%dT:Z%-]+","id":1,"started_at":"[%dT:Z%-]+","status":"finished"}%]}$
$ kreach results export --format csv --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/missing.db
? 3
~ ^kreach results: .*/missing%.db: no such results database$
$ D=${TMPDIR:-/tmp}/kreach-results-t.$PPID; printf hello > $D/bad.db; kreach results export --db $D/bad.db --format jsonl
? 3
~ ^kreach results: .*/bad%.db: not a kreach results database %(file is not a database%)$
$ D=${TMPDIR:-/tmp}/kreach-results-t.$PPID; cat $D/bad.db; echo; ls $D
= hello
! bad%.db%-
$ D=${TMPDIR:-/tmp}/kreach-results-t.$PPID; kreach -e 'local db = require("kreach.core.sqlite").open(arg[1]); assert(db:script("CREATE TABLE users(a); CREATE TABLE orders(b)"))' $D/foreign.db && kreach results list --db $D/foreign.db
? 3
~ ^kreach results: .*/foreign%.db: not a kreach results database %(it has tables orders, users and no kreach_meta%)$
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db --format xml
? 2
~ argument for option '%-%-format' must be one of
# no --format: kernelbench, as kreach export's default (issue 35; tests/cli/flags_format.t)
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-results-t.$PPID/r.db
= "19": [
$ kreach results list --run x
? 2
~ a run id is a positive integer
$ rm -rf ${TMPDIR:-/tmp}/kreach-results-t.$PPID
