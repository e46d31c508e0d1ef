# nogpu: the no-GPU message says what runs without one (issue 35). Only kreach oracle runs on
# the host device at small sizes (kreach --device host oracle ... --small): check, eval, bench,
# scan-trivial, calibrate and profile run or time candidates, which the host device refuses.
$ kreach oracle 19
? 77
~ ^kreach: no CUDA device: .*; without a GPU, the host device %(kreach's CUDA emulation on the CPU%) runs this at small sizes: kreach %-%-device host oracle 19 %-%-small$
# what it suggests works
$ kreach --device host oracle 19 --small
~ ^19_ReLU at f32 %(seed 1, small sizes batch_size=2 dim=8%)
# the user's own sizes are kept, not joined by --small (which --size refuses)
$ kreach oracle kernelbench-l1-repr --dtype bf16 --size dim=8
? 77
~ runs this at small sizes: kreach %-%-device host oracle kernelbench%-l1%-repr %-%-dtype bf16 %-%-size dim=8$
# the commands that need a GPU do not suggest it
$ kreach check 19 tests/candidates/019_relu.lua
? 77
~ ^kreach: no CUDA device:
! device host
$ kreach scan-trivial 19
? 77
! device host
$ kreach calibrate
? 77
! device host
# nor does a script
$ kreach -e 'require("kreach").require_device()'
? 77
! device host
