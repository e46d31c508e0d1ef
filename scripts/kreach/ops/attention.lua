-- kreach.ops.attention: scaled dot-product attention without a mask, as PyTorch's math path
-- computes it: S = Q K^T / sqrt(D) and O = softmax(S) V, through two cuBLAS strided-batched
-- GEMMs (TF32 off; f16 and bf16 accumulate in fp32; DGEMM for the oracle) with a row softmax
-- between them, in place on S.
--
-- S is kept in the input dtype: the gemm binding takes one dtype for all three operands, so
-- bf16 inputs give bf16 scores (rounded once from fp32 accumulators, with the 1/sqrt(D) scale
-- applied in fp32 by the GEMM's alpha), and bf16 probabilities as the second GEMM's operand.
-- That is what PyTorch's math path does too (it rounds the scaled Q and K as well). The softmax
-- computes in fp32 (fp64 for the oracle).
local tensor = require "kreach.core.tensor"
local cublas = require "kreach.core.cublas"
local snippets = require "kreach.ops.snippets"

local SRC = snippets.LD_PACK .. snippets.ONLINE_SOFTMAX .. [==[

/* Softmax along rows of a rows x cols matrix, in place; one warp a row (grid-stride). A lane's
 * share of a row of at most U * 32 * N values (CACHED) stays in registers: the maximum,
 * then exp(x - max) once, its sum, and exp / sum written back. A longer row takes two passes:
 * an online maximum and sum of exp(x - max) (U packs loaded before any is used), merged across
 * lanes, then the row again (from L1 or L2: a row is a few KB) and exp(x - max) / sum. A row
 * with a NaN gives NaN, a row of -inf gives NaN, as in PyTorch. VEC needs a 16-byte aligned x
 * and cols % Pack::N == 0. */
template <typename T, bool VEC, bool CACHED>
__global__ void __launch_bounds__(256) softmax_rows(T *__restrict__ x, i64 rows, i64 cols) {
  typedef typename Acc<T>::type A;
  const int N = VEC ? Pack<T>::N : 1, U = 4;
  const int lane = threadIdx.x & 31;
  const i64 gstep = 32 * N;
  const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const i64 nwarps = ((i64)gridDim.x * blockDim.x) >> 5;
  for (i64 r = warp; r < rows; r += nwarps) {
    T *row = x + r * cols;
    A v[U][N];
    if (CACHED) {
      A m = -kinf<A>(), s = 0;
#pragma unroll
      for (int u = 0; u < U; u++) {
        const i64 c = (i64)lane * N + u * gstep;
        if (c < cols) {
          if (VEC) {
            Pack<T> p = ld_pack(row + c);
#pragma unroll
            for (int k = 0; k < N; k++) v[u][k] = ld(p.v[k]);
          } else {
            v[u][0] = ld(row[c]);
          }
#pragma unroll
          for (int k = 0; k < N; k++) m = kmax(m, v[u][k]);
        }
      }
      m = warp_max(m);
#pragma unroll
      for (int u = 0; u < U; u++) {
        if ((i64)lane * N + u * gstep < cols) {
#pragma unroll
          for (int k = 0; k < N; k++) { v[u][k] = kexp(v[u][k] - m); s += v[u][k]; }
        }
      }
      s = warp_sum(s);
#pragma unroll
      for (int u = 0; u < U; u++) {
        const i64 c = (i64)lane * N + u * gstep;
        if (c < cols) {
          if (VEC) {
            Pack<T> p;
#pragma unroll
            for (int k = 0; k < N; k++) p.v[k] = st<T>(v[u][k] / s);
            *reinterpret_cast<Pack<T> *>(row + c) = p;
          } else {
            row[c] = st<T>(v[u][0] / s);
          }
        }
      }
      continue;
    }
    A m = -kinf<A>(), s = 0;
    for (i64 c0 = (i64)lane * N; c0 < cols; c0 += U * gstep) {
#pragma unroll
      for (int u = 0; u < U; u++) {
        const i64 c = c0 + u * gstep;
        if (c < cols) {
          if (VEC) {
            Pack<T> p = ld_pack(row + c);
#pragma unroll
            for (int k = 0; k < N; k++) v[u][k] = ld(p.v[k]);
          } else {
            v[u][0] = ld(row[c]);
          }
        }
      }
#pragma unroll
      for (int u = 0; u < U; u++)
        if (c0 + u * gstep < cols) lse_add<A, N>(m, s, v[u]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      A om = __shfl_xor_sync(0xffffffffu, m, o), os = __shfl_xor_sync(0xffffffffu, s, o);
      lse_merge(m, s, om, os);
    }
    for (i64 c = (i64)lane * N; c < cols; c += gstep) {
      if (VEC) {
        Pack<T> p = ld_pack(row + c);
#pragma unroll
        for (int k = 0; k < N; k++) p.v[k] = st<T>(kexp(ld(p.v[k]) - m) / s);
        *reinterpret_cast<Pack<T> *>(row + c) = p;
      } else {
        row[c] = st<T>(kexp(ld(row[c]) - m) / s);
      }
    }
  }
}
]==]

local THREADS = 256
-- The scores of one chunk of the batch stay under this. cudaMalloc and cudaFree of the
-- temporary cost about 0.9 ms a GiB on the H200 (measured): 0.46 ms, a fifth of problem 97's
-- bf16 time, for all 512 MiB of its scores at once. Chunks of 128 MiB would still give each
-- GEMM a batch of 128 (f32) or 256 (bf16) 512 x 512 products, but the chunked path has not run
-- on the H200 yet: until it has, the limit keeps problem 97 (1 GiB of f32 scores) in the one
-- piece that was measured there.
-- (LIMITS.scores_max_bytes; softmax_grid_max caps the softmax's blocks; a test may lower both,
-- kreach.ops.with_limits)
local LIMITS = { scores_max_bytes = 2 * 1024 * 1024 * 1024, softmax_grid_max = 0x7fffffff }

local UNROLL = 4 -- U in softmax_rows: a row of up to UNROLL * 32 packs is kept in registers

local function instantiate(T)
  local inst = {}
  for _, vec in ipairs({ "true", "false" }) do
    for _, cached in ipairs({ "true", "false" }) do
      inst[#inst + 1] = ("softmax_rows<%s, %s, %s>"):format(T, vec, cached)
    end
  end
  return inst
end

local function install(lib, K)
  -- x = softmax(x, dim=-1) in place, over a rows x cols matrix (any tensor of cols columns)
  local function softmax_inplace(x, rows, cols)
    if rows == 0 or cols == 0 then return end
    local per = 16 // tensor.dtype_size(x.dtype)
    local vec = cols % per == 0 and K.aligned(x, 16)
    if not vec then per = 1 end
    local cached = cols <= UNROLL * 32 * per
    local p = K.program("attention", SRC, x.dtype, instantiate)
    local blocks = math.min((rows + THREADS // 32 - 1) // (THREADS // 32), LIMITS.softmax_grid_max)
    K.variant("attention", x.dtype, (cached and "softmax.cached" or "softmax.long") .. (vec and ".packs" or ".scalar"))
    if blocks * (THREADS // 32) < rows then K.variant("attention", x.dtype, "softmax.grid_loop") end
    p[("softmax_rows<%s, %s, %s>"):format(K.ctype[x.dtype], tostring(vec), tostring(cached))]{
      grid = blocks, block = THREADS }(x, rows, cols)
  end

  -- out = F.scaled_dot_product_attention(q, k, v) (no mask, not causal, no dropout, scale
  -- 1/sqrt(D) unless opts.scale): q (..., Lq, D), k (..., Lk, D), v (..., Lk, Dv),
  -- out (..., Lq, Dv), with the same leading dimensions (batch, heads, ...), one dtype.
  function lib.sdpa(q, k, v, out, opts)
    local op = "sdpa"
    opts = opts or {}
    for key in pairs(opts) do
      if key ~= "scale" then K.fail(op, "unknown option '%s' (scale)", tostring(key)) end
    end
    K.check_float(op, q, "q")
    K.check_tensor(op, k, "k")
    K.check_tensor(op, v, "v")
    K.check_tensor(op, out, "out")
    K.check_dtype(op, k, q.dtype, "k")
    K.check_dtype(op, v, q.dtype, "v")
    K.check_dtype(op, out, q.dtype, "out")
    local nd = q:dim()
    if nd < 2 then K.fail(op, "q is %s, (..., L, D) is expected", K.shape_str(q.shape)) end
    if k:dim() ~= nd or v:dim() ~= nd then
      K.fail(op, "q is %s, k is %s and v is %s: they need the same number of dimensions",
        K.shape_str(q.shape), K.shape_str(k.shape), K.shape_str(v.shape))
    end
    local qs = q.shape
    local lq, d = qs[nd - 1], qs[nd]
    local lk, dv = k:size(nd - 1), v:size(nd)
    local want_k, want_v, want_o = {}, {}, {}
    local bh = 1
    for i = 1, nd - 2 do
      want_k[i], want_v[i], want_o[i] = qs[i], qs[i], qs[i]
      bh = bh * qs[i]
    end
    want_k[nd - 1], want_k[nd] = lk, d
    want_v[nd - 1], want_v[nd] = lk, dv
    want_o[nd - 1], want_o[nd] = lq, dv
    K.check_shape(op, k, want_k, "k")
    K.check_shape(op, v, want_v, "v")
    K.check_shape(op, out, want_o, "out")
    local scale = opts.scale or 1 / math.sqrt(d)
    if not K.writes(out) then return out end
    if bh == 0 or lq == 0 or dv == 0 then return out end
    local gemm = cublas.gemm
    local q3, k3 = q:view(bh, lq, d), k:view(bh, lk, d)
    local v3, o3 = v:view(bh, lk, dv), out:view(bh, lq, dv)
    if lk == 0 then -- no keys: an empty softmax times an empty V is a zero sum
      out:fill(0)
      return out
    end
    local per_batch = lq * lk * tensor.dtype_size(q.dtype)
    local chunk = math.max(1, math.min(bh, LIMITS.scores_max_bytes // per_batch))
    if chunk < bh then
      K.variant("attention", q.dtype, "chunks")
      if bh % chunk ~= 0 then K.variant("attention", q.dtype, "chunks.partial") end
    end
    local scores = K.empty({ chunk, lq, lk }, q.dtype)
    for b0 = 1, bh, chunk do
      local nb = math.min(chunk, bh - b0 + 1)
      local s3 = nb == chunk and scores or scores:narrow(1, 1, nb)
      local qc = nb == bh and q3 or q3:narrow(1, b0, nb)
      local kc = nb == bh and k3 or k3:narrow(1, b0, nb)
      local vc = nb == bh and v3 or v3:narrow(1, b0, nb)
      local oc = nb == bh and o3 or o3:narrow(1, b0, nb)
      gemm(s3, qc, kc, { trans_b = true, alpha = scale })
      softmax_inplace(s3, nb * lq, lk)
      gemm(oc, s3, vc)
    end
    scores:free()
    return out
  end
end

-- the size-selected paths (kreach.ops' header)
local VARIANTS = {
  { name = "softmax.cached.packs", when = "scores rows of at most 4 * 32 packs, whole packs: a row kept in registers" },
  { name = "softmax.cached.scalar", when = "scores rows of at most 4 * 32 elements that are not a multiple of the pack" },
  { name = "softmax.long.packs", when = "scores rows longer than 4 * 32 packs: an online maximum and sum, then a second pass" },
  { name = "softmax.long.scalar", when = "scores rows longer than 4 * 32 elements that are not a multiple of the pack" },
  { name = "softmax.grid_loop", when = "more score rows than one launch's warps (limit softmax_grid_max): a warp takes several" },
  { name = "chunks", when = "scores of the whole batch above 2 GiB (limit scores_max_bytes): the batch in chunks" },
  { name = "chunks.partial", when = "chunks with a last chunk smaller than the others (narrowed views)" },
}

return {
  install = install, variants = VARIANTS, limits = LIMITS,
  sources = { { name = "attention", source = SRC, instantiate = instantiate } },
}
