-- Adversarial (problem 19, ReLU): correct ReLU values, but only into the first 0.3% of the
-- output; the rest keeps the harness's poison. Expected: incorrect / incomplete_write.
return {
  name = "adv_partial",
  source = [[
extern "C" __global__ void relu_prefix(const float *x, float *y, long long m) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m; i += stride)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
}
]],
  forward = function(k, x, y)
    local m = math.max(1, x:numel() * 3 // 1000)  -- 0.3% of the elements
    k.relu_prefix{ grid = 1024, block = 256 }(x, y, m)
  end,
}
