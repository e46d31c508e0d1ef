-- Adversarial: asks for relocatable device code (device-side launches).
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  options = { "-rdc=true" },
  forward = function(k, x, y) k.noop{ grid = 1, block = 1 }(y) end,
}
