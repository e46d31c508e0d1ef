-- An example candidate for KernelBench level-1 problem 23 (softmax over dim 1): one block per
-- row (rows grid-strided past the grid limit). Pass 1 keeps an online (max, sum of exp(x - max))
-- pair per thread and merges the pairs with warp shuffles and shared memory; pass 2 writes
-- exp(x - max) / sum. Rows are split into a head (up to the first 16-byte boundary), a float4
-- body and a scalar tail, so any dim works; float4 is used only when x and y rows share their
-- alignment.
return {
  name = "softmax_rowblock_online",
  source = [[
#define NEG_INF __int_as_float(0xff800000)

// Online softmax state: m is the running max, s the sum of exp(x - m) over the elements seen.
struct MS { float m, s; };

__device__ __forceinline__ MS ms_push(MS a, float x) {
  if (x > a.m) { a.s = a.s * expf(a.m - x) + 1.f; a.m = x; }  // rescale the sum to the new max
  else a.s += expf(x - a.m);
  return a;
}

__device__ __forceinline__ MS ms_merge(MS a, MS b) {
  float m = fmaxf(a.m, b.m);
  if (m == NEG_INF) return a;  // both empty
  MS r;
  r.m = m;
  r.s = a.s * expf(a.m - m) + b.s * expf(b.m - m);  // an empty side has s = 0, exp(-inf) = 0
  return r;
}

extern "C" __global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y,
                                        long long rows, long long cols) {
  __shared__ float sh_m[32], sh_s[32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nwarps = (blockDim.x + 31) >> 5;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    // head: elements before xr's first 16-byte boundary; all of the row if y is aligned differently
    unsigned long long xa = (unsigned long long)xr, ya = (unsigned long long)yr;
    long long head = ((xa ^ ya) & 15) ? cols : (long long)(((16 - (xa & 15)) & 15) / 4);
    if (head > cols) head = cols;
    const long long n4 = (cols - head) / 4, tail = head + 4 * n4;
    const float4 *x4 = reinterpret_cast<const float4 *>(xr + head);
    float4 *y4 = reinterpret_cast<float4 *>(yr + head);

    // pass 1: per-thread online (max, sum)
    MS st = { NEG_INF, 0.f };
    for (long long i = tid; i < head; i += blockDim.x) st = ms_push(st, xr[i]);
    for (long long i = tid; i < n4; i += blockDim.x) {
      float4 v = x4[i];
      st = ms_push(st, v.x); st = ms_push(st, v.y); st = ms_push(st, v.z); st = ms_push(st, v.w);
    }
    for (long long i = tail + tid; i < cols; i += blockDim.x) st = ms_push(st, xr[i]);

    // block merge: within each warp, then warp 0 merges the warps' results
    for (int o = 16; o > 0; o >>= 1) {
      MS other = { __shfl_xor_sync(0xffffffffu, st.m, o), __shfl_xor_sync(0xffffffffu, st.s, o) };
      st = ms_merge(st, other);
    }
    if (lane == 0) { sh_m[warp] = st.m; sh_s[warp] = st.s; }
    __syncthreads();
    if (warp == 0) {
      MS w = { NEG_INF, 0.f };
      if (lane < nwarps) { w.m = sh_m[lane]; w.s = sh_s[lane]; }
      for (int o = 16; o > 0; o >>= 1) {
        MS other = { __shfl_xor_sync(0xffffffffu, w.m, o), __shfl_xor_sync(0xffffffffu, w.s, o) };
        w = ms_merge(w, other);
      }
      if (lane == 0) { sh_m[0] = w.m; sh_s[0] = w.s; }
    }
    __syncthreads();
    const float m = sh_m[0], inv = 1.f / sh_s[0];
    __syncthreads();  // everyone has read sh_m[0] / sh_s[0] before the next row overwrites them

    // pass 2: normalise
    for (long long i = tid; i < head; i += blockDim.x) yr[i] = expf(xr[i] - m) * inv;
    for (long long i = tid; i < n4; i += blockDim.x) {
      float4 v = x4[i];
      v.x = expf(v.x - m) * inv; v.y = expf(v.y - m) * inv;
      v.z = expf(v.z - m) * inv; v.w = expf(v.w - m) * inv;
      y4[i] = v;
    }
    for (long long i = tail + tid; i < cols; i += blockDim.x) yr[i] = expf(xr[i] - m) * inv;
  }
}
]],
  forward = function(k, x, y)
    local rows, cols = x:size(1), x:size(2)
    if rows == 0 or cols == 0 then return end
    local block = cols >= 16384 and 512 or (cols >= 1024 and 256 or 64)
    k.softmax_rows{ grid = math.min(rows, 0x7fffffff), block = block }(x, y, rows, cols)
  end,
}
