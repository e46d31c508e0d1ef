-- kreach.ops.interaction: DLRM's "dot" feature interaction (facebookresearch/dlrm's
-- interact_features): the dense feature x [B, D] and the F - 1 embeddings emb [B, F - 1, D]
-- stacked as T = [x; emb] [B, F, D], their pairwise dot products Z = T T^T, and the output
-- out = [x, Z[i, j] for i > j in row-major order (dlrm's li, lj)]: [B, D + F (F - 1) / 2].
--
-- One block a sample: T is staged in shared memory (F rows of D, padded by one element so that
-- the threads of a warp, each on another pair, read different banks; at most 48 KB), each thread computes
-- whole dot products (a pair at a time, accumulating in fp32, fp64 for the oracle, in the order
-- of d), and the block copies x into the first D columns. A 27 x 128 sample (DLRM on Criteo
-- Terabyte) is 351 dots of 128 terms. dot_interaction_backward is its gradient for x and emb.
local SRC = [==[
#define DI_THREADS 256

template <typename T>
__global__ void __launch_bounds__(DI_THREADS)
dot_interaction(const T *__restrict__ x, const T *__restrict__ emb, T *__restrict__ out, i64 B, int F, int D) {
  typedef typename Acc<T>::type A;
  extern __shared__ unsigned char di_smem[];
  A *t = reinterpret_cast<A *>(di_smem); /* F rows of D, D + 1 apart (no bank conflicts between rows) */
  const int LD = D + 1;
  const i64 ldo = (i64)D + (i64)F * (F - 1) / 2;
  const int pairs = F * (F - 1) / 2;
  for (i64 b = blockIdx.x; b < B; b += gridDim.x) {
    __syncthreads(); /* the previous sample's dots are done with t */
    for (int e = threadIdx.x; e < F * D; e += DI_THREADS) {
      const int f = e / D, d = e % D;
      const T v = f == 0 ? x[b * D + d] : emb[(b * (F - 1) + (f - 1)) * D + d];
      t[f * LD + d] = ld(v);
      if (f == 0) out[b * ldo + d] = v;
    }
    __syncthreads();
    for (int p = threadIdx.x; p < pairs; p += DI_THREADS) {
      /* p -> (i, j), i > j: row i starts at i (i - 1) / 2 */
      int i = (int)((1.0 + sqrt(1.0 + 8.0 * p)) / 2.0);
      while (i * (i - 1) / 2 > p) i--;
      while ((i + 1) * i / 2 <= p) i++;
      const int j = p - i * (i - 1) / 2;
      A s = (A)0;
      for (int d = 0; d < D; d++) s += t[i * LD + d] * t[j * LD + d];
      out[b * ldo + D + p] = st<T>(s);
    }
  }
}

/* Its gradient: given the output's gradient gout [B, D + F (F - 1) / 2], dT = S T with S the
 * symmetric F x F matrix holding gout's pair p at (i, j) and (j, i) (zero diagonal); dx =
 * gout[:, :D] + dT[0], demb = dT[1:]. One block a sample: T and S in shared memory, a thread an
 * element of dT (F terms, in the order of k). */
template <typename T>
__global__ void __launch_bounds__(DI_THREADS)
dot_interaction_backward(const T *__restrict__ x, const T *__restrict__ emb, const T *__restrict__ gout,
                         T *__restrict__ dx, T *__restrict__ demb, i64 B, int F, int D) {
  typedef typename Acc<T>::type A;
  extern __shared__ unsigned char di_smem[];
  const int LD = D + 1;
  A *t = reinterpret_cast<A *>(di_smem); /* F rows of D, D + 1 apart */
  A *S = t + F * LD;                     /* F x F */
  const i64 ldo = (i64)D + (i64)F * (F - 1) / 2;
  for (i64 b = blockIdx.x; b < B; b += gridDim.x) {
    __syncthreads();
    for (int e = threadIdx.x; e < F * D; e += DI_THREADS) {
      const int f = e / D, d = e % D;
      t[f * LD + d] = ld(f == 0 ? x[b * D + d] : emb[(b * (F - 1) + (f - 1)) * D + d]);
    }
    for (int e = threadIdx.x; e < F * F; e += DI_THREADS) {
      const int i = e / F, j = e % F;
      const int hi = i > j ? i : j, lo = i > j ? j : i;
      S[e] = i == j ? (A)0 : ld(gout[b * ldo + D + hi * (hi - 1) / 2 + lo]);
    }
    __syncthreads();
    for (int e = threadIdx.x; e < F * D; e += DI_THREADS) {
      const int f = e / D, d = e % D;
      A s = f == 0 ? ld(gout[b * ldo + d]) : (A)0;
      for (int k = 0; k < F; k++) s += S[f * F + k] * t[k * LD + d];
      if (f == 0) dx[b * D + d] = st<T>(s);
      else demb[(b * (F - 1) + (f - 1)) * D + d] = st<T>(s);
    }
  }
}
]==]

local THREADS = 256

local function instantiate(T)
  return { ("dot_interaction<%s>"):format(T), ("dot_interaction_backward<%s>"):format(T) }
end

local M = {}
M.SOURCE = SRC
M.THREADS = THREADS
-- the largest shared memory a block asks for without opting in
M.MAX_SHARED = 48 * 1024
-- the caps a test may lower (kreach.ops.with_limits): blocks of a launch (a block loops over
-- the samples beyond them)
M.limits = { grid_max = 1 << 20 }
-- the size-selected paths (kreach.ops' header)
M.variants = {
  { name = "forward", when = "dot_interaction: a block a sample" },
  { name = "forward.elems_loop", when = "dot_interaction with more than 256 elements a sample (F * D): several a thread when staging" },
  { name = "forward.pairs_loop", when = "dot_interaction with more than 256 pairs (F >= 24): several dot products a thread" },
  { name = "backward", when = "dot_interaction_backward: a block a sample" },
  { name = "backward.elems_loop", when = "dot_interaction_backward with more than 256 elements a sample (F * D)" },
  { name = "backward.square_loop", when = "dot_interaction_backward with F * F above 256 (F >= 17): several entries of S a thread" },
  { name = "forward.samples_loop", when = "dot_interaction over more samples than one launch's blocks (limit grid_max): a block takes several" },
  { name = "backward.samples_loop", when = "dot_interaction_backward over more samples than one launch's blocks (limit grid_max)" },
}

local ACC_BYTES = { f64 = 8, f32 = 4, f16 = 4, bf16 = 4 }

-- plan(dtype, B, F, D) -> { kernel, grid, block, shared } or nil and why (a sample too large
-- for shared memory)
function M.plan(dtype, ctype, B, F, D, backward)
  local shared = (F * (D + 1) + (backward and F * F or 0)) * ACC_BYTES[dtype]
  if shared > M.MAX_SHARED then
    return nil, ("a sample of %d x %d is %d bytes of shared memory at %s (at most %d)"):format(F, D, shared, dtype, M.MAX_SHARED)
  end
  local grid = math.max(1, math.min(B, M.limits.grid_max))
  local kind = backward and "backward" or "forward"
  local variants = { kind }
  if F * D > THREADS then variants[#variants + 1] = kind .. ".elems_loop" end
  if not backward and F * (F - 1) // 2 > THREADS then variants[#variants + 1] = "forward.pairs_loop" end
  if backward and F * F > THREADS then variants[#variants + 1] = "backward.square_loop" end
  if grid < B then variants[#variants + 1] = kind .. ".samples_loop" end
  return { kernel = ("dot_interaction%s<%s>"):format(backward and "_backward" or "", ctype), grid = grid, block = THREADS,
           shared = shared, variants = variants }
end

local function install(lib, K)
  local OP = "dot_interaction"
  -- dot_interaction(x, emb, out): x [B, D], emb [B, F - 1, D], out [B, D + F (F - 1) / 2], one
  -- floating dtype: out = cat([x, (T T^T)[:, li, lj]], 1) with T = cat([x[:, None], emb], 1).
  function lib.dot_interaction(x, emb, out)
    K.check_float(OP, x, "x")
    K.check_tensor(OP, emb, "emb")
    K.check_tensor(OP, out, "out")
    if x:dim() ~= 2 then K.fail(OP, "x is %s, [B, D] is needed", K.shape_str(x.shape)) end
    local B, D = x:size(1), x:size(2)
    if emb:dim() ~= 3 or emb:size(1) ~= B or emb:size(3) ~= D then
      K.fail(OP, "emb is %s, expected [%d, F - 1, %d]", K.shape_str(emb.shape), B, D)
    end
    local F = emb:size(2) + 1
    K.check_dtype(OP, emb, x.dtype, "emb")
    K.check_shape(OP, out, { B, D + F * (F - 1) // 2 }, "out")
    K.check_dtype(OP, out, x.dtype, "out")
    local pl, why = M.plan(x.dtype, K.ctype[x.dtype], B, F, D)
    if not pl then K.fail(OP, "%s", why) end
    if not K.writes(out) then return out end
    if B == 0 then return out end
    K.variant("interaction", x.dtype, table.unpack(pl.variants))
    local k = K.program("interaction", SRC, x.dtype, instantiate)[pl.kernel]
    k{ grid = pl.grid, block = pl.block, shared = pl.shared }(x, emb, out, B, F, D)
    return out
  end

  -- dot_interaction_backward(x, emb, gout, dx, demb): the gradients of dot_interaction's output
  -- for x and emb, given the output's gradient gout [B, D + F (F - 1) / 2] (what autograd gives).
  function lib.dot_interaction_backward(x, emb, gout, dx, demb)
    local op = "dot_interaction_backward"
    K.check_float(op, x, "x")
    for _, c in ipairs({ { emb, "emb" }, { gout, "gout" }, { dx, "dx" }, { demb, "demb" } }) do
      K.check_tensor(op, c[1], c[2])
      K.check_dtype(op, c[1], x.dtype, c[2])
    end
    if x:dim() ~= 2 then K.fail(op, "x is %s, [B, D] is needed", K.shape_str(x.shape)) end
    local B, D = x:size(1), x:size(2)
    if emb:dim() ~= 3 or emb:size(1) ~= B or emb:size(3) ~= D then
      K.fail(op, "emb is %s, expected [%d, F - 1, %d]", K.shape_str(emb.shape), B, D)
    end
    local F = emb:size(2) + 1
    K.check_shape(op, gout, { B, D + F * (F - 1) // 2 }, "gout")
    K.check_same(op, x, dx, "x", "dx")
    K.check_same(op, emb, demb, "emb", "demb")
    local pl, why = M.plan(x.dtype, K.ctype[x.dtype], B, F, D, true)
    if not pl then K.fail(op, "%s", why) end
    if not K.writes(dx, demb) then return dx end
    if B == 0 then return dx end
    K.variant("interaction", x.dtype, table.unpack(pl.variants))
    local k = K.program("interaction", SRC, x.dtype, instantiate)[pl.kernel]
    k{ grid = pl.grid, block = pl.block, shared = pl.shared }(x, emb, gout, dx, demb, B, F, D)
    return dx
  end
end

M.install = install
M.sources = { { name = "interaction", source = SRC, instantiate = instantiate } }
return M
