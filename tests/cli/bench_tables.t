# experiments/bench/tables.lua: the benchmarks' stored outputs as Markdown tables; a data file that
# is not a benchmark's output is named with its line, and the check fails on a changed table
$ D=${TMPDIR:-/tmp}/kreach-bench-tables-t.$PPID; rm -rf $D; mkdir -p $D/data && printf '# kreach x.lua, on a test machine\nresult a_s 1.5 s the first\nresult b_s 2 s the second | piped\n' > $D/data/m-x.txt && kreach experiments/bench/tables.lua --data $D/data --out $D/t && cat $D/t/m-x.md
~ ^wrote 1 tables to .*/t$
= kreach x.lua, on a test machine
= | a_s | 1.5 | s | the first |
= | b_s | 2 | s | the second \| piped |
= Source: `experiments/bench/data/m-x.txt`.
$ D=${TMPDIR:-/tmp}/kreach-bench-tables-t.$PPID; kreach experiments/bench/tables.lua --data $D/data --check $D/t
~ ^1 tables as committed in
$ D=${TMPDIR:-/tmp}/kreach-bench-tables-t.$PPID; sed -i 's/1.5/1.6/' $D/data/m-x.txt && kreach experiments/bench/tables.lua --data $D/data --check $D/t
? 1
= m-x.md: differs from what the data make now (or is missing)
$ D=${TMPDIR:-/tmp}/kreach-bench-tables-t.$PPID; printf 'result a_s 1.5 s no header\n' > $D/data/n-y.txt && kreach experiments/bench/tables.lua --data $D/data --out $D/t2
? 3
~ /data/n%-y%.txt:1: no "# " line naming the command and the machine$
$ D=${TMPDIR:-/tmp}/kreach-bench-tables-t.$PPID; printf '# a head\nnoise\nresult a_s fast s what\n' > $D/data/n-y.txt && kreach experiments/bench/tables.lua --data $D/data --out $D/t2
? 3
~ /data/n%-y%.txt:3: a result line is `result NAME VALUE UNIT WHAT`: result a_s fast s what$
$ rm -rf ${TMPDIR:-/tmp}/kreach-bench-tables-t.$PPID
