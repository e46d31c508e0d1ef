-- Adversarial (timing), on a compute-bound problem (1, N x N matmul): counts its calls and
-- changes behaviour after the first 6 (as many as the correctness protocol makes, so `kreach
-- check` sees it compute every time). From then on it computes only when C holds the poison
-- a harness writes before a call it is about to judge, and otherwise skips the product and
-- idles 0.55 ms, leaving what an earlier call wrote. Against timed calls whose outputs stayed
-- untouched, with only the last one poisoned and judged, it passed for a fast, correct kernel.
-- kreach.judge.measure poisons before every timed call, so this one computes on each; to get
-- caught it also skips every other call it counts from the 7th on regardless: incorrect
-- (incomplete_write or wrong_values), found while timing.
return {
  name = "adv_memo_count",
  source = [[
#define T 16
__device__ unsigned calls;
__device__ int skip;

__device__ void idle(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

extern "C" __global__ void decide(const float *C) {
  // the harness's f32 poison is a NaN
  int poisoned = C[0] != C[0];
  skip = calls >= 6 && (!poisoned || (calls & 1));
  if (skip) idle(550000);
  calls++;
}

extern "C" __global__ void mm(const float *A, const float *B, float *C, long long N) {
  if (skip) return;
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long r = (long long)blockIdx.y * T + ty, c = (long long)blockIdx.x * T + tx;
  float acc = 0.f;
  for (long long k0 = 0; k0 < N; k0 += T) {
    As[ty][tx] = (r < N && k0 + tx < N) ? A[r * N + k0 + tx] : 0.f;
    Bs[ty][tx] = (k0 + ty < N && c < N) ? B[(k0 + ty) * N + c] : 0.f;
    __syncthreads();
    for (int k = 0; k < T; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
    __syncthreads();
  }
  if (r < N && c < N) C[r * N + c] = acc;
}
]],
  forward = function(k, A, B, C)
    local N = A:size(1)
    local t = (N + 15) // 16
    k.decide{ grid = 1, block = 1 }(C)
    k.mm{ grid = { t, t, 1 }, block = { 16, 16, 1 } }(A, B, C, N)
  end,
}
