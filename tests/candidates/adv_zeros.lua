-- Adversarial (problem 19, ReLU): writes 0 to every output element. Every element is written,
-- so the harness must catch it on the values. Expected: incorrect / wrong_values.
return {
  name = "adv_zeros",
  source = [[
extern "C" __global__ void zeros(float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) y[i] = 0.f;
}
]],
  forward = function(k, x, y)
    k.zeros{ grid = 1024, block = 256 }(y, y:numel())
  end,
}
