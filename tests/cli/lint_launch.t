# kreach lint checks each launch of a candidate's forward as a real launch would, through the
# same C code (launch:check, kr_launch_check), against the limits of the architecture it
# compiles for: block and grid dimensions, threads per block (the kernel's __launch_bounds__
# and registers, read from the cubin), unknown keys of the launch table, dynamic shared
# memory, and k:scratch requests as kreach.empty checks them. Each is invalid_candidate with
# the candidate's file and the line of forward that launched. Needs no GPU (--arch sm_90).
$ kreach lint 19 tests/candidates/bad_block.lua --arch sm_90
? 1
= tests/candidates/bad_block.lua: invalid_candidate
~ ^  tests/candidates/bad_block%.lua:10: bad_block%.cu: too many threads per block for 'relu': 99999, the most it can run on sm_90 is 1024 %(%d+ registers per thread%)$
$ kreach lint 19 tests/candidates/bad_launch_key.lua --arch sm_90
? 1
~ ^  tests/candidates/bad_launch_key%.lua:10: unknown option 'threads' for a launch %(known: grid, block, shared%)$
$ kreach lint 19 tests/candidates/bad_shared.lua --arch sm_90
? 1
~ ^  tests/candidates/bad_shared%.lua:12: bad_shared%.cu: 'relu' asks for 300000 bytes of dynamic shared memory; with its 0 static bytes sm_90 allows 232448$
$ kreach lint 19 tests/candidates/bad_bounds.lua --arch sm_90 --json
? 1
~ "verdict":"invalid_candidate"
~ bad_bounds%.lua:10: bad_bounds%.cu: too many threads per block for 'relu': 256, the most it can run on sm_90 is 128
$ kreach lint 19 tests/candidates/bad_scratch.lua --arch sm_90
? 1
~ ^  tests/candidates/bad_scratch%.lua:10: k:scratch: bad argument #1 to 'scratch' %(size 1 of the shape is not a non%-negative integer%)$
$ kreach lint 19 tests/candidates/bad_scratch_dtype.lua --arch sm_90
? 1
~ ^  tests/candidates/bad_scratch_dtype%.lua:9: k:scratch: bad argument #2 to 'scratch' %(unknown dtype 'f8'
$ kreach lint 19 tests/candidates/019_relu.lua --arch sm_90 --size batch_size=3 --size dim=1001
~ ^tests/candidates/019_relu%.lua: ok %(dry run: 2 launches of relu4, relu_tail; compiled for sm_90%)$
$ kreach lint 94 tests/candidates/094_mse_atomic.lua --arch sm_90
~ ^tests/candidates/094_mse_atomic%.lua: ok %(dry run: 2 launches of mse_partial, mse_final; compiled for sm_90%)$
# A candidate given directly is read only when it is a regular file of at most 4 MiB: a FIFO
# or a device is refused at once (the worker would otherwise block or read for ever), as a
# file that cannot be loaded (status 3), not as the candidate's verdict.
$ d=$(mktemp -d) && mkfifo "$d/fifo.lua" && kreach lint 19 "$d/fifo.lua" --arch sm_90; s=$?; rm -rf "$d"; exit $s
? 3
~ ^kreach lint: .*/fifo%.lua: cannot read the candidate: a FIFO, not a regular file$
$ kreach lint 19 /dev/zero --arch sm_90
? 3
= kreach lint: /dev/zero: cannot read the candidate: a character device, not a regular file
# --arch is checked where it is parsed: one kreach has no launch limits for is a usage error
# (status 2), not the candidate's runtime_error.
$ kreach lint 19 tests/candidates/019_relu.lua --arch banana
? 2
= kreach lint: kreach knows no launch limits for banana (it knows sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_103, sm_110, sm_120 and sm_121)
$ kreach lint 19 tests/candidates/019_relu.lua --arch sm_88
? 2
~ ^kreach lint: kreach knows no launch limits for sm_88 %(it knows
# A directory given as the candidate is refused as one (status 3, naming it).
$ kreach lint 19 tests/candidates
? 3
= kreach lint: tests/candidates: cannot read the candidate: a directory, not a regular file
! %.lua:%d+:
