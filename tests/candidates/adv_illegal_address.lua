-- Adversarial (problem 19, ReLU): correct ReLU, then thread 0 of block 0 stores through a wild
-- pointer, 2^40 floats (4 TiB) past y, where nothing is mapped.
-- Expected: runtime_error (an illegal memory access).
return {
  name = "adv_illegal_address",
  source = [[
extern "C" __global__ void relu_wild(const float *x, float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    volatile float *wild = y + (1LL << 40);
    *wild = 1.f;
  }
}
]],
  forward = function(k, x, y)
    k.relu_wild{ grid = 1024, block = 256 }(x, y, x:numel())
  end,
}
