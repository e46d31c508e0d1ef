# issue 35: --format on kreach export and kreach results export, with one default (kernelbench:
# export's only format, and results export had none, so every command line that worked means
# the same). Needs no GPU. Files go to a directory named after this transcript's process ($PPID).
$ D=${TMPDIR:-/tmp}/kreach-flags-format.$PPID; rm -rf $D; mkdir -p $D && kreach -e 'local s = require("kreach.results.store"); local db = assert(s.open(arg[1])); local run = db:begin_run{command = {"kreach", "run"}, config_hash = "h1", device = {name = "NVIDIA H200"}}; db:record_evaluation{run_id = run, problem = {suite = "kernelbench-level1", problem_id = 19, name = "19_ReLU", file_hash = "a"}, candidate = {hash = "c1", name = "relu_v1", source = "x"}, eval_key = "k1", dtype = "f32", verdict = "correct", baseline_ms = 0.5, candidate_ms = 0.25, speedup = 2.0}; db:finish_run(run, "finished"); print("built", run)' $D/r.db
= built	1
# no --format: KernelBench's eval_results.json, as --format kernelbench writes it
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-flags-format.$PPID/r.db
= {
= "19": [
~ ^  {"compiled":true,"correctness":true,"metadata":{.*"kreach_eval_id":1,.*},"runtime":0%.25,
$ D=${TMPDIR:-/tmp}/kreach-flags-format.$PPID; kreach results export --db $D/r.db > $D/a.json && kreach results export --db $D/r.db --format kernelbench > $D/b.json && cmp $D/a.json $D/b.json && echo same
= same
# the other formats are as before
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-flags-format.$PPID/r.db --format csv
~ ^id,run_id,suite,problem_id,
$ kreach results export --help
~ %-%-format {jsonl,csv,kernelbench}
~ %(default: kernelbench%)
$ kreach export --help
~ %-%-format {kernelbench}
~ %(default: kernelbench%)
$ D=${TMPDIR:-/tmp}/kreach-flags-format.$PPID; kreach export 19 -o $D/kb && kreach export --format kernelbench 19 -o $D/kb2 && cmp $D/kb/19_ReLU.py $D/kb2/19_ReLU.py && echo same
~ /kb/19_ReLU%.py$
= same
$ rm -rf ${TMPDIR:-/tmp}/kreach-flags-format.$PPID
