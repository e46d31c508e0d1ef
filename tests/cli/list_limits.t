# kreach list loads every suite and problem file in a loader process with a time limit per
# file (--timeout): problem and suite files are trusted code, but one that loops for ever (in
# Lua, or inside a C call the loader cannot interrupt) or raises an error is reported with why
# and the listing goes on; the status is 3 when one did not load. A temporary problems root
# ($KREACH_PROBLEMS) holds a good problem, a looping one, one stuck in a pattern match, a
# failing one, a suite of the four and a suite file that loops. Needs no GPU.
$ D=${TMPDIR:-/tmp}/kreach-list-t.$PPID; rm -rf $D; mkdir -p $D/t/suites $D/t/p && sed 's/id = 19, name = "19_ReLU", suite = "kernelbench-l1"/id = 1, name = "1_Good", suite = "t-suite"/' problems/kernelbench/level1/019_ReLU.lua > $D/t/p/001_good.lua && echo 'while true do end' > $D/t/p/002_loop.lua && echo 'string.find(string.rep("a", 100000), ".-.-.-.-.-.-.-.-.-.-b")' > $D/t/p/003_pattern.lua && echo 'error("broken on purpose")' > $D/t/p/004_fail.lua && echo 'return { name = "t-suite", description = "a test suite", dir = "t/p", ids = { 1, 2, 3, 4 } }' > $D/t/suites/t-suite.lua && echo 'while true do end' > $D/t/suites/t-hang.lua && grep -c 't-suite' $D/t/p/001_good.lua
= 1
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-list-t.$PPID kreach list --timeout 1
? 3
~ ^kernelbench%-l1 +100 problems
~ ^t%-hang +does not load: ran past its time limit of 1 s
~ ^t%-suite +4 problems  a test suite$
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-list-t.$PPID kreach list t-suite --timeout 1
? 3
= t-suite: a test suite
~ ^   1  1_Good +activation
~ ^   2  002_loop%.lua +does not load: ran past its time limit of 1 s
~ ^   3  003_pattern%.lua +does not load: ran past its time limit of 1 s
~ ^   4  004_fail%.lua +does not load: .*004_fail%.lua:1: broken on purpose$
= kreach list: 3 problems of t-suite did not load
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-list-t.$PPID kreach list t-suite --timeout 1 --json
? 3
~ "problems":%[{[^]]*"name":"1_Good"
~ "errors":%[{"id":2,"path":"[^"]*/002_loop%.lua","why":"ran past its time limit of 1 s
~ "id":4,"path":"[^"]*/004_fail%.lua","why":"[^"]*004_fail%.lua:1: broken on purpose"
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-list-t.$PPID kreach list t-hang --timeout 1
? 3
~ ^kreach list: suite t%-hang does not load: ran past its time limit of 1 s
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-list-t.$PPID kreach list --timeout 0
? 2
~ kreach list: '0' is not a positive number of seconds
$ rm -rf ${TMPDIR:-/tmp}/kreach-list-t.$PPID
