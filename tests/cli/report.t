# kreach report (docs/report.md) on the database tests/lua/summary_store.lua builds: the page it
# writes and prints, the Markdown form with its SVGs, and the usage errors (tests/lua/report_spec.lua
# opens a report in Chromium and checks what it draws). Needs no GPU. Files go to a directory named
# after this transcript's process ($PPID), removed at the end.
$ D=${TMPDIR:-/tmp}/kreach-report-t.$PPID; rm -rf $D; mkdir -p $D && kreach tests/lua/summary_store.lua $D/s.db
~ ^built	.*/s%.db$
$ kreach report --db ${TMPDIR:-/tmp}/kreach-report-t.$PPID/s.db -o ${TMPDIR:-/tmp}/kreach-report-t.$PPID/r.html
~ ^/.*/kreach%-report%-t%.%d+/r%.html$
# its progress, on standard error: plain lines off a terminal (kreach.progress), the inputs and each figure
~ ^kreach report: 8 of 8 done %(100%%%) in
! \r
$ grep -c 'data-state="drawn"' ${TMPDIR:-/tmp}/kreach-report-t.$PPID/r.html; grep -o 'Not drawn: No profile in the store' ${TMPDIR:-/tmp}/kreach-report-t.$PPID/r.html
= 4
= Not drawn: No profile in the store
$ cd ${TMPDIR:-/tmp}/kreach-report-t.$PPID && kreach report --db s.db -o r.md && ls
= r.md
= r-verdicts.svg
= r-heatmap.svg
~ ^r%-speedup_pytorch%.svg$
! ^r%-roofline%.svg$
# the output is checked before anything is read: the database itself, a folder
$ kreach report --db ${TMPDIR:-/tmp}/kreach-report-t.$PPID/s.db -o ${TMPDIR:-/tmp}/kreach-report-t.$PPID/s.db
? 2
~ cannot write .*s%.db
$ kreach report --db ${TMPDIR:-/tmp}/kreach-report-t.$PPID/s.db -o ${TMPDIR:-/tmp}/kreach-report-t.$PPID
? 2
~ is a directory
$ kreach report --db ${TMPDIR:-/tmp}/kreach-report-t.$PPID/s.db -o ${TMPDIR:-/tmp}/kreach-report-t.$PPID/x.html --format pdf
? 2
# kreach eval --report checks its file before any GPU time is spent (here: the database itself)
$ kreach eval 19 tests/candidates/019_relu.lua --db ${TMPDIR:-/tmp}/kreach-report-t.$PPID/s.db --report ${TMPDIR:-/tmp}/kreach-report-t.$PPID/s.db
? 2
~ cannot write .*s%.db
$ rm -rf ${TMPDIR:-/tmp}/kreach-report-t.$PPID
