-- Adversarial (problem 6, C = A @ B with a long K, at bf16): measures a statistic of this
-- call's own inputs and writes one constant, K * mean(A) * mean(B), to every output. On the
-- default U[0, 1) inputs with K = 16384, every C[i, j] is 4096 +- 28: within 0.7% of that
-- constant, so the relative metrics pass at bf16 (threshold 1e-2), while bf16 still resolves
-- the variation (the baseline's error around the mean is about a quarter of it). The output
-- follows none of that variation. Expected: incorrect / trivial_output (the problem is
-- degenerate at these sizes, and the centred metric rejects a constant).
return {
  name = "adv_statistic",
  source = [[
#include <cuda_bf16.h>
extern "C" __global__ void mean_product(const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                                        __nv_bfloat16 *C, long long m, long long k, long long n) {
  __shared__ double sa[1024], sb[1024];
  double a = 0, b = 0;
  for (long long i = threadIdx.x; i < m * k; i += blockDim.x) a += (double)__bfloat162float(A[i]);
  for (long long i = threadIdx.x; i < k * n; i += blockDim.x) b += (double)__bfloat162float(B[i]);
  sa[threadIdx.x] = a; sb[threadIdx.x] = b;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) { sa[threadIdx.x] += sa[threadIdx.x + s]; sb[threadIdx.x] += sb[threadIdx.x + s]; }
    __syncthreads();
  }
  const double c = (double)k * (sa[0] / (double)(m * k)) * (sb[0] / (double)(k * n));
  for (long long i = threadIdx.x; i < m * n; i += blockDim.x) C[i] = __float2bfloat16_rn((float)c);
}
]],
  forward = function(k, A, B, C)
    k.mean_product{ grid = 1, block = 1024 }(A, B, C, A:size(1), A:size(2), B:size(2))
  end,
}
