# kreach results summary (docs/results.md, "Summaries") on the database tests/lua/summary_store.lua
# builds (its header lists the rows; tests/lua/results_summary_groups_spec.lua works the figures out by
# hand): the text table, --md, --csv, --json, and the usage errors. Needs no GPU. Files go to a
# directory named after this transcript's process ($PPID), removed at the end.
$ D=${TMPDIR:-/tmp}/kreach-summary-t.$PPID; rm -rf $D; mkdir -p $D && kreach tests/lua/summary_store.lua $D/s.db
~ ^built	.*/s%.db$
# one group of everything by default
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db
~ ^group +evals +correct +incorrect +compile +runtime +timeout +skipped +invalid +correct%% +problems +pass@1 +pass@5 +pass@10$
~ ^all +13 +6 +2 +1 +1 +1 +1 +1 +50%.0%% +3 +0%.444 +1%.000 +%-$
~ ^speedups of the correct candidates against kreach's baseline
~ ^all +6 +1%.350x +1%.390x +3 +2%.000x +2%.289x +3 +2%.000x +2%.000x +1%.000 +1%.000 +1%.000 +0%.667 +0%.667 +0%.333$
= all: KernelBench's allclose passes 1 candidate that kreach does not find correct: kernelbench-level1/19_ReLU
= all: KernelBench's allclose fails 1 candidate that kreach finds correct: kernelbench-level1/1_Matmul
= all: 1 candidate queued work on other streams (timed as the all-streams span), 1 with timing warnings
= left out: 1 baseline timed alone, 1 repeated evaluation (the newest counts)
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --by model
~ ^model +evals +correct
~ ^%(unknown%) +1 +1 +0 +0 +0 +0 +0 +0 +100%.0%% +1 +1%.000 +%- +%-$
~ ^m%-a +8 +4 +2 +1 +1 +0 +0 +0 +50%.0%% +3 +0%.367 +1%.000 +%-$
~ ^m%-b +4 +1 +0 +0 +0 +1 +1 +1 +33%.3%% +3 +0%.333 +%- +%-$
~ ^m%-a +4 +1%.600x +1%.480x +2 +3%.000x +2%.828x +2 +3%.000x +2%.828x +0%.667 +0%.667 +0%.667 +0%.667 +0%.667 +0%.333$
~ ^m%-b +1 +1%.500x +1%.500x +1 +1%.500x +1%.500x +1 +1%.500x +1%.500x +0%.333 +0%.333 +0%.333 +0%.333 +0%.000 +0%.000$
! ^all
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --by model --against pytorch --md
~ ^%*%*speedups of the correct candidates against PyTorch eager
= | model | evals | correct | incorrect | compile | runtime | timeout | skipped | invalid | correct% | problems | pass@1 | pass@5 | pass@10 |
= | m-a | 2 | 1.250x | 1.200x | 1 | 1.600x | 1.600x | 2 | 1.250x | 1.200x | 0.667 | 0.667 | 0.667 | 0.333 | 0.333 | 0.000 |
= - m-a: KernelBench's allclose fails 1 candidate that kreach finds correct: kernelbench-level1/1_Matmul
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --by model,problem --csv
= model,problem,evaluations,correct,incorrect,compile_error,runtime_error,timeout,skipped,invalid_candidate,judged,correct_rate,problems,pass@1,pass@5,pass@10,kb_pass_not_correct,kb_fail_correct,other_streams,timing_warned,measured,median,geomean,verified,verified_median,verified_geomean,best_problems,best_median,best_geomean,fast_0,fast_0.5,fast_0.8,fast_1,fast_1.5,fast_2
~ ^m%-a,kernelbench%-level1/1_Matmul,5,3,1,1,0,0,0,0,5,0%.6,1,0%.6,1%.0,,0,1,0,0,3,1%.2,1%.06265856918%d*,1,2%.0,2%.0,1,2%.0,2%.0,1%.0,1%.0,1%.0,1%.0,1%.0,0%.0$
~ ^m%-b,kernelbench%-level1/19_ReLU,2,0,0,0,0,1,1,0,1,0%.0,1,0%.0,,,
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --by model,problem --csv | wc -l
~ ^ *8$
# --json: one document on standard output
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --by model --json | kreach -e 'local d = require("kreach.json").decode(io.read("a")); local g = d.groups[2]; print(d.against, #d.groups, g.key.model, g.correct, g.verified.count, g.fast_p[6].value, g.kernelbench.kb_pass_not_correct.problems[1].problem, d.left_out.repeats)'
= baseline	3	m-a	4	2	0.33333333333333	kernelbench-level1/19_ReLU	1
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --json | wc -l
~ ^ *1$
# usage errors (status 2): an unknown --by key, a repeated one, an unknown --against, two formats
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --by model,colour
? 2
= kreach results: --by: unknown key 'colour' (keys: model, category, problem, dtype, suite, run)
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --by run,run
? 2
~ key 'run' is named twice
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --against triton
? 2
= kreach results: --against: unknown reference 'triton' (references: baseline, pytorch, compiled)
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/s.db --json --csv
? 2
# a database that does not open is status 3
$ kreach results summary --db ${TMPDIR:-/tmp}/kreach-summary-t.$PPID/missing.db
? 3
~ ^kreach results: .*/missing%.db: no such results database$
$ rm -rf ${TMPDIR:-/tmp}/kreach-summary-t.$PPID
