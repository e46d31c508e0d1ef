# The host device (KREACH_DEVICE=host, docs/scripting.md): kreach's operators run on the CPU
# (kreach oracle), but what runs candidates or times refuses at once, exit 77 as without a GPU,
# naming the host device, and stores nothing.
$ KREACH_DEVICE=host kreach oracle 23 --size batch_size=2 --size dim=8
~ ^23_Softmax at f32 %(seed 1%)
~ ^  y +relative L2 %d
$ KREACH_DEVICE=host kreach oracle 19 --size batch_size=100000 --size dim=10000000
? 2
~ ^kreach oracle: 19_ReLU at f32 needs about 2%.4e%+04 GB on the host device %(its tensors and their f64 copies%), and .* GB is free: the host device runs at small sizes
$ KREACH_DEVICE=host kreach check 19 tests/candidates/019_relu.lua --size batch_size=4 --size dim=100
? 77
= kreach: no CUDA device: kreach check needs a GPU; this is the host device (KREACH_DEVICE=host), kreach's CUDA emulation on the CPU: it computes kreach's own operators (kreach oracle, the values check) but runs no candidate and times nothing; unset KREACH_DEVICE (or give --device N) on a machine with a GPU
$ d=$(mktemp -d) && KREACH_DEVICE=host kreach eval 19 tests/candidates/019_relu.lua --db $d/r.db; rc=$?; ls $d; exit $rc
? 77
~ ^kreach: no CUDA device: kreach eval needs a GPU; this is the host device
! r%.db
$ d=$(mktemp -d) && KREACH_DEVICE=host kreach bench 19 --db $d/r.db; rc=$?; ls $d; exit $rc
? 77
~ ^kreach: no CUDA device: kreach bench needs a GPU; this is the host device
! r%.db
$ KREACH_DEVICE=host kreach scan-trivial 19
? 77
~ ^kreach: no CUDA device: kreach scan%-trivial needs a GPU; this is the host device
$ d=$(mktemp -d) && KREACH_DEVICE=host kreach calibrate --db $d/r.db
? 77
~ ^kreach: no CUDA device: kreach calibrate needs a GPU; this is the host device
$ kreach --device host lint 19 tests/candidates/019_relu.lua
~ 019_relu%.lua: ok
$ kreach --device host check 19 tests/candidates/019_relu.lua
? 77
~ ^kreach: no CUDA device: kreach check needs a GPU; this is the host device
$ KREACH_PYTHON=/usr/bin/python3 kreach --device host oracle dlrm-bench --torch --small
~ ^12_SparseIdPreprocessing at f32 %(seed 1, small sizes batch_size=2%) against PyTorch in float64
= 12 of 12 problems of dlrm-bench at f32 agree with PyTorch in float64 (the baseline within its dtype's thresholds, the oracle within relative L2 1e-09 and worst 1e-07)
$ kreach --device host oracle 23 --small --size dim=4
? 2
= kreach oracle: --small and --size: give one or the other
$ kreach --device host -e 'local p = require("kreach.host").build{ source = [[extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1; }]], instantiate = { "k" } }; local x = require("kreach").zeros({4}); p.k{ grid = 1, block = { 4 } }(x); print(table.concat(x:to_table(), " ")); p.k{ grid = {}, block = 4 }(x)'
? 1
= 1.0 1.0 1.0 1.0
~ launch 'grid' takes 1 to 3 sizes, got 0
