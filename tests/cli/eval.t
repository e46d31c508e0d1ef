# gpu: kreach calibrate, eval and bench on small sizes. The database lives in a directory named
# after this transcript's process ($PPID), removed at the end.
$ D=${TMPDIR:-/tmp}/kreach-eval-t.$PPID; rm -rf $D; mkdir -p $D && kreach calibrate --db $D/r.db --gemm-n 2048 --repeats 3
~ ^NVIDIA H200
~ ^  copy bandwidth +%d+%.%d+ TB/s
~ ^  bf16  GEMM +%d+%.%d TFLOP/s
~ ^stored in
$ kreach eval 19 tests/candidates/019_relu.lua tests/candidates/adv_zeros.lua tests/candidates/adv_warmup.lua --size batch_size=64 --size dim=4099 --budget 0.3 --db ${TMPDIR:-/tmp}/kreach-eval-t.$PPID/r.db
~ ^019 19_ReLU +019_relu%.lua +correct +%S+ +[%d.]+ +[%d.]+ +[%d.]+x %[[%d.]+, [%d.]+%]
~ ^019 19_ReLU +adv_zeros%.lua +incorrect %(wrong_values%)
~ ^019 19_ReLU +adv_warmup%.lua +incorrect %(wrong_values%)
~ ^3 evaluated, 1 correct %(33%.3%%%)
~ ^against kreach's baseline: wins %d+ .* fast_0 33%.3%%, fast_0%.5
$ kreach eval 19 tests/candidates/019_relu.lua --size batch_size=64 --size dim=4099 --budget 0.3 --db ${TMPDIR:-/tmp}/kreach-eval-t.$PPID/r.db
~ ^019 19_ReLU +019_relu%.lua +correct .* stored$
$ kreach eval 19 tests/candidates/019_relu.lua --size batch_size=64 --size dim=4099 --budget 0.3 --db ${TMPDIR:-/tmp}/kreach-eval-t.$PPID/r.db --json
~ "reused":true
~ "summary":{
$ kreach eval 19 tests/candidates/019_relu.lua --size batch_size=64 --size dim=4099 --budget 0.3 --db ${TMPDIR:-/tmp}/kreach-eval-t.$PPID/r.db --resume
? 2
~ nothing to resume
$ kreach bench 19 --size batch_size=64 --size dim=4099 --budget 0.3 --db ${TMPDIR:-/tmp}/kreach-eval-t.$PPID/r.db
~ ^19 +19_ReLU +[%d.]+ +%[[%d.]+, [%d.]+%]
~ ^1 problem at f32 in
$ kreach results export --db ${TMPDIR:-/tmp}/kreach-eval-t.$PPID/r.db --format kernelbench
~ "correctness":true
$ kreach eval 19 tests/candidates/019_relu.lua --mode warm --db ${TMPDIR:-/tmp}/kreach-eval-t.$PPID/r.db
? 2
$ D=${TMPDIR:-/tmp}/kreach-eval-t.$PPID; echo "not a database" > $D/bad.db; kreach eval 19 tests/candidates/019_relu.lua --db $D/bad.db; s=$?; cat $D/bad.db; exit $s
? 3
~ not a kreach results database
= not a database
$ rm -rf ${TMPDIR:-/tmp}/kreach-eval-t.$PPID
