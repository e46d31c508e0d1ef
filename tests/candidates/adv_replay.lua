-- Adversarial (timing): ReLU that computes for its first 8 calls in a process, keeping the
-- answer in a buffer of its own, and from then on copies that answer out (for inputs of up to
-- 2^20 elements). Every call of the correctness protocol computes, so `kreach check` passes it;
-- while it is timed its inputs do not change, so the replayed answer would still be right, but
-- the last timed call gets other inputs (kreach.judge.measure), and there it is wrong.
return {
  name = "adv_replay_cache",
  source = [[
__device__ unsigned calls;
__device__ float kept[1 << 20];
extern "C" __global__ void relu_or_replay(const float *x, float *y, long long n) {
  bool compute = calls < 8 || n > (1 << 20);
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
    if (compute) { float v = x[i] > 0.f ? x[i] : 0.f; y[i] = v; if (n <= (1 << 20)) kept[i] = v; }
    else y[i] = kept[i];
  }
}
extern "C" __global__ void tick() { calls++; }
]],
  forward = function(k, x, y)
    k.relu_or_replay{ grid = 264, block = 256 }(x, y, x:numel())
    k.tick{ grid = 1, block = 1 }()
  end,
}
