# kreach results export cannot be turned against the database it reads: an output that
# resolves to the database or its -wal/-shm (as given, through a link or a hard link) is a
# usage error (exit 2) and the database is left as it was; every export is written to a
# temporary file renamed into place, so a failed one leaves the old file; CSV cells that a
# spreadsheet would run as a formula are neutralised. Needs no GPU. Files go to a directory
# named after this transcript's process ($PPID), removed at the end.
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; rm -rf $D; mkdir -p $D && kreach -e 'local s = require("kreach.results.store"); local db = assert(s.open(arg[1])); local run = db:begin_run{command = {"kreach"}, config_hash = "h1"}; db:record_evaluation{run_id = run, problem = {suite = "@SUM(A1)", problem_id = 19, name = "+19_ReLU", file_hash = "a"}, candidate = {hash = "c1", name = "=HYPERLINK(\"http://x\",\"y\")", source = "x"}, eval_key = "k1", dtype = "f32", verdict = "invalid_candidate", reason = "-2+3", speedup = -1.5}; db:finish_run(run, "finished"); print("built", run)' $D/r.db && sha256sum < $D/r.db > $D/r.sum && ln -s r.db $D/link && ln $D/r.db $D/hard && echo ok
= built	1
= ok
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; kreach results export --db $D/r.db --format csv -o $D/r.db
? 2
~ ^kreach results: refusing to write .*/r%.db: it is the file .*/r%.db %(choose another output file%)$
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; kreach results export --db $D/r.db --format jsonl -o $D/r.db-wal
? 2
~ refusing to write .*/r%.db%-wal: it is the file .*/r%.db%-wal
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; kreach results export --db $D/r.db --format jsonl -o $D/r.db-shm
? 2
~ refusing to write .*/r%.db%-shm
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; kreach results export --db $D/r.db --format kernelbench -o $D/./link
? 2
~ refusing to write .*/%./link: it is the file .*/r%.db
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; kreach results export --db $D/r.db --format csv -o $D/hard
? 2
~ refusing to write .*/hard: it is the same file as .*/r%.db
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; sha256sum < $D/r.db | cmp - $D/r.sum && ls -A $D && kreach results list --db $D/r.db
= hard
= link
= r.db
= r.sum
~ ^ +1 +%+19_ReLU
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; kreach results export --db $D/r.db --format csv
~ ^1,1,'@SUM%(A1%),19,'%+19_ReLU,"'=HYPERLINK%(""http://x"",""y""%)",c1,f32,invalid_candidate,'%-2%+3,,,,%-1%.5,
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; echo old > $D/out.csv; kreach results export --db $D/missing.db --format csv -o $D/out.csv; echo "status $?"; cat $D/out.csv; ls -A $D | grep -c '^\.out' || true
~ no such results database
= status 3
= old
= 0
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; ls -i $D/out.csv > $D/inode; kreach results export --db $D/r.db --format csv -o $D/out.csv && head -1 $D/out.csv && ls -i $D/out.csv | cmp -s - $D/inode || echo replaced; ls -A $D | grep -c '^\.out' || true
= id,run_id,suite,problem_id,problem,candidate,candidate_hash,dtype,verdict,reason,kernelbench_allclose,baseline_ms,candidate_ms,speedup,speedup_lo,speedup_hi,pytorch_ms,pytorch_compiled_ms,speedup_pytorch,speedup_pytorch_lo,speedup_pytorch_hi,speedup_compiled,speedup_compiled_lo,speedup_compiled_hi,baseline_vs_pytorch,sol_fraction,throttled,time_method,other_stream_calls,timing_warnings,wall_s,finished_at,model,harness,measured_here,source_file
= replaced
= 0
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; kreach results export --db $D/r.db --format csv -o $D/nodir/out.csv
? 1
~ ^kreach results: .*/nodir/out%.csv: No such file or directory$
$ D=${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID; kreach results export --db $D/r.db --format csv -o $D
? 2
~ is a directory
$ rm -rf ${TMPDIR:-/tmp}/kreach-results-safety-t.$PPID
# --db defaults to $KREACH_DB (when set and not empty), else results.db, in every command
# that has it: a reader given only $KREACH_DB reads that database.
$ d=$(mktemp -d) && KREACH_DB=$d/env.db kreach results runs; s=$?; rm -rf $d; exit $s
? 3
~ ^kreach results: /.*/env%.db: no such results database$
$ d=$(mktemp -d) && cd $d && KREACH_DB= kreach results runs; s=$?; cd / && rm -rf $d; exit $s
? 3
~ ^kreach results: results%.db: no such results database$
