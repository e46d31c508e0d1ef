-- Adversarial (problem 19, ReLU): correct values except every 1000th element (index 0, 1000,
-- ...), which gets a quiet NaN (0x7fc00000, not the harness's poison pattern, so the element
-- counts as written). Expected: incorrect / non_finite.
return {
  name = "adv_nan",
  source = [[
extern "C" __global__ void relu_nan(const float *x, float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = (i % 1000 == 0) ? __int_as_float(0x7fc00000) : (x[i] > 0.f ? x[i] : 0.f);
}
]],
  forward = function(k, x, y)
    k.relu_nan{ grid = 1024, block = 256 }(x, y, x:numel())
  end,
}
