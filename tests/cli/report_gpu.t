# gpu: kreach eval --report FILE writes the report of the database after the run and prints its
# path (./build.sh run does the same with report.html beside results.db); under --json the path
# goes to standard error. Files go to a directory named after this transcript's process ($PPID).
$ D=${TMPDIR:-/tmp}/kreach-report-gpu-t.$PPID; rm -rf $D; mkdir -p $D && kreach eval 19 tests/candidates/019_relu.lua --size batch_size=64 --size dim=4099 --budget 0.3 --db $D/r.db --report $D/report.html
~ ^019 19_ReLU +019_relu%.lua +correct
~ ^report: .*/kreach%-report%-gpu%-t%.%d+/report%.html$
$ grep -o 'data-figure="verdicts" data-state="drawn"' ${TMPDIR:-/tmp}/kreach-report-gpu-t.$PPID/report.html
= data-figure="verdicts" data-state="drawn"
$ kreach eval 19 tests/candidates/019_relu.lua --size batch_size=64 --size dim=4099 --budget 0.3 --db ${TMPDIR:-/tmp}/kreach-report-gpu-t.$PPID/r.db --report ${TMPDIR:-/tmp}/kreach-report-gpu-t.$PPID/r.md --json 2>/dev/null | kreach -e 'local v = require("cjson").decode(io.read("a")); io.write("evaluations ", #v.evaluations, "\n")'
= evaluations 1
$ ls ${TMPDIR:-/tmp}/kreach-report-gpu-t.$PPID
= r.md
= r-verdicts.svg
$ rm -rf ${TMPDIR:-/tmp}/kreach-report-gpu-t.$PPID
