-- Adversarial: a malformed file.
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y)
    k.noop{ grid = 1, block = 1 }(y
  end,
}
