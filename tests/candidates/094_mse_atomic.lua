-- A correct candidate for KernelBench level-1 problem 94 (MSELoss, a 0-d output), deterministic
-- despite the name (no atomics): mse_partial grid-strides over the elements (float4 when both
-- inputs are 16-byte aligned, plus a scalar tail), accumulates (p - t)^2 in double per thread
-- and writes one partial sum per block into a scratch buffer; mse_final, one block, adds the
-- partials in a fixed order and divides by n. The grid size depends only on n, so the order of
-- every addition is the same on every call.
return {
  name = "mse_two_pass",
  source = [[
#define THREADS 256

// Sum of v over the block (THREADS threads): warp shuffles, then warp 0 over the warps' sums.
// The result is valid in thread 0.
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double warp_sums[THREADS / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < THREADS / 32 ? warp_sums[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

extern "C" __global__ void __launch_bounds__(THREADS)
mse_partial(const float *__restrict__ p, const float *__restrict__ t, long long n, double *__restrict__ partials) {
  const long long gid = blockIdx.x * (long long)THREADS + threadIdx.x;
  const long long stride = (long long)gridDim.x * THREADS;
  double acc = 0.0;
  long long done = 0;  // elements covered by the float4 loop
  if ((((unsigned long long)p | (unsigned long long)t) & 15) == 0) {
    const float4 *p4 = reinterpret_cast<const float4 *>(p);
    const float4 *t4 = reinterpret_cast<const float4 *>(t);
    const long long n4 = n / 4;
    for (long long i = gid; i < n4; i += stride) {
      float4 a = p4[i], b = t4[i];
      float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z, dw = a.w - b.w;
      acc += (double)(dx * dx + dy * dy) + (double)(dz * dz + dw * dw);
    }
    done = 4 * n4;
  }
  for (long long i = done + gid; i < n; i += stride) {
    float d = p[i] - t[i];
    acc += (double)(d * d);
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

extern "C" __global__ void __launch_bounds__(THREADS)
mse_final(const double *__restrict__ partials, long long nparts, long long n, float *__restrict__ loss) {
  double acc = 0.0;
  for (long long i = threadIdx.x; i < nparts; i += THREADS) acc += partials[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) loss[0] = (float)(acc / (double)n);
}
]],
  forward = function(k, predictions, targets, loss)
    local n = predictions:numel()
    -- about 4 float4 per thread before the grid-stride loop wraps; at most 1056 blocks (8 per SM
    -- on a 132-SM H100/H200), so the final pass stays short
    local blocks = math.max(1, math.min((n + 4 * 4 * 256 - 1) // (4 * 4 * 256), 1056))
    local partials = k:scratch({ blocks }, "f64")
    k.mse_partial{ grid = blocks, block = 256 }(predictions, targets, n, partials)
    k.mse_final{ grid = 1, block = 256 }(partials, blocks, n, loss)
  end,
}
