-- Adversarial (problem 47, sum over dim 1): zeroes y, then one thread per input element does a
-- plain (non-atomic) y[b, 0, j] += x[b, r, j]. Threads are numbered with r fastest, so the 32
-- lanes of a warp load the same y element, add their own x and store: all but one update is
-- lost, and across warps the survivors depend on timing. Expected: incorrect / wrong_values
-- (or nondeterministic).
return {
  name = "adv_race",
  source = [[
extern "C" __global__ void zero(float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) y[i] = 0.f;
}
extern "C" __global__ void racy_sum(const float *x, float *y, long long B, long long R, long long inner) {
  const long long total = B * R * inner;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long r = i % R, bj = i / R, j = bj % inner, b = bj / inner;
    y[b * inner + j] += x[(b * R + r) * inner + j];  // the race: load, add, store
  }
}
]],
  forward = function(k, x, y)
    -- reduce_dim = 1 (the problem's default): x is [B, R, inner]
    local B, R, inner = x:size(1), x:size(2), x:size(3)
    k.zero{ grid = 1024, block = 256 }(y, y:numel())
    k.racy_sum{ grid = 4096, block = 256 }(x, y, B, R, inner)
  end,
}
