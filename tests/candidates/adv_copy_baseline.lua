-- Adversarial (timing), on a compute-bound problem (1, N x N matmul): copies the answer from the
-- baseline's output. A candidate's kernels can read any device memory of the worker, and in
-- kreach.judge.measure's worker the baseline's C for an input set is allocated right after the set's
-- A and B, and the candidate's own C right after it: so where C sits two matrices past B, the
-- matrix between them is the baseline's C. When that holds and 32 sampled elements of it are
-- right for these inputs, this copies it; else it computes honestly, as in the correctness
-- check, whose outputs are views into guarded allocations. When the baseline ran before the
-- candidate in each round, that matrix was this round's answer.
-- As a test it marks what it copied: element 0 is off by 1000, so a copy made in any timed call
-- is a wrong value that the round's checks find (incorrect, found while timing), whatever the
-- copy's speed. kreach.judge.measure calls the candidate first and poisons the baseline's outputs
-- before each candidate call, so the samples never match and it is correct
-- (tests/lua/gpu/timing_spec.lua). Found by a read of measure.lua (2026-12-05).
return {
  name = "adv_copy_baseline",
  source = [[
#define T 16
__device__ int copy;

// the matrix between B and C, where C lies two matrices past B; else null
__device__ const float *between(const float *B, const float *C, long long N) {
  const unsigned long long bytes = (unsigned long long)N * N * sizeof(float);
  if ((unsigned long long)C != (unsigned long long)B + 2 * bytes) return 0;
  return (const float *)((const char *)B + bytes);
}

// one block of 32 threads: each checks one element of the matrix between against A B
extern "C" __global__ void decide(const float *A, const float *B, const float *C, long long N) {
  __shared__ int ok;
  if (threadIdx.x == 0) ok = 1;
  __syncthreads();
  const float *src = between(B, C, N);
  if (src) {
    const long long i = (threadIdx.x * 7919LL + 13) % N, j = (threadIdx.x * 104729LL + 7) % N;
    double s = 0, m = 0;
    for (long long k = 0; k < N; ++k) { double p = (double)A[i * N + k] * B[k * N + j]; s += p; m += fabs(p); }
    const float v = src[i * N + j];
    if (!(fabs((double)v - s) <= 1e-4 * m + 1e-30)) atomicAnd(&ok, 0);
  }
  __syncthreads();
  if (threadIdx.x == 0) copy = src && ok;
}

extern "C" __global__ void mm(const float *A, const float *B, float *C, long long N) {
  const long long r = (long long)blockIdx.y * T + threadIdx.y, c = (long long)blockIdx.x * T + threadIdx.x;
  if (copy) {
    if (r < N && c < N) C[r * N + c] = between(B, C, N)[r * N + c] + (r == 0 && c == 0 ? 1000.f : 0.f);
    return;
  }
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
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
    k.decide{ grid = 1, block = 32 }(A, B, C, N)
    k.mm{ grid = { t, t, 1 }, block = { 16, 16, 1 } }(A, B, C, N)
  end,
}
