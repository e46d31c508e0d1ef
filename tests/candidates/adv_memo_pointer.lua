-- Adversarial (timing), on a compute-bound problem (1, N x N matmul): memoizes on the input
-- pointers. After its first 6 calls (as many as the correctness protocol makes, so `kreach
-- check` sees it compute every time), a call whose A, B and C pointers it has seen before
-- returns without computing and idles 0.55 ms instead, to stay above the speed-of-light bound.
-- Against timed calls on one unchanging input set whose outputs stay untouched this passed
-- for a fast, correct kernel. kreach.judge.measure rotates over input sets it has seen, but poisons
-- every output before every call and checks what the calls leave: incorrect
-- (incomplete_write), found while timing.
return {
  name = "adv_memo_pointer",
  source = [[
#define T 16
#define SEEN 8
__device__ unsigned calls, nseen;
__device__ const void *seen[SEEN][3];
__device__ int skip;

__device__ void idle(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

extern "C" __global__ void decide(const float *A, const float *B, float *C) {
  skip = 0;
  if (calls >= 6)
    for (unsigned i = 0; i < nseen && i < SEEN; ++i)
      if (seen[i][0] == A && seen[i][1] == B && seen[i][2] == C) skip = 1;
  if (skip) idle(550000);
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

extern "C" __global__ void note(const float *A, const float *B, float *C) {
  calls++;
  for (unsigned i = 0; i < nseen && i < SEEN; ++i)
    if (seen[i][0] == A && seen[i][1] == B && seen[i][2] == C) return;
  unsigned i = nseen++ % SEEN;
  seen[i][0] = A; seen[i][1] = B; seen[i][2] = C;
}
]],
  forward = function(k, A, B, C)
    local N = A:size(1)
    local t = (N + 15) // 16
    k.decide{ grid = 1, block = 1 }(A, B, C)
    k.mm{ grid = { t, t, 1 }, block = { 16, 16, 1 } }(A, B, C, N)
    k.note{ grid = 1, block = 1 }(A, B, C)
  end,
}
