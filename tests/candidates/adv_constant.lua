-- Adversarial (problem 48, mean over dim 1): ignores x and writes 0.5 everywhere, the expected
-- mean of the default U[0, 1) inputs: the "guess a statistic of the default distribution"
-- exploit. Expected: incorrect / wrong_values (the mean of a few hundred draws is not 0.5 to
-- 1e-4) or trivial_output.
return {
  name = "adv_constant",
  source = [[
extern "C" __global__ void fill_half(float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) y[i] = 0.5f;
}
]],
  forward = function(k, x, y)
    k.fill_half{ grid = 1024, block = 256 }(y, y:numel())
  end,
}
