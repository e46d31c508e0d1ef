# kreach results import and merge (issue 36; docs/results.md, "Importing other harnesses'
# results", "Merging shards"): a KernelBench eval_results.json (the dict layout, metadata per
# problem and sample) and its baseline times imported and listed; kreach's JSON lines back
# through export, import, export; a malformed file refused with the database unchanged; two
# shards merged, the refusals. Needs no GPU. Files go to a directory named after this
# transcript's process ($PPID), removed at the end.
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; rm -rf $D; mkdir -p $D && printf '%s\n' '{"19": {"0": {"compiled": true, "correctness": true, "runtime": 0.5, "runtime_stats": {"mean": 0.5, "std": 0.01, "min": 0.48, "max": 0.53, "num_trials": 100}, "metadata": {"hardware": "NVIDIA H100", "device": "0"}},' ' "3": {"compiled": false, "correctness": false, "runtime": -1.0, "runtime_stats": {}, "metadata": {"compilation_error": "nvcc: error"}}},' ' "2": [{"sample_id": 1, "compiled": true, "correctness": false, "runtime": -1.0, "metadata": {"correctness_issue": "Output mismatch"}}]}' > $D/eval_results.json && printf '%s\n' '{"level1": {"19_ReLU.py": {"mean": 1.5, "std": 0.1, "min": 1.4, "max": 1.7, "num_trials": 100}}}' > $D/times.json && echo written
= written
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; cd $D && kreach results import eval_results.json --db r.db --model gpt-x --baseline-times times.json
~ ^imported 3 evaluations from eval_results%.json %(kernelbench, hash %x+%) into r%.db as run 1$
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results list --db $D/r.db
~ ^ +1 +2_Standard_matrix_multiplication_ +gpt%-x sample 1 +f32 +incorrect/Output ~ +%-$
~ ^ +2 +19_ReLU +gpt%-x sample 0 +f32 +correct +%-$
~ ^ +3 +19_ReLU +gpt%-x sample 3 +f32 +compile_error/nvc~ +%-$
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results runs --db $D/r.db
~ ^ +1 +imported +[%dT:Z%-]+ +[%dT:Z%-]+ +3 +import:%x+~ +kreach results import eval_results%.json$
# the speedup against PyTorch is KernelBench's: the baseline's mean over the runtime (1.5 / 0.5)
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results export --db $D/r.db --format csv
~ ^2,1,kernelbench%-l1,19,19_ReLU,gpt%-x sample 0,%x+,f32,correct,,,,0%.5,,,,1%.5,,3%.0,
# an imported row says where it came from, in the CSV as in the JSON lines
~ ^2,1,.*,gpt%-x,kernelbench,false,eval_results%.json$
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results export --db $D/r.db --format jsonl
~ ^{.*"harness":"kernelbench",.*"measured_here":false,"model":"gpt%-x",.*"source_file":"eval_results%.json","source_hash":"%x+",.*"verdict":"incorrect"}$
# importing the same file again is refused: nothing is counted twice
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results import $D/eval_results.json --db $D/r.db
? 2
~ ^kreach results: .*eval_results%.json was imported already %(run 1 of .*r%.db holds it; its hash is %x+%)$
# a malformed file: the file and the entry named, exit 3, the database as it was
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; printf '%s\n' '{"19": {"3": {"compiled": true, "correctness": "yes", "runtime": 1.0}}}' > $D/bad.json; kreach results import $D/bad.json --db $D/r.db
? 3
~ ^kreach results: .*/bad%.json: problem "19", sample "3": correctness must be a boolean %(got a string%)$
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results runs --db $D/r.db | wc -l
~ ^ *2$
# into a database that is not there yet: none is made
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results import $D/bad.json --db $D/new.db
? 3
~ bad%.json: problem "19", sample "3": correctness must be a boolean
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; ls $D
! new%.db
# kreach's JSON lines: export, import into a new database, export: the same lines, the same ids
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results export --db $D/r.db --format jsonl -o $D/e1.jsonl && kreach results import $D/e1.jsonl --db $D/i.db && kreach results export --db $D/i.db --format jsonl -o $D/e2.jsonl && cmp $D/e1.jsonl $D/e2.jsonl && echo identical
~ ^imported 3 evaluations from .*/e1%.jsonl %(kreach, hash %x+%) into .*/i%.db as run 1$
= identical
# merge: r.db and i.db hold the same evaluations (the same keys): the overlap is counted once
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results merge $D/r.db $D/i.db -o $D/m.db
~ ^.*/r%.db: 1 run, 3 evaluations %(0 already in an earlier input, left out%)$
~ ^.*/i%.db: 1 run, 0 evaluations %(3 already in an earlier input, left out%)$
~ ^merged 2 databases into .*/m%.db: 2 runs, 3 evaluations, 3 duplicates left out$
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results merge $D/r.db $D/i.db -o $D/r.db
? 2
~ ^kreach results: refusing to write .*/r%.db: it is the input .*/r%.db %(merge writes a new database: choose another %-o%)$
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results merge $D/r.db $D/i.db -o $D/m.db
? 2
~ ^kreach results: refusing to write .*/m%.db: it exists %(merge writes a new database: remove it or choose another %-o%)$
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; kreach results merge $D/r.db -o $D/m3.db $D/missing.db
? 3
~ ^kreach results: .*/missing%.db: no such results database$
$ D=${TMPDIR:-/tmp}/kreach-import-t.$PPID; ls $D
! m3
$ rm -rf ${TMPDIR:-/tmp}/kreach-import-t.$PPID
