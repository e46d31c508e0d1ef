-- Adversarial (problem 19, ReLU): correct ReLU, plus zeros written to y[n] .. y[n + 63], just
-- past the end of the output, where the harness keeps a poisoned guard region.
-- Expected: runtime_error (an out-of-bounds write into the guard).
return {
  name = "adv_oob_write",
  source = [[
extern "C" __global__ void relu_spill(const float *x, float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n + 64; i += stride)
    y[i] = i < n ? (x[i] > 0.f ? x[i] : 0.f) : 0.f;  // 64 elements too many
}
]],
  forward = function(k, x, y)
    k.relu_spill{ grid = 1024, block = 256 }(x, y, x:numel())
  end,
}
