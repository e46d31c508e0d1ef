-- Adversarial (issue 33, H3): __has_include built by the toolkit's own pasting macro,
-- _CCCL_PP_CAT, so that no ## appears in the source: a probe of whether a host file exists
-- (the seal denies the file; unsealed, the answer is a compile error or not). Refused by the
-- source check: "__has_" is a piece of __has_include.
return {
  source = [[
#include <cuda/std/__cccl/preprocessor.h>
#if _CCCL_PP_CAT(__has_, include)("/etc/hostname")
#error "the host has /etc/hostname"
#endif
extern "C" __global__ void noop(float *y) {}]],
  options = { "-I/usr/local/cuda/include/cccl" },
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
