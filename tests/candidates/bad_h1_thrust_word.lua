-- Adversarial (issue 33, H1): steers one of Thrust's computed #include names. Thrust's
-- headers `#include __THRUST_HOST_SYSTEM_TAG_HEADER`, which is
-- <thrust/system/cpp/detail/execution_policy.h> built from plain words; defining one of them
-- (here `cpp`, with a '>' that ends the name early) points that #include at a file of the
-- candidate's choice: NVRTC 13.0 read /etc/passwd and printed it in the compile log (sealed,
-- it only failed to open it). Refused by the source check: the words Thrust builds #include
-- names from may not be defined (nor given as -D options).
return {
  source = [[
#define cpp ../../../../../../../../../../../etc/passwd>
#include <thrust/tabulate.h>
extern "C" __global__ void noop(float *y) {}]],
  options = { "-I/usr/local/cuda/include/cccl" },
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
