-- kreach.ops.embedding: embedding bags, torch.nn.functional.embedding_bag (mode "sum" or
-- "mean", per_sample_weights with "sum"), the lookups of a recommender's sparse features
-- (DLRM-Bench, problems/dlrm-bench); and zipf_rows, the heavy-tailed rows its problems' index
-- inputs are also drawn from.
--
-- out[b, col : col + D] = reduce over j in [offsets[b], offsets[b + 1]) of w_j * weight[indices[j], :]
-- with w_j = per_sample_weights[j] or 1, the sum or its mean over the bag (an empty bag gives
-- zeros, as PyTorch's). Without offsets every bag is one index (torch.nn.functional.embedding).
--
-- One warp a bag. A row of D elements is G lanes wide (16-byte packs when D and the pointers
-- allow, else single elements; G the power of two that covers the row, at most 32), so a warp
-- gathers 32 / G rows of the bag at once; the groups' partial sums meet by shuffles at the end
-- and the first group writes. Sums accumulate in fp32 (fp64 for the f64 oracle), in an order
-- that is not PyTorch's sequential one: the tolerance of a bag of n rows is that of an n-term
-- fp32 sum. Indices are read as they are: the problems draw them inside each table (an index
-- outside [0, rows) is the caller's error, as it is PyTorch's).

local SRC = [==[
#define EB_THREADS 256

template <typename T, int V> struct Vec { T v[V]; };

/* V elements of T from p (16-byte aligned when V > 1), as the accumulator type */
template <typename T, int V> __device__ __forceinline__ void eb_load(const T *p, typename Acc<T>::type *a) {
  if (V > 1) {
    Pack<T> pk = *reinterpret_cast<const Pack<T> *>(p);
#pragma unroll
    for (int e = 0; e < V; e++) a[e] = ld(pk.v[e]);
  } else {
    a[0] = ld(p[0]);
  }
}
template <typename T, int V> __device__ __forceinline__ void eb_store(T *p, const typename Acc<T>::type *a) {
  if (V > 1) {
    Pack<T> pk;
#pragma unroll
    for (int e = 0; e < V; e++) pk.v[e] = st<T>(a[e]);
    *reinterpret_cast<Pack<T> *>(p) = pk;
  } else {
    p[0] = st<T>(a[0]);
  }
}

/* MEAN: divide by the bag's size. WEIGHTED: scale row j by psw[j]. OFFSETS: bag b is
 * indices[offsets[b] .. offsets[b + 1]), else indices[b] alone. V: elements a lane loads at once
 * (Pack<T>::N, or 1). out rows are ldo elements apart; the bag's D columns start at col. */
template <typename T, int V, bool MEAN, bool WEIGHTED, bool OFFSETS>
__global__ void __launch_bounds__(EB_THREADS)
embedding_bag(const T *__restrict__ weight, const i64 *__restrict__ indices,
              const i64 *__restrict__ offsets, const T *__restrict__ psw, T *__restrict__ out,
              i64 bags, i64 D, i64 ldo, i64 col, int G) {
  typedef typename Acc<T>::type A;
  const int lane = threadIdx.x & 31;
  const int groups = 32 / G, grp = lane / G, sub = lane % G;
  const i64 npk = D / V;
  const i64 warps = (i64)gridDim.x * (EB_THREADS / 32);
  for (i64 b = (i64)blockIdx.x * (EB_THREADS / 32) + (threadIdx.x >> 5); b < bags; b += warps) {
    const i64 s = OFFSETS ? offsets[b] : b, e = OFFSETS ? offsets[b + 1] : b + 1;
    for (i64 p0 = 0; p0 < npk; p0 += G) {
      const i64 p = p0 + sub;
      const bool active = p < npk;
      A acc[V];
#pragma unroll
      for (int k = 0; k < V; k++) acc[k] = (A)0;
      for (i64 j = s + grp; j < e; j += groups) {
        const i64 row = indices[j];
        const A wj = WEIGHTED ? ld(psw[j]) : (A)1;
        if (active) {
          A v[V];
          eb_load<T, V>(weight + row * D + p * V, v);
#pragma unroll
          for (int k = 0; k < V; k++) acc[k] += WEIGHTED ? wj * v[k] : v[k];
        }
      }
      /* the groups' partial sums: lanes sub, sub + G, sub + 2G, ... */
      for (int o = G; o < 32; o <<= 1) {
#pragma unroll
        for (int k = 0; k < V; k++) acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], o);
      }
      if (grp == 0 && active) {
        if (MEAN) {
          const i64 n = e - s;
#pragma unroll
          for (int k = 0; k < V; k++) acc[k] = n > 0 ? acc[k] / (A)n : (A)0;
        }
        eb_store<T, V>(out + b * ldo + col + p * V, acc);
      }
    }
  }
}

/* Zipf-like rows (experiments/workloads/dlrm.py's make_indices): from u in [0, 1), the inverse CDF
 * of p(x) ~ x^-alpha on [1, n + 1), floored to a rank (0 the most frequent), then spread over the
 * table by the bijection rank -> rank * 2654435761 mod n (a prime above every table's size), so
 * the hot rows are not the first ones. T is unused (the family compiles per dtype). */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS)
zipf_rows(const double *__restrict__ u, i64 *__restrict__ out, i64 count, i64 n, double alpha) {
  for (i64 i = (i64)blockIdx.x * EB_THREADS + threadIdx.x; i < count; i += (i64)gridDim.x * EB_THREADS) {
    double x;
    if (fabs(alpha - 1.0) < 1e-9) {
      x = exp(u[i] * log(n + 1.0));
    } else {
      const double a = 1.0 - alpha;
      x = pow(1.0 + u[i] * (pow(n + 1.0, a) - 1.0), 1.0 / a);
    }
    i64 r = (i64)floor(x) - 1;
    r = r < 0 ? 0 : r >= n ? n - 1 : r;
    out[i] = (i64)(((unsigned long long)r * 2654435761ull) % (unsigned long long)n);
  }
}

/* Row-wise Adagrad on distinct touched rows (FBGEMM's ROWWISE_ADAGRAD), one warp a touched row u
 * of table row r = ids[u]: state' = state[r] + mean(g^2), row' = table[r] - lr / (sqrt(state') +
 * eps) * g, written to new_rows[u] and new_state[u]. */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS)
rowwise_adagrad(const T *__restrict__ table, const T *__restrict__ state, const i64 *__restrict__ ids,
                const T *__restrict__ grad, T *__restrict__ new_rows, T *__restrict__ new_state, i64 touched,
                i64 D, double lr, double eps) {
  typedef typename Acc<T>::type A;
  const int lane = threadIdx.x & 31;
  const i64 warps = (i64)gridDim.x * (EB_THREADS / 32);
  for (i64 u = (i64)blockIdx.x * (EB_THREADS / 32) + (threadIdx.x >> 5); u < touched; u += warps) {
    const i64 r = ids[u];
    const T *g = grad + u * D;
    A sq = (A)0;
    for (i64 d = lane; d < D; d += 32) { const A v = ld(g[d]); sq += v * v; }
    sq = warp_sum(sq);
    const A st2 = ld(state[r]) + sq / (A)D;
    const A mult = (A)lr / (ksqrt(st2) + (A)eps);
    for (i64 d = lane; d < D; d += 32) new_rows[u * D + d] = st<T>(ld(table[r * D + d]) - mult * ld(g[d]));
    if (lane == 0) new_state[u] = st<T>(st2);
  }
}

/* ---- embedding_bag_backward: a counting sort of the touched rows, then atomic sums ---- */
#define EB_SCAN_ITEMS 8
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_fill_i64(i64 *__restrict__ p, i64 n, i64 v) {
  for (i64 i = (i64)blockIdx.x * EB_THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * EB_THREADS) p[i] = v;
}
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_zero_acc(void *__restrict__ acc, i64 n) {
  typename Acc<T>::type *__restrict__ p = (typename Acc<T>::type *)acc;
  for (i64 i = (i64)blockIdx.x * EB_THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * EB_THREADS) p[i] = 0;
}
/* mark[idx[j]] = 1 for every lookup (mark zeroed first) */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_mark(const i64 *__restrict__ idx, i64 L, i64 *__restrict__ mark) {
  for (i64 j = (i64)blockIdx.x * EB_THREADS + threadIdx.x; j < L; j += (i64)gridDim.x * EB_THREADS) mark[idx[j]] = 1;
}
/* exclusive scan of a block's EB_THREADS * EB_SCAN_ITEMS elements of v (in place); the block's
 * total to sums[blockIdx.x] */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_scan_blocks(i64 *__restrict__ v, i64 n, i64 *__restrict__ sums) {
  __shared__ i64 warp_tot[EB_THREADS / 32];
  const i64 base = (i64)blockIdx.x * EB_THREADS * EB_SCAN_ITEMS + (i64)threadIdx.x * EB_SCAN_ITEMS;
  i64 x[EB_SCAN_ITEMS], s = 0;
  for (int k = 0; k < EB_SCAN_ITEMS; k++) { x[k] = base + k < n ? v[base + k] : 0; s += x[k]; }
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  i64 inc = s; /* inclusive scan over the warp */
  for (int o = 1; o < 32; o <<= 1) { const i64 u = __shfl_up_sync(0xffffffffu, inc, o); if (lane >= o) inc += u; }
  if (lane == 31) warp_tot[w] = inc;
  __syncthreads();
  i64 before = 0, total = 0;
  for (int k = 0; k < EB_THREADS / 32; k++) { if (k < w) before += warp_tot[k]; total += warp_tot[k]; }
  i64 run = before + inc - s;
  for (int k = 0; k < EB_SCAN_ITEMS; k++) { if (base + k < n) v[base + k] = run; run += x[k]; }
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}
/* the blocks' totals scanned (exclusive, one block, in passes), the grand total to *count */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_scan_sums(i64 *__restrict__ sums, i64 nb, i64 *__restrict__ count) {
  if (threadIdx.x != 0) return;
  i64 run = 0;
  for (i64 i = 0; i < nb; i++) { const i64 t = sums[i]; sums[i] = run; run += t; }
  *count = run;
}
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_scan_add(i64 *__restrict__ v, i64 n, const i64 *__restrict__ sums) {
  for (i64 i = (i64)blockIdx.x * EB_THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * EB_THREADS)
    v[i] += sums[i / (EB_THREADS * EB_SCAN_ITEMS)];
}
/* mark holds each row's 0/1 and pos its exclusive scan: the touched rows in ascending order */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_unique(const i64 *__restrict__ idx, i64 L, const i64 *__restrict__ pos,
                                                          i64 *__restrict__ uniq) {
  for (i64 j = (i64)blockIdx.x * EB_THREADS + threadIdx.x; j < L; j += (i64)gridDim.x * EB_THREADS) uniq[pos[idx[j]]] = idx[j];
}
/* acc[pos[idx[j]], :] += grad_out[b, :] for every lookup j of bag b: a warp a bag */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_accumulate(const i64 *__restrict__ idx, const i64 *__restrict__ offsets,
    const T *__restrict__ gout, const i64 *__restrict__ pos, void *__restrict__ acc_, i64 bags, i64 D) {
  typedef typename Acc<T>::type A;
  A *__restrict__ acc = (A *)acc_;
  const int lane = threadIdx.x & 31;
  const i64 warps = (i64)gridDim.x * (EB_THREADS / 32);
  for (i64 b = (i64)blockIdx.x * (EB_THREADS / 32) + (threadIdx.x >> 5); b < bags; b += warps)
    for (i64 j = offsets[b]; j < offsets[b + 1]; j++) {
      const i64 slot = pos[idx[j]];
      for (i64 d = lane; d < D; d += 32) atomicAdd(&acc[slot * D + d], ld(gout[b * D + d]));
    }
}
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_store(const void *__restrict__ acc_, T *__restrict__ out, i64 n) {
  const typename Acc<T>::type *__restrict__ acc = (const typename Acc<T>::type *)acc_;
  for (i64 i = (i64)blockIdx.x * EB_THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * EB_THREADS) out[i] = st<T>(acc[i]);
}

/* 0, 1, ..., n - 1 (one lookup a bag). T is unused. */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_iota(i64 *__restrict__ p, i64 n) {
  for (i64 i = (i64)blockIdx.x * EB_THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * EB_THREADS) p[i] = i;
}
/* SGD on the touched rows: rows_val[j, :] (the row's summed gradient) becomes
 * table[uniq[j], :] - lr * rows_val[j, :] for j < *count; the padding rows (zeros) stay. */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS) eb_sgd_apply(const T *__restrict__ table, const i64 *__restrict__ uniq,
    T *__restrict__ rows_val, const i64 *__restrict__ count, double lr, i64 L, i64 D) {
  typedef typename Acc<T>::type A;
  const i64 n = (*count < L ? *count : L) * D;
  for (i64 i = (i64)blockIdx.x * EB_THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * EB_THREADS)
    rows_val[i] = st<T>(ld(table[uniq[i / D] * D + i % D]) - (A)lr * ld(rows_val[i]));
}

/* distinct rows of a table of n rows: out[j] = (start + j) * 2654435761 mod n for j < count
 * (count <= n: a bijection of [0, n), so no row repeats), as the unique rows a sparse optimiser
 * updates. T is unused. */
template <typename T>
__global__ void __launch_bounds__(EB_THREADS)
unique_rows(i64 *__restrict__ out, i64 count, i64 n, i64 start) {
  for (i64 j = (i64)blockIdx.x * EB_THREADS + threadIdx.x; j < count; j += (i64)gridDim.x * EB_THREADS)
    out[j] = (i64)((((unsigned long long)start + (unsigned long long)j) % (unsigned long long)n * 2654435761ull) %
                   (unsigned long long)n);
}
]==]

local THREADS = 256
local WARPS = THREADS // 32
-- the caps a test may lower (kreach.ops.with_limits): blocks of a launch of the operators'
-- grid-stride kernels (zipf_rows and unique_rows, which draw inputs, keep theirs)
local LIMITS = { grid_max = 1 << 20 }

local function b(v) return v and "true" or "false" end

local function kernel_name(T, V, mean, weighted, offsets)
  return ("embedding_bag<%s, %d, %s, %s, %s>"):format(T, V, b(mean), b(weighted), b(offsets))
end

-- elements in a 16-byte pack of each dtype (cuda.lua's Pack<T>::N)
local PACK = { f64 = 2, f32 = 4, f16 = 8, bf16 = 8 }

local function instantiate(T, dtype)
  local inst = { ("zipf_rows<%s>"):format(T), ("unique_rows<%s>"):format(T), ("rowwise_adagrad<%s>"):format(T) }
  for _, k in ipairs({ "eb_fill_i64", "eb_zero_acc", "eb_mark", "eb_scan_blocks", "eb_scan_sums", "eb_scan_add", "eb_unique",
                       "eb_accumulate", "eb_store", "eb_iota", "eb_sgd_apply" }) do
    inst[#inst + 1] = ("%s<%s>"):format(k, T)
  end
  for _, V in ipairs({ PACK[dtype] or 1, 1 }) do
    for _, mean in ipairs({ false, true }) do
      for _, weighted in ipairs({ false, true }) do
        if not (mean and weighted) then
          for _, offsets in ipairs({ true, false }) do inst[#inst + 1] = kernel_name(T, V, mean, weighted, offsets) end
        end
      end
    end
  end
  return inst
end

-- The lanes a row spans: the smallest power of two covering its packs, at most 32.
local function lanes(npk)
  local g = 1
  while g < npk and g < 32 do g = g * 2 end
  return g
end

local M = {}
M.lanes = lanes
M.PACK = PACK
M.THREADS = THREADS
M.limits = LIMITS
-- the size-selected paths (kreach.ops' header)
M.variants = {
  { name = "bag.packs", when = "embedding_bag with D, the output's width and column multiples of the pack: 16-byte loads" },
  { name = "bag.scalar", when = "embedding_bag with D (or the output's width or column) not a multiple of the pack: element by element" },
  { name = "bag.groups", when = "embedding_bag with rows of at most 16 packs: several rows of a bag at once in a warp, their sums met by shuffles" },
  { name = "bag.full_warp", when = "embedding_bag with rows of 17 packs or more: the warp's 32 lanes across one row" },
  { name = "bag.wide", when = "embedding_bag with rows longer than 32 packs (or elements): several passes over a row" },
  { name = "bag.grid_loop", when = "more bags than one launch's warps (limit grid_max): a warp takes several" },
  { name = "adagrad", when = "rowwise_adagrad: a warp a touched row" },
  { name = "adagrad.long", when = "rowwise_adagrad with rows longer than 32: several elements a lane" },
  { name = "adagrad.grid_loop", when = "rowwise_adagrad over more rows than one launch's warps (limit grid_max)" },
  { name = "backward", when = "embedding_bag_backward: a counting sort of the touched rows, then atomic sums" },
  { name = "backward.scan_blocks", when = "embedding_bag_backward over a table of more than 2048 rows: the marks scanned in several blocks" },
  { name = "backward.long", when = "embedding_bag_backward with rows longer than 32: several elements a lane in eb_accumulate" },
  { name = "backward.grid_loop", when = "embedding_bag_backward with more work than one launch's blocks (limit grid_max)" },
  { name = "sgd", when = "sparse_sgd: embedding_bag_backward, then the update of the touched rows" },
  { name = "sgd.grid_loop", when = "sparse_sgd with more lookups or elements than one launch's blocks (limit grid_max)" },
}

-- plan{ dtype, D, ldo, col, aligned, mode, weighted, offsets, bags } -> the launch of one call:
-- { kernel = name, grid, block, V, G }. aligned: weight and out are 16-byte aligned.
-- variants: the paths it takes (M.variants).
function M.plan(o)
  local V = PACK[o.dtype] or 1
  if o.D % V ~= 0 or o.ldo % V ~= 0 or o.col % V ~= 0 or not o.aligned then V = 1 end
  local G = lanes(o.D // V)
  local grid = math.min((o.bags + WARPS - 1) // WARPS, LIMITS.grid_max)
  local variants = { V > 1 and "bag.packs" or "bag.scalar", G < 32 and "bag.groups" or "bag.full_warp" }
  if o.D // V > 32 then variants[#variants + 1] = "bag.wide" end
  if grid * WARPS < o.bags then variants[#variants + 1] = "bag.grid_loop" end
  return { kernel = kernel_name(o.ctype, V, o.mode == "mean", o.weighted, o.offsets), V = V, G = G,
           grid = grid, block = THREADS, variants = variants }
end

local MODES = { sum = true, mean = true }

-- embedding_bag
local function install_bag(lib, K)
  local OP = "embedding_bag"
  -- embedding_bag(weight, indices, offsets, out [, opts]): out = embedding_bag(indices, weight,
  -- offsets, mode = opts.mode or "sum", per_sample_weights = opts.per_sample_weights), written
  -- into out[:, opts.col : opts.col + D] (col default 0; out is [bags, W] with W >= col + D).
  -- weight [rows, D] floating; indices 1-D i64; offsets 1-D i64 of bags + 1 entries (CSR,
  -- offsets[1] = 0 and the last = #indices, as include_last_offset = True), or nil for one index
  -- a bag. The offsets are trusted to be non-decreasing and the indices to be rows of weight:
  -- the problems draw them so.
  function lib.embedding_bag(weight, indices, offsets, out, opts)
    opts = opts or {}
    for k in pairs(opts) do
      if k ~= "mode" and k ~= "per_sample_weights" and k ~= "col" then K.fail(OP, "unknown option '%s'", tostring(k)) end
    end
    local mode = opts.mode or "sum"
    if not MODES[mode] then K.fail(OP, "mode '%s': 'sum' or 'mean'", tostring(mode)) end
    K.check_float(OP, weight, "weight")
    if weight:dim() ~= 2 then K.fail(OP, "weight is %s, a 2-D [rows, D] table is needed", K.shape_str(weight.shape)) end
    K.check_tensor(OP, indices, "indices")
    K.check_dtype(OP, indices, "i64", "indices")
    if indices:dim() ~= 1 then K.fail(OP, "indices is %s, 1-D is needed", K.shape_str(indices.shape)) end
    local n = indices:size(1)
    local bags = n
    if offsets ~= nil then
      K.check_tensor(OP, offsets, "offsets")
      K.check_dtype(OP, offsets, "i64", "offsets")
      if offsets:dim() ~= 1 or offsets:size(1) < 1 then
        K.fail(OP, "offsets is %s, 1-D with bags + 1 entries is needed", K.shape_str(offsets.shape))
      end
      bags = offsets:size(1) - 1
    end
    local psw = opts.per_sample_weights
    if psw ~= nil then
      if mode ~= "sum" then K.fail(OP, "per_sample_weights needs mode 'sum' (PyTorch's rule), not '%s'", mode) end
      K.check_tensor(OP, psw, "per_sample_weights")
      K.check_shape(OP, psw, { n }, "per_sample_weights")
      K.check_dtype(OP, psw, weight.dtype, "per_sample_weights")
    end
    K.check_tensor(OP, out, "out")
    K.check_dtype(OP, out, weight.dtype, "out")
    local D = weight:size(2)
    local col = opts.col or 0
    if math.type(col) ~= "integer" or col < 0 then K.fail(OP, "col is %s, a non-negative integer is needed", tostring(col)) end
    if out:dim() ~= 2 or out:size(1) ~= bags or out:size(2) < col + D then
      K.fail(OP, "out is %s, expected [%d, >= %d] (%d bags, columns %d to %d)", K.shape_str(out.shape), bags, col + D,
        bags, col, col + D - 1)
    end
    if not K.writes(out) then return out end
    if bags == 0 or D == 0 then return out end
    local ldo = out:size(2)
    local pl = M.plan{ dtype = weight.dtype, ctype = K.ctype[weight.dtype], D = D, ldo = ldo, col = col,
                       aligned = K.aligned(weight, 16) and K.aligned(out, 16), mode = mode, weighted = psw ~= nil,
                       offsets = offsets ~= nil, bags = bags }
    K.variant("embedding", weight.dtype, table.unpack(pl.variants))
    local k = K.program("embedding", SRC, weight.dtype, instantiate)[pl.kernel]
    k{ grid = pl.grid, block = pl.block }(weight, indices, offsets or indices, psw or weight, out, bags, D, ldo, col, pl.G)
    return out
  end
end

-- rowwise_adagrad
local function install_adagrad(lib, K)
  -- rowwise_adagrad(table, state, ids, grad, lr, eps, new_rows, new_state): row-wise Adagrad on
  -- the distinct rows ids (i64 [touched]) of table [rows, D] with states state [rows]: new_state[u]
  -- = state[ids[u]] + mean(grad[u]^2), new_rows[u] = table[ids[u]] - lr / (sqrt(new_state[u]) +
  -- eps) * grad[u]. The ids are trusted to be distinct rows of the table (unique_rows draws them).
  function lib.rowwise_adagrad(table, state, ids, grad, lr, eps, new_rows, new_state)
    local op = "rowwise_adagrad"
    K.check_float(op, table, "table")
    if table:dim() ~= 2 then K.fail(op, "table is %s, [rows, D] is needed", K.shape_str(table.shape)) end
    local rows, D = table:size(1), table:size(2)
    K.check_tensor(op, ids, "ids")
    K.check_dtype(op, ids, "i64", "ids")
    if ids:dim() ~= 1 then K.fail(op, "ids is %s, 1-D is needed", K.shape_str(ids.shape)) end
    local touched = ids:size(1)
    for _, c in ipairs({ { state, { rows }, "state" }, { grad, { touched, D }, "grad" }, { new_rows, { touched, D }, "new_rows" },
                         { new_state, { touched }, "new_state" } }) do
      K.check_tensor(op, c[1], c[3])
      K.check_shape(op, c[1], c[2], c[3])
      K.check_dtype(op, c[1], table.dtype, c[3])
    end
    if type(lr) ~= "number" or type(eps) ~= "number" then K.fail(op, "lr and eps are numbers") end
    if not K.writes(new_rows, new_state) then return new_rows end
    if touched == 0 then return new_rows end
    local k = K.program("embedding", SRC, table.dtype, instantiate)[("rowwise_adagrad<%s>"):format(K.ctype[table.dtype])]
    local grid = math.min((touched + WARPS - 1) // WARPS, LIMITS.grid_max)
    K.variant("embedding", table.dtype, "adagrad")
    if D > 32 then K.variant("embedding", table.dtype, "adagrad.long") end
    if grid * WARPS < touched then K.variant("embedding", table.dtype, "adagrad.grid_loop") end
    k{ grid = grid, block = THREADS }(table, state, ids, grad, new_rows, new_state,
      touched, D, lr + 0.0, eps + 0.0)
    return new_rows
  end
end

-- the gradient of a table from a sparse one: embedding_bag_backward
local function install_backward(lib, K)
  -- embedding_bag_backward(indices, offsets, grad_out, rows, uniq, grads, count): the gradient
  -- of embedding_bag(sum)'s table, aggregated per touched row: the touched rows in ascending
  -- order in uniq (i64 [L], the rest -1), their summed gradients in grads ([L, D], the rest 0),
  -- and how many in count (i64 [1]). indices (i64 [L]) are rows of a table of `rows` rows; offsets
  -- (i64 [bags + 1]) CSR; grad_out [bags, D] the gradient of the bags' sums. A counting sort:
  -- the touched rows marked in a [rows] scratch, scanned into their ranks, then each lookup's
  -- gradient added to its rank's row (fp32 atomics; fp64 for the oracle), then rounded.
  function lib.embedding_bag_backward(indices, offsets, grad_out, rows, uniq, grads, count)
    local op = "embedding_bag_backward"
    for _, c in ipairs({ { indices, "indices" }, { offsets, "offsets" }, { uniq, "uniq" }, { count, "count" } }) do
      K.check_tensor(op, c[1], c[2])
      K.check_dtype(op, c[1], "i64", c[2])
    end
    K.check_float(op, grad_out, "grad_out")
    if math.type(rows) ~= "integer" or rows < 1 then K.fail(op, "rows is %s, a whole number >= 1", tostring(rows)) end
    local L, bags = indices:numel(), offsets:numel() - 1
    if grad_out:dim() ~= 2 or grad_out:size(1) ~= bags then
      K.fail(op, "grad_out is %s, expected [%d, D] (one row a bag)", K.shape_str(grad_out.shape), bags)
    end
    local D = grad_out:size(2)
    K.check_shape(op, uniq, { L }, "uniq")
    K.check_shape(op, grads, { L, D }, "grads")
    K.check_dtype(op, grads, grad_out.dtype, "grads")
    K.check_shape(op, count, { 1 }, "count")
    if not K.writes(uniq, grads, count) then return grads end
    local dt = grad_out.dtype
    local p = K.program("embedding", SRC, dt, instantiate)
    local T = K.ctype[dt]
    local function k(name) return p[("%s<%s>"):format(name, T)] end
    local capped = false -- a grid-stride kernel's grid below its work: several items a thread
    local function blocks(n)
      local want = K.blocks(math.max(n, 1), THREADS, 1)
      if want > LIMITS.grid_max then capped = true end
      return math.min(want, LIMITS.grid_max)
    end
    local acc_dt = dt == "f64" and "f64" or "f32"
    local per = THREADS * 8
    local nb = (rows + per - 1) // per
    K.variant("embedding", dt, "backward")
    if nb > 1 then K.variant("embedding", dt, "backward.scan_blocks") end
    if L > 0 and D > 32 then K.variant("embedding", dt, "backward.long") end
    local mark = K.empty({ rows }, "i64")
    local sums = K.empty({ nb }, "i64")
    local acc = acc_dt == dt and grads or K.empty({ L, D }, acc_dt)
    k("eb_fill_i64"){ grid = blocks(rows), block = THREADS }(mark, rows, 0)
    k("eb_fill_i64"){ grid = blocks(L), block = THREADS }(uniq, L, -1)
    k("eb_zero_acc"){ grid = blocks(L * D), block = THREADS }(acc, L * D)
    if L > 0 then k("eb_mark"){ grid = blocks(L), block = THREADS }(indices, L, mark) end
    k("eb_scan_blocks"){ grid = nb, block = THREADS }(mark, rows, sums)
    k("eb_scan_sums"){ grid = 1, block = 32 }(sums, nb, count)
    k("eb_scan_add"){ grid = blocks(rows), block = THREADS }(mark, rows, sums)
    if L > 0 then
      k("eb_unique"){ grid = blocks(L), block = THREADS }(indices, L, mark, uniq)
      local grid = math.min((bags + WARPS - 1) // WARPS, LIMITS.grid_max)
      if grid * WARPS < bags then capped = true end
      k("eb_accumulate"){ grid = grid, block = THREADS }(indices, offsets, grad_out,
        mark, acc, bags, D)
    end
    if acc ~= grads then
      k("eb_store"){ grid = blocks(L * D), block = THREADS }(acc, grads, L * D)
      acc:free()
    end
    if capped then K.variant("embedding", dt, "backward.grid_loop") end
    mark:free()
    sums:free()
    return grads
  end
end

-- SGD's update of a table from a sparse gradient: sparse_sgd
local function install_sgd(lib, K)
  -- sparse_sgd(table, ids, grad, lr, uniq, new_rows, count): SGD's update of an embedding table
  -- from a sparse gradient, table.index_add_(0, ids, grad, alpha = -lr), on the rows it touches:
  -- the touched rows ascending in uniq (i64 [L], the rest -1), their values after the update in
  -- new_rows ([L, D], the rest 0), how many in count (i64 [1]). ids (i64 [L]) are rows of table
  -- [rows, D], with repeats; grad [L, D] is each lookup's gradient. embedding_bag_backward with
  -- one lookup a bag sums each row's gradients (fp32 atomics; fp64 for the oracle), then each
  -- touched row is its table row less lr times that sum.
  function lib.sparse_sgd(table, ids, grad, lr, uniq, new_rows, count)
    local op = "sparse_sgd"
    K.check_float(op, table, "table")
    if table:dim() ~= 2 then K.fail(op, "table is %s, [rows, D] is needed", K.shape_str(table.shape)) end
    K.check_tensor(op, ids, "ids")
    K.check_dtype(op, ids, "i64", "ids")
    if ids:dim() ~= 1 then K.fail(op, "ids is %s, 1-D is needed", K.shape_str(ids.shape)) end
    local L, D = ids:size(1), table:size(2)
    K.check_tensor(op, grad, "grad")
    K.check_shape(op, grad, { L, D }, "grad")
    K.check_dtype(op, grad, table.dtype, "grad")
    K.check_tensor(op, new_rows, "new_rows")
    K.check_shape(op, new_rows, { L, D }, "new_rows")
    K.check_dtype(op, new_rows, table.dtype, "new_rows")
    for _, c in ipairs({ { uniq, { L }, "uniq" }, { count, { 1 }, "count" } }) do
      K.check_tensor(op, c[1], c[3])
      K.check_shape(op, c[1], c[2], c[3])
      K.check_dtype(op, c[1], "i64", c[3])
    end
    if type(lr) ~= "number" then K.fail(op, "lr is a number") end
    if not K.writes(uniq, new_rows, count) then return new_rows end
    local p = K.program("embedding", SRC, table.dtype, instantiate)
    local T = K.ctype[table.dtype]
    local offs = K.empty({ L + 1 }, "i64")
    local g_iota, g_apply = K.blocks(L + 1, THREADS, 1), K.blocks(L * D, THREADS, 1)
    K.variant("embedding", table.dtype, "sgd")
    -- eb_sgd_apply covers the touched rows (their count is known on the device only: at most
    -- L and the table's rows)
    if g_iota > LIMITS.grid_max or (L > 0 and K.blocks(math.min(L, table:size(1)) * D, THREADS, 1) > LIMITS.grid_max) then
      K.variant("embedding", table.dtype, "sgd.grid_loop")
    end
    p[("eb_iota<%s>"):format(T)]{ grid = math.min(g_iota, LIMITS.grid_max), block = THREADS }(offs, L + 1)
    lib.embedding_bag_backward(ids, offs, grad, table:size(1), uniq, new_rows, count)
    if L > 0 then
      p[("eb_sgd_apply<%s>"):format(T)]{ grid = math.min(g_apply, LIMITS.grid_max), block = THREADS }(table, uniq,
        new_rows, count, lr + 0.0, L, D)
    end
    offs:free()
    return new_rows
  end
end

-- the draws of rows: unique_rows, zipf_rows
local function install_rows(lib, K)
  -- unique_rows(out, n, start): out (i64, count <= n elements) = distinct rows of a table of n
  -- rows, (start + j) * 2654435761 mod n for j = 0, 1, ... (a bijection: no row repeats).
  function lib.unique_rows(out, n, start)
    local op = "unique_rows"
    K.check_tensor(op, out, "out")
    K.check_dtype(op, out, "i64", "out")
    local count = out:numel()
    if math.type(n) ~= "integer" or n < 1 or n >= M.HASH_PRIME then
      K.fail(op, "n is %s, an integer in [1, %d) is needed", tostring(n), M.HASH_PRIME)
    end
    if count > n then K.fail(op, "%d distinct rows asked of a table of %d", count, n) end
    if math.type(start) ~= "integer" or start < 0 then K.fail(op, "start is %s, a non-negative integer is needed", tostring(start)) end
    if not K.writes(out) then return out end
    if count == 0 then return out end
    local k = K.program("embedding", SRC, "f64", instantiate)["unique_rows<double>"]
    k{ grid = math.min(K.blocks(count, THREADS, 1), 1 << 20), block = THREADS }(out, count, n, start % n)
    return out
  end

  -- zipf_rows(u, out, n, alpha): out (i64) = Zipf-like rows of a table of n rows from u (f64,
  -- U[0, 1), the same shape): rank floor(x) - 1 for x the power law's inverse CDF at u, spread by
  -- rank * 2654435761 mod n (experiments/workloads/dlrm.py's generator, as real Criteo ids are
  -- heavy-tailed). alpha > 0; 1 is the log-uniform limit.
  function lib.zipf_rows(u, out, n, alpha)
    local op = "zipf_rows"
    K.check_tensor(op, u, "u")
    K.check_dtype(op, u, "f64", "u")
    K.check_tensor(op, out, "out")
    K.check_dtype(op, out, "i64", "out")
    K.check_shape(op, out, u.shape, "out")
    if math.type(n) ~= "integer" or n < 1 or n >= M.HASH_PRIME then
      K.fail(op, "n is %s, an integer in [1, %d) is needed", tostring(n), M.HASH_PRIME)
    end
    if type(alpha) ~= "number" or not (alpha > 0) then K.fail(op, "alpha is %s, a positive number is needed", tostring(alpha)) end
    if not K.writes(out) then return out end
    local count = u:numel()
    if count == 0 then return out end
    local k = K.program("embedding", SRC, "f64", instantiate)["zipf_rows<double>"]
    k{ grid = math.min(K.blocks(count, THREADS, 1), 1 << 20), block = THREADS }(u, out, count, n, alpha + 0.0)
    return out
  end
end

local function install(lib, K)
  install_bag(lib, K)
  install_adagrad(lib, K)
  install_backward(lib, K)
  install_sgd(lib, K)
  install_rows(lib, K)
end

M.HASH_PRIME = 2654435761

-- The rows unique_rows draws, computed here (for the tests and the export's definition).
function M.unique_row(j, n, start) return ((start + j) % n * M.HASH_PRIME) % n end
M.install = install
M.sources = { { name = "embedding", source = SRC, instantiate = instantiate } }
M.SOURCE = SRC
M.kernel_name = kernel_name
return M
