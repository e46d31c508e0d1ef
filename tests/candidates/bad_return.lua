-- Adversarial: returns an output instead of writing the one it is given.
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y) return x end,
}
