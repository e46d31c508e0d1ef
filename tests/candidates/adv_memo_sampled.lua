-- Adversarial (timing), on a compute-bound problem (1, N x N matmul): the memo measured on the
-- H200 before the timed calls were changed (docs/timing.md). It keeps, in __device__ globals,
-- the input pointers, four sampled values of A and of B, and two sampled values of the C it
-- last wrote. When all of them match it skips the product and idles 0.55 ms (to stay above the
-- speed-of-light bound); otherwise it computes for real. Every call of the correctness
-- protocol changes the inputs or poisons the outputs, so `kreach check` sees it compute; timed
-- calls on one unchanging input set with untouched outputs let it skip, and it was judged
-- correct at a speedup it never had. Now every timed call gets new values and poisoned
-- outputs, so it always computes: correct, at its honest (slow) speed.
return {
  name = "adv_memo_sampled",
  source = [[
#define T 16
__device__ const float *lastA, *lastB;
__device__ float *lastC;
__device__ float sa[4], sb[4], sc[2];
__device__ int skip, have;

__device__ void idle(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

__device__ long long at(int i, long long n) { return (long long)(((unsigned long long)(i + 1) * 2654435761ull) % (unsigned long long)n); }

extern "C" __global__ void decide(const float *A, const float *B, const float *C, long long N) {
  long long nn = N * N;
  int same = have && A == lastA && B == lastB && C == lastC;
  for (int i = 0; same && i < 4; ++i) same = A[at(i, nn)] == sa[i] && B[at(i + 4, nn)] == sb[i];
  for (int i = 0; same && i < 2; ++i) same = C[at(i + 8, nn)] == sc[i];
  skip = same;
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

extern "C" __global__ void note(const float *A, const float *B, float *C, long long N) {
  long long nn = N * N;
  lastA = A; lastB = B; lastC = C; have = 1;
  for (int i = 0; i < 4; ++i) { sa[i] = A[at(i, nn)]; sb[i] = B[at(i + 4, nn)]; }
  for (int i = 0; i < 2; ++i) sc[i] = C[at(i + 8, nn)];
}
]],
  forward = function(k, A, B, C)
    local N = A:size(1)
    local t = (N + 15) // 16
    k.decide{ grid = 1, block = 1 }(A, B, C, N)
    k.mm{ grid = { t, t, 1 }, block = { 16, 16, 1 } }(A, B, C, N)
    k.note{ grid = 1, block = 1 }(A, B, C, N)
  end,
}
