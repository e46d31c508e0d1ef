-- Adversarial: tries to reach the harness through tensor handles and the kit.
return {
  source = [[extern "C" __global__ void noop(float *y) {}]],
  forward = function(k, x, y)
    y:fill(0) -- handles have metadata only
  end,
}
