-- kreach.ops.reduce: reductions over one dimension (sum, mean, amax, amin, argmax, argmin).
-- x is viewed as [outer, R, inner] around the reduced dimension. Two kernels cover every case:
--   reduce_mid  (inner > 1): threads run along inner, so each warp reads whole rows of
--               consecutive columns (coalesced whatever inner's alignment), and loop over R;
--               a block's threadIdx.y splits R further and the block merges in shared memory.
--   reduce_row  (inner == 1): a block per row, 16-byte loads over the row's aligned body with
--               its unaligned head and tail peeled.
-- When outer * inner blocks cannot fill the GPU, R is split over several blocks whose states go
-- to a scratch buffer, and reduce_finish merges them in a fixed order (deterministic).
-- Semantics follow PyTorch: NaN propagates through max/min and wins argmax/argmin; among equal
-- values the lowest index wins; mean of an empty dimension is NaN, sum is 0.
local core = require "kreach.core"
local snippets = require "kreach.ops.snippets"
local tensor = require "kreach.core.tensor"

local SRC = [==[
enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN };

/* The running state of a reduction: a value and, for argmax/argmin, the index it came from. */
template <int OP, typename A> struct Red {
  static const bool ARG = OP == R_ARGMAX || OP == R_ARGMIN;
  static const bool UP = OP == R_MAX || OP == R_ARGMAX;
  A v;
  i64 i;
  __device__ __forceinline__ void init() {
    v = (OP == R_SUM || OP == R_MEAN) ? (A)0 : (UP ? -kinf<A>() : kinf<A>());
    i = 0x7fffffffffffffffll;
  }
  /* Folds in value x found at index j (any order: ties go to the lower index). */
  __device__ __forceinline__ void add(A x, i64 j) {
    if (OP == R_SUM || OP == R_MEAN) {
      v += x;
    } else if (!ARG) {
      /* keep v when it is NaN or not beaten; a NaN x is taken */
      if (!(v != v || (UP ? v >= x : v <= x))) v = x;
    } else {
      bool nx = x != x, nv = v != v, take;
      if (nv) take = nx && j < i;
      else if (nx) take = true;
      else if (x == v) take = j < i;
      else take = UP ? x > v : x < v;
      if (take) { v = x; i = j; }
    }
  }
  __device__ __forceinline__ void merge(const Red &o) { add(o.v, o.i); }
};

template <int OP, typename A> __device__ __forceinline__ Red<OP, A> shfl_down(Red<OP, A> s, int o) {
  Red<OP, A> r;
  r.v = __shfl_down_sync(0xffffffffu, s.v, o);
  r.i = Red<OP, A>::ARG ? __shfl_down_sync(0xffffffffu, s.i, o) : s.i;
  return r;
}

]==] .. snippets.BLOCK_MERGE .. [==[

/* U independent states (for parallel chains), merged pairwise into s[0]. */
template <int U, int OP, typename A> __device__ __forceinline__ void merge_all(Red<OP, A> (&s)[U]) {
#pragma unroll
  for (int w = 1; w < U; w *= 2)
#pragma unroll
    for (int u = 0; u + w < U; u += 2 * w) s[u].merge(s[u + w]);
}

/* Writes a final state: the index for arg ops, the value otherwise (mean divides by R). */
template <typename T, int OP, typename A>
__device__ __forceinline__ void put(void *out, i64 k, const Red<OP, A> &s, i64 R) {
  if (Red<OP, A>::ARG) ((i64 *)out)[k] = s.i;
  else if (OP == R_MEAN) ((T *)out)[k] = st<T>(s.v / (A)R);
  else ((T *)out)[k] = st<T>(s.v);
}

/* Writes a block's state: to out when it is the only split, else to partials [split][n_out]. */
template <typename T, int OP, typename A>
__device__ __forceinline__ void put_split(void *out, void *pv, void *pi, i64 k, i64 n_out,
                                          int split, int splits, const Red<OP, A> &s, i64 R) {
  if (splits == 1) { put<T>(out, k, s, R); return; }
  ((A *)pv)[(i64)split * n_out + k] = s.v;
  if (Red<OP, A>::ARG) ((i64 *)pi)[(i64)split * n_out + k] = s.i;
}

/* x as [outer, R, inner], inner > 1. Block (bx, by), bx * by = 256: threadIdx.x is a column of a
 * tile of bx columns, threadIdx.y strides over the rows of the block's chunk of R.
 * blockIdx.x = o * tiles + tile; blockIdx.y = the chunk (chunk rows each). */
template <typename T, int OP>
__global__ void __launch_bounds__(256) reduce_mid(const T *__restrict__ x, void *out, void *pv, void *pi,
                                                  i64 R, i64 inner, i64 tiles, i64 chunk, i64 n_out) {
  typedef typename Acc<T>::type A;
  /* U loads in flight a thread (32 bytes) and S independent chains: the best measured on the
   * H200 at 128 x 4096 x 4095 (sums: 8 chains for fp32, 4 for 16-bit types; max/min/arg: 2) */
  const int U = sizeof(T) >= 8 ? 4 : 32 / sizeof(T);
  const int S = (OP == R_SUM || OP == R_MEAN) ? (sizeof(T) == 4 ? 8 : 4) : 2;
  __shared__ A sv[256];
  __shared__ i64 si[256];
  const int bx = blockDim.x, by = blockDim.y;
  i64 o = blockIdx.x / tiles;
  i64 c = (i64)(blockIdx.x % tiles) * bx + threadIdx.x;
  i64 r0 = (i64)blockIdx.y * chunk, r1 = min(R, r0 + chunk);
  Red<OP, A> s[S];
#pragma unroll
  for (int u = 0; u < S; u++) s[u].init();
  if (c < inner) {
    const T *p = x + o * R * inner + c;
    i64 r = r0 + threadIdx.y;
    for (; r + (U - 1) * by < r1; r += U * by) {
      T v[U];
#pragma unroll
      for (int u = 0; u < U; u++) v[u] = p[(r + u * by) * inner];
#pragma unroll
      for (int u = 0; u < U; u++) s[u % S].add(ld(v[u]), r + u * by);
    }
    for (; r < r1; r += by) s[0].add(ld(p[r * inner]), r);
  }
  merge_all(s);
  int t = threadIdx.y * bx + threadIdx.x;
  sv[t] = s[0].v;
  si[t] = s[0].i;
  for (int h = by >> 1; h > 0; h >>= 1) {
    __syncthreads();
    if (threadIdx.y < h) {
      Red<OP, A> b;
      b.v = sv[t + h * bx];
      b.i = si[t + h * bx];
      s[0].merge(b);
      sv[t] = s[0].v;
      si[t] = s[0].i;
    }
  }
  if (threadIdx.y == 0 && c < inner)
    put_split<T>(out, pv, pi, o * inner + c, n_out, blockIdx.y, gridDim.y, s[0], R);
}

/* x as [rows, R]: blockIdx.x = row * splits + split, the split covering `chunk` elements. */
template <typename T, int OP>
__global__ void __launch_bounds__(1024) reduce_row(const T *__restrict__ x, void *out, void *pv, void *pi,
                                                   i64 R, i64 chunk, int splits, i64 rows) {
  typedef typename Acc<T>::type A;
  const int U = 4, N = Pack<T>::N;
  __shared__ Red<OP, A> sh[32];
  i64 row = blockIdx.x / splits;
  int split = blockIdx.x % splits;
  i64 r0 = (i64)split * chunk, n = min(R, r0 + chunk) - r0;
  const T *p = x + row * R + r0;
  const int t = threadIdx.x, nt = blockDim.x;
  Red<OP, A> s[U];
#pragma unroll
  for (int u = 0; u < U; u++) s[u].init();
  /* the unaligned head (fewer than N elements), the 16-byte body, the tail */
  i64 head = (N - (i64)(((u64)p / sizeof(T)) % N)) % N;
  if (head > n) head = n;
  if (t < head) s[0].add(ld(p[t]), r0 + t);
  const Pack<T> *q = reinterpret_cast<const Pack<T> *>(p + head);
  i64 np = (n - head) / N, k = t;
  for (; k + (i64)(U - 1) * nt < np; k += (i64)U * nt) {
    Pack<T> v[U];
#pragma unroll
    for (int u = 0; u < U; u++) v[u] = q[k + (i64)u * nt];
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int e = 0; e < N; e++) s[u].add(ld(v[u].v[e]), r0 + head + (k + (i64)u * nt) * N + e);
  }
  for (; k < np; k += nt) {
    Pack<T> v = q[k];
#pragma unroll
    for (int e = 0; e < N; e++) s[0].add(ld(v.v[e]), r0 + head + k * N + e);
  }
  for (i64 j = head + np * N + t; j < n; j += nt) s[0].add(ld(p[j]), r0 + j);
  merge_all(s);
  Red<OP, A> r = block_merge(s[0], sh);
  if (t == 0) put_split<T>(out, pv, pi, row, rows, split, splits, r, R);
}

/* Merges the partial states [splits][n_out] of each output, in split order. */
template <typename T, int OP>
__global__ void reduce_finish(const void *pv, const void *pi, void *out, i64 n_out, int splits, i64 R) {
  typedef typename Acc<T>::type A;
  i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n_out) return;
  Red<OP, A> s;
  s.init();
  for (int j = 0; j < splits; j++) {
    Red<OP, A> b;
    b.v = ((const A *)pv)[(i64)j * n_out + k];
    b.i = Red<OP, A>::ARG ? ((const i64 *)pi)[(i64)j * n_out + k] : 0;
    s.merge(b);
  }
  put<T>(out, k, s, R);
}
]==]

local OPS = { sum = 0, mean = 1, amax = 2, amin = 3, argmax = 4, argmin = 5 }
local ORDER = { "sum", "mean", "amax", "amin", "argmax", "argmin" }

local function instantiate(T)
  local inst = {}
  for _, name in ipairs(ORDER) do
    for _, k in ipairs({ "reduce_mid", "reduce_row", "reduce_finish" }) do
      inst[#inst + 1] = ("%s<%s, %d>"):format(k, T, OPS[name])
    end
  end
  return inst
end

local function ceil_div(a, b) return (a + b - 1) // b end
local function pow2_at_least(n)
  local p = 1
  while p < n do p = p * 2 end
  return p
end

-- The reduction every operator runs (K: the operators' kit).
local function make_reduce(K)
  local sms
  local function sm_count()
    sms = sms or core.device().sm_count
    return sms
  end

  local function prog(dtype) return K.program("reduce", SRC, dtype, instantiate) end

  local function reduce(op, x, y, dim)
    local arg = op == "argmax" or op == "argmin"
    K.check_float(op, x, "x")
    K.check_tensor(op, y, "y")
    local nd = x:dim()
    if math.type(dim) ~= "integer" then
      K.fail(op, "dim is %s, an integer is needed", tostring(dim))
    end
    local d = dim < 0 and nd + 1 + dim or dim
    if d < 1 or d > nd then
      K.fail(op, "dim %d is out of range for x of %d dimensions %s", dim, nd, K.shape_str(x.shape))
    end
    K.check_dtype(op, y, arg and "i64" or x.dtype, "y")
    local shape = x.shape
    local outer, inner = 1, 1
    for i = 1, d - 1 do outer = outer * shape[i] end
    for i = d + 1, nd do inner = inner * shape[i] end
    local R, n_out = shape[d], outer * inner
    if y:numel() ~= n_out then
      local kept = x.shape
      kept[d] = 1
      K.fail(op, "y is %s, %d elements, but x %s reduced over dimension %d has %d (%s)",
        K.shape_str(y.shape), y:numel(), K.shape_str(shape), d, n_out, K.shape_str(kept))
    end
    if R == 0 and op ~= "sum" and op ~= "mean" then
      K.fail(op, "dimension %d of x %s is empty, there is nothing to take the %s of", d,
        K.shape_str(shape), op)
    end
    if not K.writes(y) then return y end
    if n_out == 0 then return y end
    local T = K.ctype[x.dtype]
    local p = prog(x.dtype)
    local code = OPS[op]
    local acc = x.dtype == "f64" and "f64" or "f32"
    local N = 16 // tensor.dtype_size(x.dtype)
    local launch, splits, grid_blocks
    if inner > 1 then
      -- a tile of bx columns (a power of two, at most a warp) by 256 / bx row strides
      local bx = math.min(32, pow2_at_least(inner))
      local by = 256 // bx
      local tiles = ceil_div(inner, bx)
      local blocks = outer * tiles
      local want = 2 * sm_count() * 8 -- two waves of 256-thread blocks
      splits = 1
      if blocks < want then
        -- each thread keeps at least 4 unrolled sweeps of its chunk
        splits = math.max(1, math.min(ceil_div(want, blocks), R // (by * 8 * 4), 65535))
      end
      local chunk = math.max(1, ceil_div(R, splits))
      splits = math.max(1, ceil_div(R, chunk))
      -- reduce_mid's U loads in flight (see its source) run when a chunk has more than
      -- (U - 1) * by rows
      local dsize = tensor.dtype_size(x.dtype)
      local U = dsize >= 8 and 4 or 32 // dsize
      K.variant("reduce", x.dtype, splits > 1 and (arg and "mid.split.arg" or "mid.split") or "mid")
      if math.min(chunk, R) > (U - 1) * by then K.variant("reduce", x.dtype, "mid.unrolled") end
      launch = function(pv, pi)
        p[("reduce_mid<%s, %d>"):format(T, code)]{ grid = { blocks, splits }, block = { bx, by } }(
          x, y, pv, pi, R, inner, tiles, chunk, n_out)
      end
    else
      local threads = math.max(32, math.min(512, pow2_at_least(ceil_div(R, N * 4))))
      local want = 2 * sm_count() * (2048 // threads)
      splits = 1
      if outer < want then
        splits = math.max(1, math.min(ceil_div(want, outer), R // (threads * N * 4)))
      end
      local chunk = ceil_div(ceil_div(math.max(R, 1), splits), N) * N
      splits = math.max(1, ceil_div(R, chunk))
      grid_blocks = outer * splits
      -- reduce_row's paths: the unrolled loop over U = 4 packs a thread when the first block's
      -- chunk holds more than 3 * threads packs; a head before the aligned packs where a row
      -- starts off the 16-byte grid, a tail after them (chunks are whole packs, so only rows
      -- move the alignment)
      local off0 = (x:data_ptr() // tensor.dtype_size(x.dtype)) % N
      local head0 = (N - off0) % N
      K.variant("reduce", x.dtype, splits > 1 and (arg and "row.split.arg" or "row.split") or "row")
      if (math.min(R, chunk) - math.min(head0, R)) // N > 3 * threads then K.variant("reduce", x.dtype, "row.unrolled") end
      if R % N ~= 0 or off0 ~= 0 then
        K.variant("reduce", x.dtype, "row.tail")
        if off0 ~= 0 or outer > 1 then K.variant("reduce", x.dtype, "row.head") end
      end
      launch = function(pv, pi)
        p[("reduce_row<%s, %d>"):format(T, code)]{ grid = grid_blocks, block = threads }(
          x, y, pv, pi, R, chunk, splits, outer)
      end
    end
    if splits == 1 then
      launch(y, y)
      return y
    end
    local pv = K.empty({ splits * n_out }, acc)
    local pi = arg and K.empty({ splits * n_out }, "i64") or pv
    launch(pv, pi)
    p[("reduce_finish<%s, %d>"):format(T, code)]{ grid = K.blocks(n_out, 256, 1), block = 256 }(
      pv, pi, y, n_out, splits, R)
    pv:free()
    if arg then pi:free() end
    return y
  end
  return reduce
end

local function install(lib, K)
  local reduce = make_reduce(K)
  -- y = reduction of x over dimension `dim` (1-based; negative counts from the end). y has x's
  -- shape with that dimension removed or kept as 1 (any shape with that many elements is
  -- accepted); its dtype is x's, or i64 for argmax/argmin.
  function lib.sum(x, y, dim) return reduce("sum", x, y, dim) end
  function lib.mean(x, y, dim) return reduce("mean", x, y, dim) end
  function lib.amax(x, y, dim) return reduce("amax", x, y, dim) end
  function lib.amin(x, y, dim) return reduce("amin", x, y, dim) end
  function lib.argmax(x, y, dim) return reduce("argmax", x, y, dim) end
  function lib.argmin(x, y, dim) return reduce("argmin", x, y, dim) end
end

-- the size-selected paths (kreach.ops' header)
local VARIANTS = {
  { name = "mid", when = "a reduced dimension with others after it (inner > 1): reduce_mid, one block a tile of columns" },
  { name = "mid.split", when = "inner > 1 with too few tiles to fill the device and R long enough: R split over blocks, merged by reduce_finish" },
  { name = "mid.split.arg", when = "mid.split for argmax or argmin: the partial states keep their indices" },
  { name = "mid.unrolled", when = "inner > 1 with a block's chunk longer than (U - 1) row strides: U loads in flight a thread" },
  { name = "row", when = "the last dimension reduced (inner = 1): reduce_row, a block a row" },
  { name = "row.split", when = "inner = 1 with too few rows to fill the device and R longer than 2 * 4 * threads packs: each row split over blocks" },
  { name = "row.split.arg", when = "row.split for argmax or argmin" },
  { name = "row.unrolled", when = "inner = 1 with a block's chunk longer than 3 * threads packs: 4 packs a thread a step" },
  { name = "row.tail", when = "inner = 1 with R not a multiple of the pack: the elements after a row's packs" },
  { name = "row.head", when = "inner = 1 with R not a multiple of the pack and more than one row: a row starting off the 16-byte grid" },
}

return { install = install, variants = VARIANTS,
         sources = { { name = "reduce", source = SRC, instantiate = instantiate } } }
