-- A correct but slow candidate (problem 19, ReLU): the right values, then 0.3 ms of idling in
-- one thread. Its speedup over kreach's baseline must read below 1, the whole interval included
-- (tests/lua/gpu/protocol_gpu_spec.lua): a speedup read the wrong way round would show it as a win.
return {
  name = "slow_relu",
  source = [[
extern "C" __global__ void relu(const float *x, float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
}
extern "C" __global__ void idle(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
]],
  forward = function(k, x, y)
    k.relu{ grid = 264, block = 256 }(x, y, x:numel())
    k.idle{ grid = 1, block = 1 }(300000)
  end,
}
