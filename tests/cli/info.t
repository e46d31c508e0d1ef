# gpu: kreach info on a machine with a GPU.
$ kreach info
~ ^device 0: .+ %(sm_%d+, compute capability %d+%.%d+%)$
~ ^  L2 %d+ MiB
$ kreach info --json
~ "sm_count":%d+
~ "l2_bytes":%d+
$ kreach --device 99 info
? 77
~ device 99 asked for, but the driver reports
$ kreach experiments/examples/add.lua
= true
