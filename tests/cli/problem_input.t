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

# sizes whose bytes overflow 64 bits: a usage error naming the tensor and the sizes, not
# 0 bytes (show) or a verdict on the candidate (lint)
$ kreach show 1 --size N=4294967296
? 2
= kreach show: problem '1_Square_matrix_multiplication_': input 'A': the shape {4294967296, 4294967296} (N = 4294967296) is too large: its size in bytes overflows a 64-bit integer
$ kreach lint 19 examples/026_gelu_float4.lua --size dim=4611686018427387904
? 2
~ ^kreach lint: problem '19_ReLU': input 'x': the shape {%d+, 4611686018427387904} %(batch_size = %d+, dim = 4611686018427387904%) is too large
! gelu_float4

# numbers that are not finite: refused, naming the problem file
$ D=$TMPDIR/p; R=problems/kernelbench/level1/019_ReLU.lua; sed 's/flops = function(s) return s.batch_size \* s.dim end,/& bytes = function() return math.huge end,/' $R > $D/huge.lua && sed 's/scalar("negative_slope", 0.01)/scalar("negative_slope", 0\/0)/' problems/kernelbench/level1/020_LeakyReLU.lua > $D/nan.lua && sed 's/input("x", { "batch_size", "dim" }, { domain = "real" })/input("x", { "batch_size", "dim" }, { dist = "uniform(0, 1e999)" })/' $R > $D/dist.lua && grep -c 'math.huge' $D/huge.lua && grep -c '0/0' $D/nan.lua && grep -c 1e999 $D/dist.lua
= 1
$ kreach show $TMPDIR/p/huge.lua
? 3
~ ^kreach show: .*/huge%.lua: problem '19_ReLU': field 'bytes' returned inf, not a finite non%-negative number$
! stack traceback
$ kreach export $TMPDIR/p/nan.lua -o $TMPDIR/p/out
? 3
~ ^kreach export: .*/nan%.lua: problem '20_LeakyReLU': field 'args': scalar 'negative_slope': a scalar needs a finite value, got %-?nan$
$ kreach show $TMPDIR/p/dist.lua
? 3
~ ^kreach show: .*/dist%.lua: .*input 'x': dist: distribution 'uniform%(0, 1e999%)': '1e999' is not a finite number$

# a problem's name is a file name: export writes only into its directory
$ sed 's/name = "19_ReLU"/name = "..\/..\/escaped"/' problems/kernelbench/level1/019_ReLU.lua > $TMPDIR/p/evil.lua && mkdir -p $TMPDIR/p/x/y && kreach export $TMPDIR/p/evil.lua -o $TMPDIR/p/x/y/out
? 3
~ ^kreach export: .*/evil%.lua: problem '%.%./%.%./escaped': field 'name': '%.%./%.%./escaped' is not a name
$ ls $TMPDIR/p/x $TMPDIR/p/x/y/out
! escaped

# two problems of one suite with one name: the second export does not overwrite the first
$ D=$TMPDIR/p/root; sed 's/id = 19, name = "19_ReLU"/id = 20, name = "19_ReLU"/' $D/c/p/019_relu.lua > $D/c/p/020_relu.lua && echo 'return { name = "two", dir = "c/p", ids = { 19, 20 } }' > $D/c/suites/two.lua && echo ok
= ok
$ KREACH_PROBLEMS=$TMPDIR/p/root kreach export two -o $TMPDIR/p/two
? 3
~ ^kreach export: .*/020_relu%.lua: problem '19_ReLU' has the name of .*/019_relu%.lua, exported already %(two problems of one suite share a name%)$
