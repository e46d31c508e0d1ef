-- kreach.ops.pool: max and average pooling over the 1, 2 or 3 trailing (spatial) dimensions of
-- a contiguous (N, C, spatial...) tensor, with PyTorch's semantics: output size
-- floor((L + 2p - d(k - 1) - 1) / s) + 1 (ceil_mode False); max pooling pads with -inf (a
-- padded position never wins) and propagates NaN; average pooling counts the padding
-- (count_include_pad True), so every window divides by the product of the kernel sizes.
--
-- Every rank runs as 3-D (1-D and 2-D have unit leading sizes). The main kernel, pool_rows,
-- gives a block TY output rows and one tile of up to about 4096 input columns per row: it first
-- combines the window's valid kd x kh input rows column by column into shared memory (16-byte
-- loads, coalesced, Q independent ones per thread in flight, each input element read once per
-- output row that uses it), then applies the window along W from there, so the inner loop reads
-- shared memory instead of issuing one strided global load per tap. The direct kernel `pool`
-- runs where staging buys nothing or does not fit: windows that do not overlap along W, and
-- windows along W wider than a tile (a very large dilation). It gives each thread V outputs of
-- a row, TX apart, every tap a global load that neighbouring windows share through L1.
local tensor = require "kreach.core.tensor"

local SRC = [==[
/* m = max(m, v), NaN winning like PyTorch's `v > m || isnan(v)` */
template <typename A> __device__ __forceinline__ A max_nan(A m, A v) { return (v > m || v != v) ? v : m; }
template <> __device__ __forceinline__ float max_nan<float>(float m, float v) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(m), "f"(v));
  return r;
}

/* rows = N*C*OD*OH output rows of OW; blockIdx.x = row group * w_tiles + column tile.
 * WIDE: the row index needs 64 bits to decode (rows >= 2^32). */
template <typename T, bool MAX, int V, bool WIDE>
__global__ void pool(const T *__restrict__ x, T *__restrict__ y, i64 rows, int w_tiles,
                     int D, int H, int W, int OD, int OH, int OW,
                     int kd, int kh, int kw, int sd, int sh, int sw,
                     int pd, int ph, int pw, int dd, int dh, int dw) {
  typedef typename Acc<T>::type A;
  const int TX = blockDim.x;
  const unsigned wt = blockIdx.x % (unsigned)w_tiles, rg = blockIdx.x / (unsigned)w_tiles;
  const i64 r = (i64)rg * blockDim.y + threadIdx.y;
  if (r >= rows) return;
  i64 nc;
  int od, oh;
  if (WIDE) {
    u64 q = (u64)r;
    oh = (int)(q % (u64)OH); q /= (u64)OH;
    od = (int)(q % (u64)OD); nc = (i64)(q / (u64)OD);
  } else {
    unsigned q = (unsigned)r;
    oh = (int)(q % (unsigned)OH); q /= (unsigned)OH;
    od = (int)(q % (unsigned)OD); nc = (i64)(q / (unsigned)OD);
  }
  const T *xb = x + nc * ((i64)D * H * W);
  const int ow0 = (int)wt * TX * V + threadIdx.x;
  A acc[V];
#pragma unroll
  for (int v = 0; v < V; v++) acc[v] = MAX ? -kinf<A>() : (A)0;
  const int d0 = od * sd - pd, h0 = oh * sh - ph;
  for (int a = 0; a < kd; a++) {
    const int id = d0 + a * dd;
    if ((unsigned)id >= (unsigned)D) continue;   /* a padded plane */
    for (int b = 0; b < kh; b++) {
      const int ih = h0 + b * dh;
      if ((unsigned)ih >= (unsigned)H) continue;  /* a padded row */
      const T *xr = xb + ((i64)id * H + ih) * W;
#pragma unroll 4
      for (int c = 0; c < kw; c++) {
#pragma unroll
        for (int v = 0; v < V; v++) {
          const int iw = (ow0 + v * TX) * sw - pw + c * dw;
          if ((unsigned)iw < (unsigned)W) {
            const A e = ld(xr[iw]);
            acc[v] = MAX ? max_nan(acc[v], e) : acc[v] + e;
          }
        }
      }
    }
  }
  T *yr = y + r * OW;
  const A count = (A)((i64)kd * kh * kw);
#pragma unroll
  for (int v = 0; v < V; v++) {
    const int ow = ow0 + v * TX;
    if (ow < OW) yr[ow] = st<T>(MAX ? acc[v] : acc[v] / count);
  }
}
__device__ __forceinline__ int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
/* the first and last window taps o0 + t * d (t < k) inside [0, L); last < first when none is */
__device__ __forceinline__ int first_tap(int o0, int d) { return o0 >= 0 ? 0 : (-o0 + d - 1) / d; }
__device__ __forceinline__ int last_tap(int o0, int d, int k, int L) {
  const int m = L - 1 - o0;
  return m < 0 ? -1 : min(k - 1, m / d);
}

/* blockIdx.x = row group * w_tiles + column tile; thread (tx, ty) works on output row
 * group * TY + ty. A tile is tile_w outputs; its input columns, rounded out to whole packs, are
 * at most span. Each thread combines Q packs of the tile's columns at a time (independent loads
 * in flight) over the window's valid input rows. VEC: W is a multiple of the pack size and x is
 * 16-byte aligned, so a pack lies wholly inside or wholly outside [0, W). */
template <typename T, bool MAX, bool VEC, int Q>
__global__ void pool_rows(const T *__restrict__ x, T *__restrict__ y, i64 rows, int w_tiles,
                          int tile_w, int span, int D, int H, int W, int OD, int OH, int OW,
                          int kd, int kh, int kw, int sd, int sh, int sw,
                          int pd, int ph, int pw, int dd, int dh, int dw) {
  typedef typename Acc<T>::type A;
  const int N = VEC ? Pack<T>::N : 1;
  extern __shared__ __align__(16) unsigned char pool_smem[];
  A *sm = reinterpret_cast<A *>(pool_smem) + threadIdx.y * span;
  const unsigned wt = blockIdx.x % (unsigned)w_tiles, rg = blockIdx.x / (unsigned)w_tiles;
  const i64 r = (i64)rg * blockDim.y + threadIdx.y;
  const bool live = r < rows; /* no early return: the block meets at a barrier */
  i64 nc = 0;
  int od = 0, oh = 0;
  if (live) { /* once a row of outputs: 64-bit division costs nothing here */
    u64 q = (u64)r;
    oh = (int)(q % (u64)OH); q /= (u64)OH;
    od = (int)(q % (u64)OD); nc = (i64)(q / (u64)OD);
  }
  const int ow_lo = (int)wt * tile_w, ow_n = min(tile_w, OW - ow_lo);
  const int a_lo = floor_div(ow_lo * sw - pw, N) * N;
  const int a_hi = floor_div((ow_lo + ow_n - 1) * sw - pw + dw * (kw - 1), N) * N;
  const int total = a_hi - a_lo + N;                 /* accumulators of the tile */
  const int p_lo = max(a_lo, 0), p_hi = min(a_hi, W - N);
  const int n_in = p_hi >= p_lo ? (p_hi - p_lo) / N + 1 : 0; /* packs inside the input */
  const int lead = min(p_lo - a_lo, total);          /* padding columns before them */
  const A idv = MAX ? -kinf<A>() : (A)0;
  if (live) {
    for (int t = threadIdx.x; t < lead; t += blockDim.x) sm[t] = idv;
    for (int t = lead + n_in * N + threadIdx.x; t < total; t += blockDim.x) sm[t] = idv;
    const int d0 = od * sd - pd, h0 = oh * sh - ph;
    const int i0 = first_tap(d0, dd), i1 = last_tap(d0, dd, kd, D);
    const int j0 = first_tap(h0, dh), j1 = last_tap(h0, dh, kh, H);
    const T *xb = x + nc * ((i64)D * H * W) + p_lo;
    const int TX = blockDim.x;
    for (int q0 = threadIdx.x; q0 < n_in; q0 += TX * Q) {
      A acc[Q][N];
      bool in[Q];
#pragma unroll
      for (int u = 0; u < Q; u++) {
        in[u] = q0 + u * TX < n_in;
#pragma unroll
        for (int e = 0; e < N; e++) acc[u][e] = idv;
      }
      const T *col = xb + (i64)q0 * N;
      for (int i = i0; i <= i1; i++) {
        const T *plane = col + (i64)(d0 + i * dd) * H * W;
#pragma unroll 4
        for (int j = j0; j <= j1; j++) {
          const T *src = plane + (i64)(h0 + j * dh) * W;
#pragma unroll
          for (int u = 0; u < Q; u++) {
            if (!in[u]) continue;
            if (VEC) {
              const Pack<T> pk = *reinterpret_cast<const Pack<T> *>(src + u * TX * N);
#pragma unroll
              for (int e = 0; e < N; e++) {
                const A v = ld(pk.v[e]);
                acc[u][e] = MAX ? max_nan(acc[u][e], v) : acc[u][e] + v;
              }
            } else {
              const A v = ld(src[u * TX]);
              acc[u][0] = MAX ? max_nan(acc[u][0], v) : acc[u][0] + v;
            }
          }
        }
      }
#pragma unroll
      for (int u = 0; u < Q; u++) {
        if (!in[u]) continue;
        A *dst = sm + lead + (q0 + u * TX) * N;
#pragma unroll
        for (int e = 0; e < N; e++) dst[e] = acc[u][e];
      }
    }
  }
  __syncthreads();
  if (!live) return;
  T *yr = y + r * OW + ow_lo;
  const A count = (A)((i64)kd * kh * kw);
  for (int o = threadIdx.x; o < ow_n; o += blockDim.x) {
    const A *s = sm + ((ow_lo + o) * sw - pw - a_lo);
    A acc = idv;
#pragma unroll 4
    for (int c = 0; c < kw; c++) acc = MAX ? max_nan(acc, s[c * dw]) : acc + s[c * dw];
    yr[o] = st<T>(MAX ? acc : acc / count);
  }
}
]==]

local THREADS = 256
-- the caps a test may lower (kreach.ops.with_limits): the direct kernel decodes its row index in
-- 64 bits above wide_rows rows
local LIMITS = { wide_rows = 0xffffffff }
local VS = { 1, 2, 4 }   -- the direct kernel's outputs per thread
local QS = { 1, 2, 4 }   -- pool_rows' packs per thread at a time

local function instantiate(T)
  local inst = {}
  for _, max in ipairs({ "true", "false" }) do
    for _, wide in ipairs({ "false", "true" }) do
      for _, v in ipairs(VS) do inst[#inst + 1] = ("pool<%s, %s, %d, %s>"):format(T, max, v, wide) end
    end
    for _, vec in ipairs({ "true", "false" }) do
      for _, q in ipairs(QS) do inst[#inst + 1] = ("pool_rows<%s, %s, %s, %d>"):format(T, max, vec, q) end
    end
  end
  return inst
end

-- The direct kernel's block width TX (a power of two from 32 to 256) and outputs per thread V
-- for a row of OW outputs: the most outputs per thread, then the widest block, among those that
-- leave at most 5% more idle columns than the tightest cover. (kreach.ops.conv's direct kernel
-- tiles its rows by it too.)
local function direct_tile(OW)
  local tight
  for _, w in ipairs({ 32, 64, 128, 256, 512, 1024 }) do
    local cover = (OW + w - 1) // w * w
    if not tight or cover < tight then tight = cover end
  end
  for _, v in ipairs({ 4, 2, 1 }) do
    for _, tx in ipairs({ 256, 128, 64, 32 }) do
      local w = tx * v
      if (OW + w - 1) // w * w <= tight * 1.05 then return tx, v end
    end
  end
end

-- pool_rows' tiling of a row of OW outputs: tile_w outputs a tile, span accumulators of shared
-- memory per row (the tile's input columns rounded out to packs of n), and a block of tx x ty
-- threads, each combining q packs at a time, chosen to cover the tile's packs with the fewest
-- idle slots (ties: more packs a thread, for more loads in flight, then wider blocks) within
-- the shared memory a block may use; nil when the window along W alone is wider than a tile.
local SPAN = 4096          -- accumulators per row of a tile
local SHARED = 48 * 1024   -- bytes of shared memory a block may use
local function rows_tile(OW, W, kw, sw, dw, n, acc_bytes)
  local halo = dw * (kw - 1) + 1 + 2 * (n - 1)
  local tile_w = math.min(OW, (SPAN - halo) // sw + 1)
  if tile_w < 1 then return nil end
  local span = (tile_w - 1) * sw + halo
  local npk = math.max(1, math.min(span, W) // n) -- packs inside the input, about
  local best
  for _, q in ipairs({ 4, 2, 1 }) do
    for _, tx in ipairs({ 256, 128, 64, 32 }) do
      local ty = THREADS // tx
      local slots = (npk + tx * q - 1) // (tx * q) * (tx * q)
      if ty * span * acc_bytes <= SHARED and (not best or slots < best.slots) then
        best = { slots = slots, tx = tx, ty = ty, q = q }
      end
    end
  end
  return tile_w, span, best.tx, best.ty, best.q
end

-- A per-dimension parameter: an integer for every spatial dimension, or a list of n; nil and
-- a message when it is neither.
local function per_dim(v, n, what)
  if math.type(v) == "integer" then
    local r = {}
    for i = 1, n do r[i] = v end
    return r
  end
  if type(v) ~= "table" or #v ~= n then
    local shown = type(v) == "table" and "{" .. table.concat(v, ", ") .. "}" or tostring(v)
    return nil, ("%s is %s, expected an integer or a list of %d integers"):format(what, shown, n)
  end
  for i = 1, n do
    if math.type(v[i]) ~= "integer" then
      return nil, ("%s[%d] is %s, not an integer"):format(what, i, tostring(v[i]))
    end
  end
  return v
end

-- The pooling every operator runs (K: the operators' kit).
local function make_pool(K)
  -- pool(op, n, max, x, y, k, s, p, d): checks like PyTorch's pool shape checks, then launches.
  local function pool(op, n, is_max, x, y, k, s, p, d)
    K.check_float(op, x, "x")
    K.check_tensor(op, y, "y")
    local nd = x:dim()
    if nd ~= n + 1 and nd ~= n + 2 then
      K.fail(op, "x is %s: expected (N, C, %d spatial) or (C, %d spatial) dimensions",
        K.shape_str(x.shape), n, n)
    end
    local err
    k, err = per_dim(k, n, "kernel_size")
    if not k then K.fail(op, "%s", err) end
    s, err = per_dim(s == nil and k or s, n, "stride")
    if not s then K.fail(op, "%s", err) end
    p, err = per_dim(p or 0, n, "padding")
    if not p then K.fail(op, "%s", err) end
    d, err = per_dim(d or 1, n, "dilation")
    if not d then K.fail(op, "%s", err) end
    local xs = x.shape
    local want = {}
    for i = 1, nd - n do want[i] = xs[i] end
    for i = 1, n do
      if k[i] < 1 then K.fail(op, "kernel_size should be greater than zero, got %d", k[i]) end
      if s[i] < 1 then K.fail(op, "stride should be greater than zero, got %d", s[i]) end
      if d[i] < 1 then K.fail(op, "dilation should be greater than zero, got %d", d[i]) end
      if p[i] < 0 or p[i] > k[i] // 2 then
        K.fail(op, "pad should be at most half of the kernel size, got padding %d for kernel_size %d",
          p[i], k[i])
      end
      local L = xs[nd - n + i]
      local out = (L + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1
      if out < 1 then
        K.fail(op, "x is %s: the output size along spatial dimension %d would be %d (too small)",
          K.shape_str(xs), i, out)
      end
      want[#want + 1] = out
    end
    K.check_shape(op, y, want, "y")
    K.check_dtype(op, y, x.dtype, "y")
    if not K.writes(y) then return y end
    if y:numel() == 0 then return y end

    -- as 3-D: unit leading sizes, kernels and strides for the missing dimensions
    local function pad3(t, fill)
      local r = {}
      for i = 1, 3 - n do r[i] = fill end
      for i = 1, n do r[#r + 1] = t[i] end
      return r
    end
    local sp_in, sp_out = {}, {}
    for i = 1, n do
      sp_in[i] = xs[nd - n + i]
      sp_out[i] = want[nd - n + i]
    end
    local I, O = pad3(sp_in, 1), pad3(sp_out, 1)
    local k3, s3, p3, d3 = pad3(k, 1), pad3(s, 1), pad3(p, 0), pad3(d, 1)
    local OW = O[3]
    local rows = y:numel() // OW
    local wide = rows > LIMITS.wide_rows and "true" or "false"
    local T, mx = K.ctype[x.dtype], is_max and "true" or "false"
    local prog = K.program("pool", SRC, x.dtype, instantiate)
    local dsize = tensor.dtype_size(x.dtype)
    local per = 16 // dsize
    local vec = I[3] % per == 0 and K.aligned(x, 16)
    local acc_bytes = x.dtype == "f64" and 8 or 4
    local tile_w, span, tx, ty, q = rows_tile(OW, I[3], k3[3], s3[3], d3[3], vec and per or 1,
      acc_bytes)
    -- Windows that do not overlap along W (problem 45's 11 x 11, stride 11) gain nothing from
    -- staging a row in shared memory, and there the direct kernel measured faster on the H200
    -- (4.24 against 4.36 ms in f32, 2.39 against 3.48 ms in bf16).
    if s3[3] >= d3[3] * (k3[3] - 1) + 1 then tile_w = nil end
    local function grid_for(w_tiles, ty_)
      local g = w_tiles * ((rows + ty_ - 1) // ty_)
      if g > 0x7fffffff then
        K.fail(op, "y is %s: %d blocks are more than one launch takes", K.shape_str(y.shape), g)
      end
      return g
    end
    if tile_w then
      local w_tiles = (OW + tile_w - 1) // tile_w
      K.variant("pool", x.dtype, vec and "rows" or "rows.scalar", "rows.q" .. q)
      if w_tiles > 1 then K.variant("pool", x.dtype, "rows.tiles") end
      prog[("pool_rows<%s, %s, %s, %d>"):format(T, mx, vec and "true" or "false", q)]{
        grid = grid_for(w_tiles, ty), block = { tx, ty, 1 }, shared = ty * span * acc_bytes }(
        x, y, rows, w_tiles, tile_w, span, I[1], I[2], I[3], O[1], O[2], O[3],
        k3[1], k3[2], k3[3], s3[1], s3[2], s3[3], p3[1], p3[2], p3[3], d3[1], d3[2], d3[3])
    else
      local dtx, v = direct_tile(OW)
      local dty = THREADS // dtx
      local w_tiles = (OW + dtx * v - 1) // (dtx * v)
      K.variant("pool", x.dtype, "direct.v" .. v)
      if wide == "true" then K.variant("pool", x.dtype, "direct.wide") end
      prog[("pool<%s, %s, %d, %s>"):format(T, mx, v, wide)]{ grid = grid_for(w_tiles, dty),
        block = { dtx, dty, 1 } }(
        x, y, rows, w_tiles, I[1], I[2], I[3], O[1], O[2], O[3],
        k3[1], k3[2], k3[3], s3[1], s3[2], s3[3], p3[1], p3[2], p3[3], d3[1], d3[2], d3[3])
    end
    return y
  end
  return pool
end

local function install(lib, K)
  local pool = make_pool(K)
  -- y = max_poolNd(x) (nn.MaxPoolNd with return_indices and ceil_mode False). kernel_size,
  -- stride (default: kernel_size), padding (default 0) and dilation (default 1) are integers or
  -- lists with one entry per spatial dimension.
  function lib.max_pool1d(x, y, k, s, p, d) return pool("max_pool1d", 1, true, x, y, k, s, p, d) end
  function lib.max_pool2d(x, y, k, s, p, d) return pool("max_pool2d", 2, true, x, y, k, s, p, d) end
  function lib.max_pool3d(x, y, k, s, p, d) return pool("max_pool3d", 3, true, x, y, k, s, p, d) end
  -- y = avg_poolNd(x) (nn.AvgPoolNd with count_include_pad True, ceil_mode False, no divisor
  -- override); stride defaults to kernel_size as in PyTorch.
  function lib.avg_pool1d(x, y, k, s, p) return pool("avg_pool1d", 1, false, x, y, k, s, p, 1) end
  function lib.avg_pool2d(x, y, k, s, p) return pool("avg_pool2d", 2, false, x, y, k, s, p, 1) end
  function lib.avg_pool3d(x, y, k, s, p) return pool("avg_pool3d", 3, false, x, y, k, s, p, 1) end
end

-- the size-selected paths (kreach.ops' header)
local VARIANTS = {
  { name = "rows", when = "overlapping windows along W, the input width a multiple of the pack: pool_rows staging 16-byte packs" },
  { name = "rows.scalar", when = "pool_rows with an input width that is not a multiple of the pack: element by element" },
  { name = "rows.q1", when = "pool_rows with one pack a thread at a time (a row of few packs)" },
  { name = "rows.q2", when = "pool_rows with two packs a thread at a time (the fewest idle slots, as a row of 64 packs)" },
  { name = "rows.q4", when = "pool_rows with four packs a thread at a time (as a row of 128 packs)" },
  { name = "rows.tiles", when = "pool_rows with an output row wider than a tile (about 4096 input columns): several column tiles" },
  { name = "direct.v1", when = "windows that do not overlap along W (or are wider than a tile): the direct kernel, one output a thread" },
  { name = "direct.v2", when = "the direct kernel with two outputs a thread (as an output row of 64)" },
  { name = "direct.v4", when = "the direct kernel with four outputs a thread (as an output row of 128)" },
  { name = "direct.wide", when = "the direct kernel over 2^32 output rows or more: the row index decoded in 64 bits (limit wide_rows)" },
}

return { install = install, direct_tile = direct_tile, variants = VARIANTS, limits = LIMITS,
         sources = { { name = "pool", source = SRC, instantiate = instantiate } } }
