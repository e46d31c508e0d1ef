-- Adversarial (timing), on a compute-bound problem (1, N x N matmul, N up to 4096): a result
-- cache. For each of two input sets it keeps the A and B pointers, eight sampled values of
-- each and the whole product, in __device__ memory of its own. A call whose pointers and
-- sampled values match an entry copies the kept product into C (right values, written in
-- full) and idles 0.55 ms, to stay above the speed-of-light bound; any other call computes and
-- fills an entry. The correctness protocol's repeated call is served from the cache, right.
-- Rotating over fixed input sets and poisoning outputs does not stop it: every answer it
-- copies is right. kreach.judge.measure draws new values into every round's inputs, so no call ever
-- matches an entry and it computes every time: correct, at its honest (slow) speed.
return {
  name = "adv_memo_cache",
  source = [[
#define T 16
#define MAXN 4096
__device__ float kept[2][(long long)MAXN * MAXN];
__device__ const float *keyA[2], *keyB[2];
__device__ float sa[2][8], sb[2][8];
__device__ int valid[2], hit, slot, next;

__device__ void idle(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

__device__ long long at(int i, long long n) { return (long long)(((unsigned long long)(i + 1) * 2654435761ull) % (unsigned long long)n); }

extern "C" __global__ void decide(const float *A, const float *B, long long N) {
  long long nn = N * N;
  hit = -1;
  for (int e = 0; e < 2 && N <= MAXN; ++e) {
    int same = valid[e] && keyA[e] == A && keyB[e] == B;
    for (int i = 0; same && i < 8; ++i) same = A[at(i, nn)] == sa[e][i] && B[at(i + 8, nn)] == sb[e][i];
    if (same) hit = e;
  }
  if (hit >= 0) { slot = hit; idle(550000); }
  else { slot = next; next ^= 1; }
}

extern "C" __global__ void mm(const float *A, const float *B, float *C, long long N) {
  const long long nn = N * N;
  if (hit >= 0) {  // copy the kept product out
    long long stride = (long long)gridDim.x * gridDim.y * blockDim.x * blockDim.y;
    long long id = ((long long)blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
    for (long long i = id; i < nn; i += stride) C[i] = kept[slot][i];
    return;
  }
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
  if (r < N && c < N) {
    C[r * N + c] = acc;
    if (N <= MAXN) kept[slot][r * N + c] = acc;
  }
}

extern "C" __global__ void note(const float *A, const float *B, long long N) {
  if (hit >= 0 || N > MAXN) return;
  long long nn = N * N;
  keyA[slot] = A; keyB[slot] = B; valid[slot] = 1;
  for (int i = 0; i < 8; ++i) { sa[slot][i] = A[at(i, nn)]; sb[slot][i] = B[at(i + 8, nn)]; }
}
]],
  forward = function(k, A, B, C)
    local N = A:size(1)
    local t = (N + 15) // 16
    k.decide{ grid = 1, block = 1 }(A, B, N)
    k.mm{ grid = { t, t, 1 }, block = { 16, 16, 1 } }(A, B, C, N)
    k.note{ grid = 1, block = 1 }(A, B, N)
  end,
}
