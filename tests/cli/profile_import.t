# kreach profile import and report with a trace file that cannot be loaded: missing, unreadable
# (a directory), not a trace, malformed. Each exits 3 (docs/cli.md: an input file that cannot be
# loaded) with a message that names the file and no position in kreach's own code. A trace that
# reads but whose program did not exit normally (no footer) keeps status 1.
$ kreach profile import nosuch-trace.json --no-store
? 3
= kreach profile: nosuch-trace.json: No such file or directory
! %.lua:%d+:
$ kreach profile report nosuch-trace.json
? 3
= kreach profile: nosuch-trace.json: No such file or directory
! %.lua:%d+:
$ kreach profile report nosuch-trace.json --db nosuch.db
? 3
= kreach profile: nosuch-trace.json: No such file or directory
$ kreach profile import /dev/zero --format kineto --no-store
? 3
= kreach profile: /dev/zero: not a regular file (a char device): a trace is read from a file
$ d=$(mktemp -d) && mkfifo $d/pipe && kreach profile import $d/pipe --no-store
? 3
~ ^kreach profile: /.*/pipe: not a regular file %(a named pipe%): a trace is read from a file$
$ d=$(mktemp -d) && kreach profile import $d --no-store
? 3
~ ^kreach profile: /.*: not a regular file %(a directory%): a trace is read from a file$
! %.lua:%d+:
$ d=$(mktemp -d) && kreach profile report $d --format kineto
? 3
~ ^kreach profile: /.*: not a regular file %(a directory%): a trace is read from a file$
! %.lua:%d+:
$ d=$(mktemp -d) && echo hello > $d/notes.txt && kreach profile import $d/notes.txt --no-store
? 3
~ ^kreach profile: /.*/notes%.txt: not a trace kreach knows
! %.lua:%d+:
$ d=$(mktemp -d) && : > $d/empty.json && kreach profile import $d/empty.json --no-store
? 3
~ ^kreach profile: /.*/empty%.json: not a trace kreach knows
$ d=$(mktemp -d) && echo '{"traceEvents": [1' > $d/cut.json && kreach profile import $d/cut.json --no-store
? 3
~ ^kreach profile: /.*/cut%.json:%d+: not JSON
! %.lua:%d+:
$ d=$(mktemp -d) && echo '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1}]}' > $d/nodur.json && kreach profile import $d/nodur.json --no-store
? 3
~ ^kreach profile: /.*/nodur%.json: traceEvents%[1%] %(kernel 'k'%): no numeric 'dur'$
$ d=$(mktemp -d) && printf '{"type":"header","version":2,"pid":1,"cupti_version":1,"start_ns":0}\n' > $d/v2.jsonl && kreach profile import $d/v2.jsonl --no-store
? 3
~ ^kreach profile: /.*/v2%.jsonl:1: trace format version 2, this kreach reads version 1$
$ d=$(mktemp -d) && echo hello > $d/notes.txt && kreach profile import $d/notes.txt --no-store --format nsys
? 3
~ ^kreach profile: /.*/notes%.txt: 
! %.lua:%d+:
$ d=$(mktemp -d) && kreach -e 'local db = assert(require("kreach.core.sqlite").open(arg[1], { create = true })); assert(db:exec("CREATE TABLE t(x)")); db:close()' $d/other.db && kreach profile import $d/other.db --no-store
? 3
~ ^kreach profile: /.*/other%.db: not an Nsight Systems export
! %.lua:%d+:
$ d=$(mktemp -d) && printf '\037\213\010\000' > $d/t.json.gz && kreach profile report $d/t.json.gz
? 3
~ ^kreach profile: /.*/t%.json%.gz is gzip%-compressed
# a trace that reads but has no footer: its program did not exit normally (status 1, as before)
$ d=$(mktemp -d) && printf '{"type":"header","version":1,"pid":1,"cupti_version":1,"start_ns":0}\n{"type":"kernel","name":"k","start":1,"end":5}\n' > $d/cut.jsonl && kreach profile import $d/cut.jsonl --no-store
? 1
~ ^kreach profile: /.*/cut%.jsonl:2: no footer: the program did not exit normally
! %.lua:%d+:
# a profile id that is not in the database names nothing: a usage error, status 2
$ d=$(mktemp -d) && kreach profile import tests/data/profile/kineto_small.json --db $d/r.db >/dev/null && kreach profile report 7 --db $d/r.db
? 2
~ ^kreach profile: no profile 7 in /.*/r%.db$
# a kernel's name comes from the trace: the text report writes its terminal controls (ESC) and
# bidirectional overrides (U+202E) visibly and a line break in it as " | ", in the tables and in
# error messages; --json keeps the name exact (JSON escapes its controls), and so does --csv (data)
$ d=$(mktemp -d) && printf '%s\n' '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "evil\u001b[2K\u001b[1Aok\u202e\nfake", "ts": 1, "dur": 5}]}' > $d/esc.json && kreach profile import $d/esc.json --no-store > $d/out; s=$?; echo "raw bytes $(LC_ALL=C tr -dc '\033\342' < $d/out | wc -c)"; echo "broken lines $(grep -c '^fake' $d/out)"; echo "visible $(grep -c -F 'evil\x1b[2K\x1b[1Aok\u202e | fake' $d/out)"; echo "json $(kreach profile import $d/esc.json --no-store --json | grep -c -F 'evil\u001b[2K\u001b[1Aok')"; rm -rf $d; exit $s
= raw bytes 0
= broken lines 0
= visible 2
= json 1
$ d=$(mktemp -d) && printf '%s\n' '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k\u001b[2K", "ts": 1}]}' > $d/nodur.json && kreach profile import $d/nodur.json --no-store 2>&1 | LC_ALL=C tr -dc '\033' | wc -c; rm -rf $d
= 0
