# A hint names the suite it is about, not a literal <suite> (issue 35).
$ D=${TMPDIR:-/tmp}/kreach-names-hints.$PPID; rm -rf $D; mkdir -p $D/c/suites $D/c/p && cp problems/kernelbench/level1/019_ReLU.lua $D/c/p/ && echo 'return { name = "mine", dir = "c/p", ids = { 19 }, bare_ids = "no" }' > $D/c/suites/mine.lua && echo made
= made
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-names-hints.$PPID kreach show mine/19
? 3
~ mine%.lua: bare_ids is a boolean %(false: its problems are named mine/<id>, as mine/1, or by name%), not string$
! <suite>
$ rm -rf ${TMPDIR:-/tmp}/kreach-names-hints.$PPID
