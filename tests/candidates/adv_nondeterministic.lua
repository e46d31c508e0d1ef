-- Adversarial (problem 19, ReLU): a __device__ counter of calls, bumped by a tiny kernel after
-- the work. Calls 1, 3, 5, ... (counter even) write the correct ReLU; calls 2, 4, ... write it
-- times 1.5. The first call of every trial is then correct (trial 1 is call 1, its repeat call
-- 2, trials 2..5 calls 3..6), and only the repeat of trial 1 on the same inputs differs.
-- Expected: incorrect / nondeterministic.
return {
  name = "adv_nondeterministic",
  source = [[
__device__ unsigned long long calls = 0;  // completed calls; lives as long as the module

extern "C" __global__ void relu_flaky(const float *x, float *y, long long n) {
  const float f = (calls & 1) ? 1.5f : 1.f;  // every second call is off by half
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = (x[i] > 0.f ? x[i] : 0.f) * f;
}

// Launched after relu_flaky on the same stream, so it runs once that kernel is done.
extern "C" __global__ void bump() {
  if (blockIdx.x == 0 && threadIdx.x == 0) calls += 1;
}
]],
  forward = function(k, x, y)
    k.relu_flaky{ grid = 1024, block = 256 }(x, y, x:numel())
    k.bump{ grid = 1, block = 1 }()
  end,
}
