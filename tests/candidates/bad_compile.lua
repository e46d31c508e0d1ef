-- Adversarial: CUDA that does not compile.
return {
  source = [[
extern "C" __global__ void broken(float *y) {
  y[0] = undefined_name;
}
]],
  forward = function(k, x, y) k.broken{ grid = 1, block = 1 }(y) end,
}
