# Problem and suite files with mistakes in them, and problem inputs kreach cannot represent:
# each is a clean error naming the file (status 3) or the value (status 2), never a silent
# exit, a hang, a traceback or a file written outside the export's directory. Files go to
# this transcript's own TMPDIR. Needs no GPU.
$ D=$TMPDIR/p; mkdir -p $D/root/c/suites $D/root/c/p && echo 'os.exit(0)' > $D/exit.lua && echo 'os.exit(0)' > $D/root/c/suites/bad.lua && cp problems/kernelbench/level1/019_ReLU.lua $D/root/c/p/019_relu.lua && echo 'return { name = "c", dir = "c/p", ids = { 19 } }' > $D/root/c/suites/c.lua && echo ok
= ok

# a problem or suite file that calls os.exit: a load error at its line, not a silent exit
$ kreach lint $TMPDIR/p/exit.lua examples/026_gelu_float4.lua
? 3
~ ^kreach lint: .*/exit%.lua:1: a problem file may not call os%.exit$
$ kreach show $TMPDIR/p/exit.lua
? 3
~ ^kreach show: .*/exit%.lua:1: a problem file may not call os%.exit$
$ KREACH_PROBLEMS=$TMPDIR/p/root kreach show bad/1
? 3
~ ^kreach show: .*/suites/bad%.lua:1: a suite file may not call os%.exit$
# a suite that does not load does not hide the other suites' problems
$ KREACH_PROBLEMS=$TMPDIR/p/root kreach show 19 --json
~ "name":"19_ReLU"

# KREACH_PROBLEMS naming something that is not a directory
$ KREACH_PROBLEMS=$TMPDIR/p/nonexistent kreach show 19
? 2
~ ^kreach show: KREACH_PROBLEMS: .*/nonexistent is not a directory %(no such file or directory%)$
$ KREACH_PROBLEMS=$TMPDIR/p/exit.lua kreach list
? 2
~ ^kreach list: KREACH_PROBLEMS: .*/exit%.lua is not a directory %(it is a file%)$
