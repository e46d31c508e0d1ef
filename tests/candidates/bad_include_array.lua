-- Adversarial: compiles a host file's bytes into the cubin, inside an array initialiser,
-- where a kernel could copy them to an output.
return {
  source = [[
__device__ const char host_file[] = {
#include "/etc/hostname"
};
extern "C" __global__ void noop(float *y) { y[0] = host_file[0]; }]],
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
