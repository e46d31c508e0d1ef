-- Adversarial (issue 33, H3): the toolkit's wrapper of __has_include, _CCCL_HAS_INCLUDE,
-- probes for a host file. Refused by the source check, which reads the wrapper as
-- __has_include (allowed only of a literal toolkit header).
return {
  source = [[
#include <cuda/std/__cccl/preprocessor.h>
#if _CCCL_HAS_INCLUDE("/etc/shadow")
#error "the host has /etc/shadow"
#endif
extern "C" __global__ void noop(float *y) {}]],
  options = { "-I/usr/local/cuda/include/cccl" },
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
