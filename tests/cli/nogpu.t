# nogpu: what a machine without a GPU does. Skipped where there is one.
$ kreach info
? 77
~ ^versions: driver none, runtime %d+%.%d+, NVRTC %d+%.%d+, cuBLAS
~ ^kreach: no CUDA device: .+
$ kreach info --json
? 77
~ "device":null
~ "error":"no CUDA device: 
$ kreach -e 'require("kreach").empty({4})'
? 77
~ ^kreach: no CUDA device: 
$ kreach -e 'print(require("kreach").has_device())'
~ ^false	.+
$ KREACH_DEVICE=abc kreach -e 'print(require("kreach").has_device())'
= false	KREACH_DEVICE='abc' is not a device number
$ kreach -e 'local k = require("kreach"); print(k.build{source = "extern \"C\" __global__ void f() {}"})'
? 77
~ give an explicit arch such as sm_90
$ kreach oracle 19
? 77
~ ^kreach: no CUDA device: 
$ kreach oracle kernelbench-l1-conv --dtype bf16
? 77
~ ^kreach: no CUDA device: 
$ kreach check 19 tests/candidates/019_relu.lua --size batch_size=4 --size dim=100
? 77
~ ^kreach: no CUDA device: 
$ kreach scan-trivial 19
? 77
~ ^kreach: no CUDA device: 
