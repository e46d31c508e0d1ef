-- Adversarial: includes the process's environment, which would land in the compiler's log
-- (and so in the verdict and the results database). Refused by the source check; the seal
-- (Landlock, and a worker environment built from an allow-list) stops it underneath.
return {
  source = [[
#include "/proc/self/environ"
extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
