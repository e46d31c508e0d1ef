-- kreach.ops.snippets: CUDA device code that several operator families share, each once, for a
-- family to put into its source where it needs it (kreach.ops.cuda is the prelude every source
-- starts with; these are what only some families use). Each snippet is a complete run of
-- declarations, ending with a newline.
local M = {}

-- One 16-byte pack of T loaded from p (16-byte aligned).
M.LD_PACK = [==[
template <typename T> __device__ __forceinline__ Pack<T> ld_pack(const T *p) {
  return *reinterpret_cast<const Pack<T> *>(p);
}
]==]

-- The online softmax (log-sum-exp) state: the running maximum m and the sum s of exp(x - m);
-- lse_add takes N more values, lse_merge another state (of another lane, warp or block).
M.ONLINE_SOFTMAX = [==[
/* Online log-sum-exp state: the running maximum m and the sum s of exp(x - m). */
template <typename A> __device__ __forceinline__ void lse_merge(A &m, A &s, A om, A os) {
  A nm = kmax(m, om);
  if (nm == -kinf<A>()) return; /* both empty: exp(-inf - -inf) would be NaN */
  s = s * kexp(m - nm) + os * kexp(om - nm);
  m = nm;
}
template <typename A, int N> __device__ __forceinline__ void lse_add(A &m, A &s, const A *v) {
  A pm = v[0];
#pragma unroll
  for (int k = 1; k < N; k++) pm = kmax(pm, v[k]);
  if (pm > m) { s = m == -kinf<A>() ? (A)0 : s * kexp(m - pm); m = pm; }
#pragma unroll
  for (int k = 0; k < N; k++) s += kexp(v[k] - m); /* a NaN makes s NaN */
}
]==]

-- The merge of the states of a block: a state type S with init(), merge(const S &) and a
-- shfl_down(S, int) of its own (reduce's Red, norm's Stat), declared before this is put in.
M.BLOCK_MERGE = [==[
/* Merges the states of a 1-D block (blockDim.x a multiple of 32); the result is thread 0's. */
template <typename S> __device__ S block_merge(S s, S *sh) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s.merge(shfl_down(s, o));
  if (lane == 0) sh[w] = s;
  __syncthreads();
  if (w == 0) {
    if (lane < nw) s = sh[lane]; else s.init();
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s.merge(shfl_down(s, o));
  }
  return s;
}
]==]

return M
