-- An example candidate for DLRM-Bench problem 5 (embedding_bag's table gradient per distinct
-- row, f32): a counting sort over the table's rows with 32-bit flags and ranks (half the bytes of
-- the baseline's 64-bit ones), the ranks' scan in blocks of 4096 with one pass over the block
-- totals, then a warp a bag adding its gradient to each lookup's rank with float atomics (sums in
-- another order than the oracle's: within the f32 threshold).
return {
  name = "backward_counting_sort",
  source = [==[
#define TH 256
#define ITEMS 16
extern "C" __global__ void fill(long long *__restrict__ rows_out, float *__restrict__ grads, int *__restrict__ flag,
    long long L, long long D, long long R) {
  const long long stride = (long long)gridDim.x * TH;
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < L * D; i += stride) grads[i] = 0.f;
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < L; i += stride) rows_out[i] = -1;
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < R; i += stride) flag[i] = 0;
}
extern "C" __global__ void mark(const long long *__restrict__ idx, long long L, int *__restrict__ flag) {
  for (long long j = (long long)blockIdx.x * TH + threadIdx.x; j < L; j += (long long)gridDim.x * TH) flag[idx[j]] = 1;
}
/* an exclusive scan of TH * ITEMS flags a block, in place; block totals to sums */
extern "C" __global__ void scan_blocks(int *__restrict__ v, long long n, int *__restrict__ sums) {
  __shared__ int wt[TH / 32];
  const long long base = ((long long)blockIdx.x * TH + threadIdx.x) * ITEMS;
  int x[ITEMS], s = 0;
  for (int k = 0; k < ITEMS; k++) { x[k] = base + k < n ? v[base + k] : 0; s += x[k]; }
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int inc = s;
  for (int o = 1; o < 32; o <<= 1) { const int u = __shfl_up_sync(0xffffffffu, inc, o); if (lane >= o) inc += u; }
  if (lane == 31) wt[w] = inc;
  __syncthreads();
  int before = 0, total = 0;
  for (int k = 0; k < TH / 32; k++) { if (k < w) before += wt[k]; total += wt[k]; }
  int run = before + inc - s;
  for (int k = 0; k < ITEMS; k++) { if (base + k < n) v[base + k] = run; run += x[k]; }
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}
extern "C" __global__ void scan_sums(int *__restrict__ sums, long long nb, long long *__restrict__ count) {
  if (threadIdx.x != 0) return;
  long long run = 0;
  for (long long i = 0; i < nb; i++) { const int t = sums[i]; sums[i] = (int)run; run += t; }
  count[0] = run;
}
extern "C" __global__ void place(const long long *__restrict__ idx, long long L, int *__restrict__ rank,
    const int *__restrict__ sums, long long *__restrict__ rows_out) {
  for (long long j = (long long)blockIdx.x * TH + threadIdx.x; j < L; j += (long long)gridDim.x * TH) {
    const long long r = idx[j];
    rows_out[rank[r] + sums[r / (TH * ITEMS)]] = r;
  }
}
extern "C" __global__ void accumulate(const long long *__restrict__ idx, const long long *__restrict__ off,
    const float *__restrict__ gout, const int *__restrict__ rank, const int *__restrict__ sums,
    float *__restrict__ grads, long long bags, long long D) {
  const int lane = threadIdx.x & 31;
  for (long long b = (long long)blockIdx.x * (TH / 32) + (threadIdx.x >> 5); b < bags; b += (long long)gridDim.x * (TH / 32))
    for (long long j = off[b]; j < off[b + 1]; j++) {
      const long long r = idx[j];
      const long long slot = rank[r] + sums[r / (TH * ITEMS)];
      for (long long d = lane; d < D; d += 32) atomicAdd(&grads[slot * D + d], gout[b * D + d]);
    }
}
  ]==],
  forward = function(k, idx, offsets, grad_out, rows_out, grads, count)
    local L, D, bags = idx:numel(), grad_out:size(2), offsets:numel() - 1
    local R = 10000000 -- the problem's table (its rows size)
    local per = 256 * 16
    local nb = (R + per - 1) // per
    local flag = k:scratch({ R }, "i32")
    local sums = k:scratch({ nb }, "i32")
    local g = 132 * 8
    k.fill{ grid = g, block = 256 }(rows_out, grads, flag, L, D, R)
    k.mark{ grid = g, block = 256 }(idx, L, flag)
    k.scan_blocks{ grid = nb, block = 256 }(flag, R, sums)
    k.scan_sums{ grid = 1, block = 32 }(sums, nb, count)
    k.place{ grid = g, block = 256 }(idx, L, flag, sums, rows_out)
    k.accumulate{ grid = math.min((bags + 7) // 8, 65535), block = 256 }(idx, offsets, grad_out, flag, sums, grads, bags, D)
  end,
}
