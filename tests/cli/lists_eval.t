# kreach eval <problem> <directory> judges only the directory's candidates that name the
# problem (issue 35): examples/ holds none for ReLU (19), so all five are skipped, said one by
# one and counted, and no device or database is touched (the same with a GPU or without).
$ kreach eval 19 examples --db ${TMPDIR:-/tmp}/kreach-lists-eval.$PPID.db; s=$?; test -e ${TMPDIR:-/tmp}/kreach-lists-eval.$PPID.db && echo "database created"; exit $s
? 1
= kreach eval: skipped: examples/001_matmul_tiled.lua: names problem 1, not 19_ReLU (19)
~ ^kreach eval: skipped: examples/048_mean_columns%.lua: names problem 48, not 19_ReLU %(19%)$
= kreach eval: nothing to evaluate on 19: 5 candidates skipped
! database created
! candidates? to evaluate on 19
$ kreach eval 19 examples --json --db ${TMPDIR:-/tmp}/kreach-lists-eval.$PPID.db
? 1
~ ^{"evaluations":%[%],"skipped":%[{"candidate_path":"examples/001_matmul_tiled%.lua"
