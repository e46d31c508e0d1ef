# Mistaken and hostile invocations of every command that needs no GPU before it fails: each
# ends with its documented exit status (docs/cli.md, "Exit status": 1 a failure, 2 usage, 3 a
# file or database that cannot be loaded) and a message that names the file, never a position
# in kreach's own code (scripts/kreach/...lua:NN:) or a traceback. Files go to a directory
# named after this transcript's process ($PPID), removed at the end.
$ D=${TMPDIR:-/tmp}/kreach-errors-t.$PPID; rm -rf $D; mkdir -p $D/sub $D/root/mine/suites $D/root/mine/p && cd $D && : > empty.lua && printf 'error("boom")\n' > raise.lua && printf '\033Lua\124\000' > bin.lua && printf 'return kreach.problem{\n' > syntax.lua && printf 'error("problem boom")\n' > raiseprob.lua && printf 'garbage, not a database\n' > garbage.db && cd - >/dev/null && sed 's/ops.relu(x, y)/ops.relu(x)/' problems/kernelbench/level1/019_ReLU.lua > $D/badops.lua && cp problems/kernelbench/level1/019_ReLU.lua $D/root/mine/p/019_relu.lua && printf 'return { name = "mine", dir = "p", ids = { 19 } }\n' > $D/root/mine/suites/mine.lua && echo ok
= ok
$ D=${TMPDIR:-/tmp}/kreach-errors-t.$PPID; kreach -e 'local db = assert(require("kreach.results.store").open(arg[1])); db:begin_run{ config_hash = "h" }; db:close()' $D/r.db && cp $D/r.db $D/corrupt.db && head -c 65536 /dev/zero | tr '\0' 'Z' | dd of=$D/corrupt.db bs=4096 seek=1 conv=notrunc 2>/dev/null && echo built
= built

# lint: a candidate path that names no readable file is the user's mistake (status 3, naming
# it); a file that is read but is no candidate is the candidate's verdict (status 1)
$ kreach lint 19 ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/sub
? 3
~ ^kreach lint: .*/kreach%-errors%-t%.%d+/sub: cannot read the candidate: a directory, not a regular file$
! scripts/kreach
! stack traceback
$ kreach lint 19 ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/missing.lua
? 3
~ ^kreach lint: .*/missing%.lua: cannot read the candidate: No such file or directory$
$ kreach lint 19 ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/bin.lua
? 1
~ /bin%.lua: invalid_candidate$
~ ^  .*/bin%.lua: not a Lua source file: attempt to load a binary chunk
! scripts/kreach
$ kreach lint 19 ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/raise.lua
? 1
~ /raise%.lua: invalid_candidate$
~ ^  .*/raise%.lua:1: boom$
$ kreach lint 19 ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/empty.lua
? 1
~ ^  .*/empty%.lua: a candidate file returns a table, not nil$
# --arch is checked where it is parsed: a usage error, not the candidate's runtime_error
$ kreach lint 19 tests/candidates/019_relu.lua --arch banana
? 2
~ ^kreach lint: kreach knows no launch limits for banana %(it knows sm_
! runtime_error
# a problem that does not load is its own error, before the candidate is looked at
$ kreach lint ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/raiseprob.lua ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/sub
? 3
~ ^kreach lint: .*/raiseprob%.lua:1: problem boom$

# show: a path that names no problem file is status 3 naming it; a name that names nothing 2
$ kreach show ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/sub
? 3
~ ^kreach show: .*/sub: cannot read the problem: it is a directory, not a file$
$ kreach show ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/missing.lua
? 3
~ ^kreach show: .*/missing%.lua: cannot read the problem: no such file$
$ kreach show ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/bin.lua
? 3
~ ^kreach show: .*/bin%.lua: attempt to load a binary chunk
$ kreach show ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/syntax.lua
? 3
~ ^kreach show: .*/syntax%.lua:2: unexpected symbol near <eof>$
$ kreach show ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/empty.lua
? 3
~ ^kreach show: .*/empty%.lua: the file must return kreach%.problem{%.%.%.}, it returned nil$
$ kreach show ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/raiseprob.lua
? 3
~ ^kreach show: .*/raiseprob%.lua:1: problem boom$
# an operator given the wrong arguments in a reference: the problem file's line, not kreach's
$ kreach show ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/badops.lua
? 3
~ ^kreach show: problem '19_ReLU': reference: .*/badops%.lua:13: 
! scripts/kreach
! stack traceback
$ kreach show nosuch
? 2
= kreach show: no problem 'nosuch' (a path, an id or a name from a suite)
$ kreach show 19 --size dimm=3
? 2
= kreach show: problem '19_ReLU': no size named 'dimm' (did you mean 'dim'?)
$ kreach show 19 --dtype f64
? 2
~ ^kreach show: argument for option '%-%-dtype' must be one of 'f32', 'bf16', 'f16'$

# list: an unknown suite is a usage error; a suite whose directory is missing does not load
# (status 3) and does not hide the other suites' problems
$ kreach list nosuch
? 2
~ ^kreach list: no suite 'nosuch' %(suites: 
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-errors-t.$PPID/root kreach list mine
? 3
~ ^kreach list: suite mine does not load: .*/mine%.lua: dir 'p' is not a directory
! scripts/kreach
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-errors-t.$PPID/root kreach show 19 --json
~ "name":"19_ReLU"
$ KREACH_PROBLEMS=${TMPDIR:-/tmp}/kreach-errors-t.$PPID/root kreach show nosuch
? 3
~ ^kreach show: no problem 'nosuch' in the suites that load %(and one does not: .*/mine%.lua: dir 'p' is not a directory

# export: -o is required, and names a directory
$ kreach export 19
? 2
= kreach export: -o DIR is required
$ kreach export 19 -o ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/empty.lua
? 2
~ ^kreach export: %-o .*/empty%.lua is a file, not a directory
$ kreach export 19 -o ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/nodir/out
? 1
~ ^kreach export: cannot create the directory .*/nodir/out: No such file or directory$
$ kreach export ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/raiseprob.lua -o ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/out
? 3
~ ^kreach export: .*/raiseprob%.lua:1: problem boom$

# the problem comes before the GPU: these fail the same with and without one
$ kreach oracle ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/missing.lua
? 3
~ ^kreach oracle: .*/missing%.lua: cannot read the problem: no such file$
$ kreach eval nosuch tests/candidates/019_relu.lua
? 2
= kreach eval: no problem 'nosuch' (a path, an id or a name from a suite)
$ kreach eval ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/raiseprob.lua tests/candidates/019_relu.lua
? 3
~ ^kreach eval: .*/raiseprob%.lua:1: problem boom$
$ kreach bench ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/sub
? 3
~ ^kreach bench: .*/sub: cannot read the problem: it is a directory, not a file$
$ kreach check nosuch tests/candidates/019_relu.lua
? 2
= kreach check: no problem 'nosuch' (a path, an id or a name from a suite)

# results: a database that cannot be used is status 3 and names it; a run that names nothing,
# or a subcommand that does not exist, is a usage error
$ kreach results list --db ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/garbage.db
? 3
~ ^kreach results: .*/garbage%.db: not a kreach results database %(file is not a database%)$
$ kreach results runs --db ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/corrupt.db
? 3
~ ^kreach results: .*/corrupt%.db: the results database is corrupt: 
! scripts/kreach
$ kreach results list --db ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/sub
? 3
~ ^kreach results: .*/sub: not a kreach results database %(it is a directory%)$
$ kreach results export --format csv --db ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/nodir/r.db
? 3
~ ^kreach results: .*/nodir/r%.db: no such results database$
$ kreach results list --db ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/r.db --run 999
? 2
~ ^kreach results: %-%-run 999: there is no run 999 in .*/r%.db %(kreach results runs lists them%)$
$ kreach results list --db ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/r.db --run abc
? 2
~ ^kreach results: a run id is a positive integer$
$ kreach results show 999
? 2
~ ^kreach results: unknown command 'show'
$ kreach results export --format csv --db ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/r.db -o ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/sub
? 2
~ ^kreach results: .*/sub is a directory$
# a write that fails (a full device) is a failure naming the file, not a traceback
$ kreach results export --format csv --db ${TMPDIR:-/tmp}/kreach-errors-t.$PPID/r.db -o /dev/full
? 1
= kreach results: /dev/full: No space left on device
! stack traceback

# the binary: an unknown command, and an option value checked where it is parsed
$ kreach nosuch
? 2
= kreach: unknown command 'nosuch' (try 'kreach help')
$ kreach lint 19 tests/candidates/019_relu.lua --timeout 0
? 2
~ ^kreach lint: '0' is not a positive number of seconds$
$ kreach lint 19 tests/candidates/019_relu.lua --worker-memory banana
? 2
~ ^kreach lint: 'banana' is not a size
$ rm -rf ${TMPDIR:-/tmp}/kreach-errors-t.$PPID
