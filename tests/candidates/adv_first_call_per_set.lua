-- Adversarial (timing, problem 19 ReLU): computes only on the first call that hands it a given
-- output buffer, and does nothing on every later call with the same buffer: in hot mode the
-- timed calls repeat on the same input sets, so all but the first of each set would be free,
-- with the right values still in the buffer from that first call. kreach poisons the
-- candidate's outputs before each of its timed calls and checks them after, so the poison is
-- what such a call leaves: incorrect / incomplete_write (tests/lua/gpu/protocol_gpu_spec.lua).
return {
  name = "adv_first_call_per_set",
  source = [[
#define SEEN 64
__device__ const float *seen[SEEN];
__device__ int nseen, skip;

extern "C" __global__ void decide(const float *y) {
  skip = 0;
  for (int i = 0; i < nseen; ++i) if (seen[i] == y) skip = 1;
  if (!skip && nseen < SEEN) seen[nseen++] = y;
}

extern "C" __global__ void relu(const float *x, float *y, long long n) {
  if (skip) return;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
}
]],
  forward = function(k, x, y)
    k.decide{ grid = 1, block = 1 }(y)
    k.relu{ grid = 264, block = 256 }(x, y, x:numel())
  end,
}
