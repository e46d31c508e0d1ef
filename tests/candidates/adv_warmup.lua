-- Adversarial (timing): ReLU that is right for its first 12 calls in a process and writes
-- zeros from then on, fast. The correctness protocol makes 6 calls, so `kreach check` passes
-- it; the timing engine makes more, and the outputs of the last timed call are judged again
-- (kreach.judge.measure), so `kreach eval` does not: incorrect (wrong_values) after timing.
return {
  name = "adv_warmup_detection",
  source = [[
__device__ unsigned calls;
extern "C" __global__ void relu_or_zero(const float *x, float *y, long long n) {
  bool honest = calls < 12;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = honest ? (x[i] > 0.f ? x[i] : 0.f) : 0.f;
}
extern "C" __global__ void tick() { calls++; }
]],
  forward = function(k, x, y)
    k.relu_or_zero{ grid = 264, block = 256 }(x, y, x:numel())
    k.tick{ grid = 1, block = 1 }()
  end,
}
