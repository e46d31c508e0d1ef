-- Adversarial: includes a file of the host outside the CUDA toolkit.
return {
  source = [[
#include "/etc/passwd"
extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
