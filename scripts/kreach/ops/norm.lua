-- kreach.ops.norm: softmax and log-softmax over the last dimension, and the normalisations
-- (batch norm in training mode, instance, group, layer and RMS norm, Frobenius, L1 and L2
-- normalisation), with PyTorch's definitions: biased variance, eps inside the square root.
--
-- Most of them are "statistics of a group of elements, then an elementwise map with the
-- group's two coefficients". x is viewed as planes of P contiguous elements (a row, an (n, c)
-- plane, the whole tensor) and one of two schemes runs:
--   norm_rows      rows enough for two waves of blocks: a block per row computes the
--                  statistics and maps the row at once, so the second read hits L2 when the
--                  rows in flight fit there (one DRAM read), and costs no third pass when not;
--   norm_stats ->  otherwise: blocks over (plane, chunk) write partial statistics, one block
--   norm_finalize  per group merges its partials in fp64 in a fixed order (a group is a plane,
--   -> norm_apply  a run of planes for group norm, or every n for a channel in batch norm),
--                  and an elementwise pass applies the coefficients.
-- Statistics accumulate in Acc<T> per thread (four independent chains), means and variances by
-- Welford/Chan merges of 16-byte packs, softmax as an online (max, sum of exp) pair; blocks
-- merge in a tree and partials in fp64. Softmax multiplies by 1/sum (rounded once, from fp64):
-- its map pass is compute-bound in bf16 with a division. RMS norm reduces over channels of
-- NCHW (a strided column per thread, held in registers) and has its own kernel.
local core = require "kreach.core"
local snippets = require "kreach.ops.snippets"
local tensor = require "kreach.core.tensor"

local SRC = [==[
enum { F_SOFTMAX, F_LOG_SOFTMAX, F_MEAN_ABS, F_NORM2, F_STD };

/* F_SOFTMAX, F_LOG_SOFTMAX: a = running max, b = sum of exp(x - a);
 * F_MEAN_ABS: a = sum |x|;  F_NORM2: a = sum x^2;  F_STD: a = count, b = mean, c = M2. */
template <int F, typename A> struct Stat {
  A a, b, c;
  __device__ __forceinline__ void init() {
    a = (F == F_SOFTMAX || F == F_LOG_SOFTMAX) ? -kinf<A>() : (A)0;
    b = 0;
    c = 0;
  }
  /* Chan's merge of (n2, mean2, m2_2) into (a, b, c) */
  __device__ __forceinline__ void merge_w(A n2, A mean2, A m2) {
    if (n2 == (A)0) return;
    A n = a + n2, d = mean2 - b, r = n2 / n;
    b += d * r;
    c += m2 + d * d * a * r;
    a = n;
  }
  __device__ __forceinline__ void add(A x) {
    if (F == F_MEAN_ABS) a += kabs(x);
    else if (F == F_NORM2) a += x * x;
    else if (F == F_STD) merge_w((A)1, x, (A)0);
    else if (x > a) { b = b * kexp(a - x) + (A)1; a = x; }
    else b += x == a ? (A)1 : kexp(x - a); /* x == a also covers -inf == -inf */
  }
  template <int N> __device__ __forceinline__ void add_pack(const A (&x)[N]) {
    if (F == F_MEAN_ABS || F == F_NORM2) {
      A t = 0;
#pragma unroll
      for (int k = 0; k < N; k++) t += F == F_MEAN_ABS ? kabs(x[k]) : x[k] * x[k];
      a += t;
    } else if (F == F_STD) {
      A t = 0, q = 0;
#pragma unroll
      for (int k = 0; k < N; k++) t += x[k];
      A m = t / (A)N;
#pragma unroll
      for (int k = 0; k < N; k++) q += (x[k] - m) * (x[k] - m);
      merge_w((A)N, m, q);
    } else {
      A m = x[0];
#pragma unroll
      for (int k = 1; k < N; k++) m = kmax(m, x[k]);
      if (m > a) { b *= kexp(a - m); a = m; }
#pragma unroll
      for (int k = 0; k < N; k++) b += x[k] == a ? (A)1 : kexp(x[k] - a);
    }
  }
  __device__ __forceinline__ void merge(const Stat &o) {
    if (F == F_MEAN_ABS || F == F_NORM2) a += o.a;
    else if (F == F_STD) merge_w(o.a, o.b, o.c);
    else {
      A m = kmax(a, o.a);
      b = b * (a == m ? (A)1 : kexp(a - m)) + o.b * (o.a == m ? (A)1 : kexp(o.a - m));
      a = m;
    }
  }
};

template <int F, typename A> __device__ __forceinline__ Stat<F, A> shfl_down(const Stat<F, A> &s, int o) {
  Stat<F, A> r;
  r.a = __shfl_down_sync(0xffffffffu, s.a, o);
  r.b = __shfl_down_sync(0xffffffffu, s.b, o);
  r.c = __shfl_down_sync(0xffffffffu, s.c, o);
  return r;
}

]==] .. snippets.BLOCK_MERGE .. [==[

/* The statistics of p[0, n) over the threads of a block: the unaligned head and the tail one
 * element at a time, the 16-byte aligned body as packs (VEC), four chains a thread. */
template <typename T, int F, bool VEC>
__device__ __forceinline__ Stat<F, typename Acc<T>::type> thread_stats(const T *p, i64 n, int t, int nt) {
  typedef typename Acc<T>::type A;
  const int U = 4, N = VEC ? Pack<T>::N : 1;
  Stat<F, A> s[U];
#pragma unroll
  for (int u = 0; u < U; u++) s[u].init();
  i64 head = VEC ? (N - (i64)(((u64)p / sizeof(T)) % N)) % N : 0;
  if (head > n) head = n;
  if (t < head) s[0].add(ld(p[t]));
  const Pack<T> *q = reinterpret_cast<const Pack<T> *>(p + head);
  i64 np = VEC ? (n - head) / N : 0, k = t;
  if (VEC) {
    for (; k + (i64)(U - 1) * nt < np; k += (i64)U * nt) {
      Pack<T> v[U];
#pragma unroll
      for (int u = 0; u < U; u++) v[u] = q[k + (i64)u * nt];
#pragma unroll
      for (int u = 0; u < U; u++) {
        A f[Pack<T>::N];
#pragma unroll
        for (int e = 0; e < Pack<T>::N; e++) f[e] = ld(v[u].v[e]);
        s[u].add_pack(f);
      }
    }
    for (; k < np; k += nt) {
      Pack<T> v = q[k];
      A f[Pack<T>::N];
#pragma unroll
      for (int e = 0; e < Pack<T>::N; e++) f[e] = ld(v.v[e]);
      s[0].add_pack(f);
    }
  }
  i64 j = head + np * N + t;
  for (; j + (i64)(U - 1) * nt < n; j += (i64)U * nt) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; u++) v[u] = p[j + (i64)u * nt];
#pragma unroll
    for (int u = 0; u < U; u++) s[u].add(ld(v[u]));
  }
  for (; j < n; j += nt) s[0].add(ld(p[j]));
  s[0].merge(s[1]);
  s[2].merge(s[3]);
  s[0].merge(s[2]);
  return s[0];
}

/* The two coefficients of a group from its merged statistics (in fp64). */
template <int F>
__device__ __forceinline__ void finalize(double a, double b, double c, double count, double eps,
                                         double &c0, double &c1) {
  c0 = 0;
  c1 = 1;
  if (F == F_SOFTMAX) { c0 = a; c1 = 1.0 / b; } /* a multiply in the map, not a division */
  else if (F == F_LOG_SOFTMAX) { c0 = a; c1 = log(b); }
  else if (F == F_MEAN_ABS) c1 = a / count;
  else if (F == F_NORM2) c1 = sqrt(a);
  else { c0 = b; c1 = 1.0 / sqrt(c / a + eps); } /* biased variance M2 / n */
}

template <int F, typename A> __device__ __forceinline__ A map1(A x, A c0, A c1) {
  if (F == F_SOFTMAX) return kexp(x - c0) * c1;
  if (F == F_LOG_SOFTMAX) return x - c0 - c1;
  if (F == F_MEAN_ABS || F == F_NORM2) return x / c1;
  return (x - c0) * c1;
}

/* q[i] = map(p[i]) for i in [0, n) over the threads of a block, then * w + bias: AFF = 1 with
 * the values wc, bc; AFF = 2 with w[i], bias[i] (VEC then needs p, w, bias equally aligned).
 * p may be q (in place): each element is read and written by one thread. */
template <typename T, int F, int AFF, bool VEC>
__device__ __forceinline__ void map_range(const T *p, T *q, const T *w, const T *bias, i64 n,
                                          typename Acc<T>::type c0, typename Acc<T>::type c1,
                                          typename Acc<T>::type wc, typename Acc<T>::type bc,
                                          int t, int nt) {
  typedef typename Acc<T>::type A;
  const int U = 4, N = VEC ? Pack<T>::N : 1;
  i64 head = VEC ? (N - (i64)(((u64)p / sizeof(T)) % N)) % N : 0;
  if (head > n) head = n;
  auto one = [&](i64 i) {
    A r = map1<F>(ld(p[i]), c0, c1);
    if (AFF == 1) r = r * wc + bc;
    if (AFF == 2) r = r * ld(w[i]) + ld(bias[i]);
    q[i] = st<T>(r);
  };
  if (t < head) one(t);
  i64 np = VEC ? (n - head) / N : 0, k = t;
  if (VEC) {
    const Pack<T> *pp = reinterpret_cast<const Pack<T> *>(p + head);
    Pack<T> *qp = reinterpret_cast<Pack<T> *>(q + head);
    const Pack<T> *wp = reinterpret_cast<const Pack<T> *>(w + head);
    const Pack<T> *bp = reinterpret_cast<const Pack<T> *>(bias + head);
    for (; k + (i64)(U - 1) * nt < np; k += (i64)U * nt) {
      Pack<T> v[U];
#pragma unroll
      for (int u = 0; u < U; u++) v[u] = pp[k + (i64)u * nt];
#pragma unroll
      for (int u = 0; u < U; u++) {
        Pack<T> wv, bv;
        if (AFF == 2) { wv = wp[k + (i64)u * nt]; bv = bp[k + (i64)u * nt]; }
#pragma unroll
        for (int e = 0; e < Pack<T>::N; e++) {
          A r = map1<F>(ld(v[u].v[e]), c0, c1);
          if (AFF == 1) r = r * wc + bc;
          if (AFF == 2) r = r * ld(wv.v[e]) + ld(bv.v[e]);
          v[u].v[e] = st<T>(r);
        }
        qp[k + (i64)u * nt] = v[u];
      }
    }
    for (; k < np; k += nt) {
      Pack<T> v = pp[k], wv, bv;
      if (AFF == 2) { wv = wp[k]; bv = bp[k]; }
#pragma unroll
      for (int e = 0; e < Pack<T>::N; e++) {
        A r = map1<F>(ld(v.v[e]), c0, c1);
        if (AFF == 1) r = r * wc + bc;
        if (AFF == 2) r = r * ld(wv.v[e]) + ld(bv.v[e]);
        v.v[e] = st<T>(r);
      }
      qp[k] = v;
    }
  }
  for (i64 j = head + np * N + t; j < n; j += nt) one(j);
}

/* One block per row of R elements: statistics, coefficients, map. AFF = 2: w, bias hold R. */
template <typename T, int F, int AFF, bool VEC>
__global__ void __launch_bounds__(1024) norm_rows(const T *x, T *y, const T *w, const T *bias, i64 R,
                                                  double eps) {
  typedef typename Acc<T>::type A;
  __shared__ Stat<F, A> sh[32];
  __shared__ double coef[2];
  const T *p = x + (i64)blockIdx.x * R;
  Stat<F, A> s = block_merge(thread_stats<T, F, VEC>(p, R, threadIdx.x, blockDim.x), sh);
  if (threadIdx.x == 0) {
    double c0, c1;
    finalize<F>((double)s.a, (double)s.b, (double)s.c, (double)R, eps, c0, c1);
    coef[0] = c0;
    coef[1] = c1;
  }
  __syncthreads();
  map_range<T, F, AFF, VEC>(p, y + (i64)blockIdx.x * R, w, bias, R, (A)coef[0], (A)coef[1], (A)1,
                            (A)0, threadIdx.x, blockDim.x);
}

/* Partial statistics: x as [planes, P], blockIdx.x = plane * splits + split over chunks of
 * `chunk`; the state goes to part[b], part[G + b], part[2G + b] with G = gridDim.x. */
template <typename T, int F, bool VEC>
__global__ void __launch_bounds__(1024) norm_stats(const T *x, double *part, i64 P, i64 chunk, int splits) {
  typedef typename Acc<T>::type A;
  __shared__ Stat<F, A> sh[32];
  i64 b = blockIdx.x, plane = b / splits, r0 = (b % splits) * chunk;
  i64 n = min(P, r0 + chunk) - r0;
  Stat<F, A> s = block_merge(thread_stats<T, F, VEC>(x + plane * P + r0, n, threadIdx.x, blockDim.x), sh);
  if (threadIdx.x == 0) {
    i64 G = gridDim.x;
    part[b] = (double)s.a;
    part[G + b] = (double)s.b;
    part[2 * G + b] = (double)s.c;
  }
}

/* One block per group g: merges the partials g * g_stride + o * o_stride + j (o < n_o,
 * j < n_s) of the n_part written by norm_stats, in fp64, and writes the coefficients to
 * coef[g] and coef[G + g]. `count` is the number of elements in a group. */
template <int F>
__global__ void __launch_bounds__(256) norm_finalize(const double *part, i64 n_part, double *coef, i64 g_stride,
                                                     i64 n_o, i64 o_stride, i64 n_s, double count, double eps) {
  __shared__ Stat<F, double> sh[32];
  i64 g = blockIdx.x, G = gridDim.x;
  Stat<F, double> s;
  s.init();
  for (i64 k = threadIdx.x; k < n_o * n_s; k += blockDim.x) {
    i64 o = k / n_s, idx = g * g_stride + o * o_stride + (k - o * n_s);
    Stat<F, double> v;
    v.a = part[idx];
    v.b = part[n_part + idx];
    v.c = part[2 * n_part + idx];
    s.merge(v);
  }
  s = block_merge(s, sh);
  if (threadIdx.x == 0) {
    double c0, c1;
    finalize<F>(s.a, s.b, s.c, count, eps, c0, c1);
    coef[g] = c0;
    coef[G + g] = c1;
  }
}

/* The map over x as [planes, P] in `splits` chunks a plane. Blocks run in the reverse of
 * norm_stats' order, so the first ones re-read what it left in L2; with AFF = 2 neighbouring
 * blocks take the same chunk of different planes instead, to share its weights in L2. The
 * plane's group is (plane / g_div) % g_mod; AFF = 1 takes channel plane % C of w and bias,
 * AFF = 2 the element's position in the plane. */
template <typename T, int F, int AFF, bool VEC>
__global__ void __launch_bounds__(1024) norm_apply(const T *x, T *y, const double *coef, i64 G, const T *w,
                                                   const T *bias, i64 P, i64 chunk, i64 planes,
                                                   i64 g_div, i64 g_mod, i64 C) {
  typedef typename Acc<T>::type A;
  i64 b = (i64)gridDim.x - 1 - blockIdx.x, splits = gridDim.x / planes;
  i64 plane = AFF == 2 ? b % planes : b / splits;
  i64 r0 = (AFF == 2 ? b / planes : b % splits) * chunk;
  i64 n = min(P, r0 + chunk) - r0, g = (plane / g_div) % g_mod;
  A wc = 1, bc = 0;
  if (AFF == 1) {
    wc = ld(w[plane % C]);
    bc = ld(bias[plane % C]);
  }
  i64 off = plane * P + r0;
  map_range<T, F, AFF, VEC>(x + off, y + off, w + r0, bias + r0, n, (A)coef[g], (A)coef[G + g], wc, bc,
                            threadIdx.x, blockDim.x);
}

/* y = x / sqrt(mean(x^2 over C) + eps), x as [outer, C, inner]: a thread per (outer, inner)
 * column, so warps read consecutive columns; the column stays in registers when C <= CAP. */
template <typename T, int CAP>
__global__ void __launch_bounds__(128) rms_cols(const T *x, T *y, i64 n_cols, i64 C, i64 inner, double eps) {
  typedef typename Acc<T>::type A;
  i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n_cols) return;
  i64 o = k / inner, off = o * C * inner + (k - o * inner);
  const T *p = x + off;
  T *q = y + off;
  A acc[4] = { 0, 0, 0, 0 };
  if (CAP > 0) {
    A v[CAP > 0 ? CAP : 1];
#pragma unroll
    for (int j = 0; j < CAP; j++) if (j < C) v[j] = ld(p[j * inner]);
#pragma unroll
    for (int j = 0; j < CAP; j++) if (j < C) acc[j & 3] += v[j] * v[j];
    A d = ksqrt(((acc[0] + acc[1]) + (acc[2] + acc[3])) / (A)C + (A)eps);
#pragma unroll
    for (int j = 0; j < CAP; j++) if (j < C) q[j * inner] = st<T>(v[j] / d);
  } else {
    i64 j = 0;
    for (; j + 3 < C; j += 4) {
      T v[4];
#pragma unroll
      for (int u = 0; u < 4; u++) v[u] = p[(j + u) * inner];
#pragma unroll
      for (int u = 0; u < 4; u++) acc[u] += ld(v[u]) * ld(v[u]);
    }
    for (; j < C; j++) acc[0] += ld(p[j * inner]) * ld(p[j * inner]);
    A d = ksqrt(((acc[0] + acc[1]) + (acc[2] + acc[3])) / (A)C + (A)eps);
    for (j = 0; j < C; j++) q[j * inner] = st<T>(ld(p[j * inner]) / d);
  }
}
]==]

local F = { softmax = 0, log_softmax = 1, mean_abs = 2, norm2 = 3, std = 4 }
-- the (F, AFF) pairs each kernel is instantiated for
local APPLY = { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 }, { 4, 1 }, { 4, 2 } }
local ROWS = { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 }, { 4, 2 } }
local CAPS = { 8, 16, 32, 64 }

local function instantiate(T)
  local inst = {}
  for _, v in ipairs({ "true", "false" }) do
    for f = 0, 4 do inst[#inst + 1] = ("norm_stats<%s, %d, %s>"):format(T, f, v) end
    for _, fa in ipairs(APPLY) do
      inst[#inst + 1] = ("norm_apply<%s, %d, %d, %s>"):format(T, fa[1], fa[2], v)
    end
    for _, fa in ipairs(ROWS) do
      inst[#inst + 1] = ("norm_rows<%s, %d, %d, %s>"):format(T, fa[1], fa[2], v)
    end
  end
  for f = 0, 4 do inst[#inst + 1] = ("norm_finalize<%d>"):format(f) end
  for _, c in ipairs(CAPS) do inst[#inst + 1] = ("rms_cols<%s, %d>"):format(T, c) end
  inst[#inst + 1] = ("rms_cols<%s, 0>"):format(T)
  return inst
end

local function ceil_div(a, b) return (a + b - 1) // b end
local function pow2_at_least(n)
  local p = 1
  while p < n do p = p * 2 end
  return p
end
local function clamp(v, lo, hi) return math.max(lo, math.min(hi, v)) end

-- The schemes every operator runs through (K: the operators' kit): prog, the fused rows scheme
-- and the split one (run_split), and by_rows, which picks between them.
local function runners(K)
  local sms
  local function sm_count()
    sms = sms or core.device().sm_count
    return sms
  end
  local function prog(dtype) return K.program("norm", SRC, dtype, instantiate) end
  local function pack_n(dtype) return 16 // tensor.dtype_size(dtype) end
  local function blocks_per_sm(threads) return math.min(32, 2048 // threads) end
  local function b(v) return v and "true" or "false" end

  -- Whether a block per row, mapping the row right after its statistics, fills the GPU for at
  -- least two waves; returns the block size when it does.
  local function rows_threads(rows, R, N)
    local threads = clamp(pow2_at_least(ceil_div(R, N * 4)), 32, 1024)
    if rows >= 2 * sm_count() * blocks_per_sm(threads) then return threads end
    return nil
  end

  -- The paths thread_stats and map_range take, with VEC = vec, over the blocks' ranges of a
  -- row or plane of `len` elements (the first range n long): the unrolled loop (more than
  -- 3 * threads packs, or elements without VEC, in the first range), and elements outside the
  -- 16-byte packs (x off the grid, or rows or planes that are not whole packs; chunks are).
  local function range_variants(x, aff, vec, threads, n, len)
    local N = pack_n(x.dtype)
    local off0 = (x:data_ptr() // tensor.dtype_size(x.dtype)) % N
    if vec then
      local head = math.min((N - off0) % N, n)
      if (n - head) // N > 3 * threads then
        K.variant("norm", x.dtype, "packs.unrolled")
        if aff == 2 then K.variant("norm", x.dtype, "affine.unrolled") end
      end
      if off0 ~= 0 or len % N ~= 0 then K.variant("norm", x.dtype, "packs.unaligned") end
    else
      K.variant("norm", x.dtype, "scalar")
      if n > 3 * threads then K.variant("norm", x.dtype, "scalar.unrolled") end
    end
  end

  -- The fused scheme: norm_rows over rows x R.
  local function run_rows(f, aff, threads, x, y, w, bias, rows, R, eps)
    local N = pack_n(x.dtype)
    local vec = K.aligned(x, 16) and K.aligned(y, 16)
    if aff == 2 then vec = vec and R % N == 0 and K.aligned(w, 16) and K.aligned(bias, 16) end
    K.variant("norm", x.dtype, aff == 2 and "rows.affine" or "rows")
    range_variants(x, aff, vec, threads, R, R)
    prog(x.dtype)[("norm_rows<%s, %d, %d, %s>"):format(K.ctype[x.dtype], f, aff, b(vec))]{
      grid = rows, block = threads }(x, y, w or x, bias or x, R, eps or 0)
  end

  -- The split scheme over x as [planes, P]. grouping: { kind = "plane" } (a group per plane),
  -- { kind = "run", m = } (m consecutive planes a group), { kind = "channel", C = } (planes
  -- c, C + c, 2C + c, ... a group). aff: 0 none, 1 per channel (plane % C), 2 per element.
  local function run_split(f, aff, x, y, w, bias, planes, P, grouping, eps)
    local N = pack_n(x.dtype)
    local T = K.ctype[x.dtype]
    local p = prog(x.dtype)
    -- A block of up to 512 threads per plane when that makes four waves; otherwise many small
    -- chunks (about 64 waves' worth of blocks of 256 threads, each thread at least 8 packs):
    -- measured on the H200, one long chunk a block streams well below bandwidth.
    local splits, most = 1, 512
    if planes < 4 * sm_count() * blocks_per_sm(512) then
      splits = clamp(ceil_div(64 * sm_count() * blocks_per_sm(512), planes), 1,
        math.max(1, P // (256 * N * 8)))
      most = 256
    end
    local chunk = ceil_div(ceil_div(P, splits), N) * N
    splits = math.max(1, ceil_div(P, chunk))
    local threads = clamp(pow2_at_least(ceil_div(chunk, N * 4)), 32, most)
    local vec = K.aligned(x, 16) and K.aligned(y, 16)
    if aff == 2 then vec = vec and P % N == 0 and K.aligned(w, 16) and K.aligned(bias, 16) end
    local scheme = ({ plane = aff == 2 and "split.affine" or "split", run = "split.run",
                      channel = "split.channel" })[grouping.kind]
    K.variant("norm", x.dtype, splits > 1 and scheme .. ".chunks" or scheme)
    range_variants(x, aff, vec, threads, math.min(chunk, P), P)
    local n_part = planes * splits
    local G, g_stride, n_o, o_stride, n_s, g_div, g_mod
    if grouping.kind == "plane" then
      G, g_stride, n_o, o_stride, n_s, g_div, g_mod = planes, splits, 1, 0, splits, 1, planes
    elseif grouping.kind == "run" then
      local m = grouping.m
      G = planes // m
      g_stride, n_o, o_stride, n_s, g_div, g_mod = m * splits, 1, 0, m * splits, m, G
    else
      local C = grouping.C
      G, g_stride, n_o, o_stride, n_s, g_div, g_mod = C, splits, planes // C, C * splits, splits, 1, C
    end
    local part = K.empty({ 3 * n_part }, "f64")
    local coef = K.empty({ 2 * G }, "f64")
    p[("norm_stats<%s, %d, %s>"):format(T, f, b(vec))]{ grid = n_part, block = threads }(
      x, part, P, chunk, splits)
    p[("norm_finalize<%d>"):format(f)]{ grid = G, block = 256 }(
      part, n_part, coef, g_stride, n_o, o_stride, n_s, planes * P / G, eps or 0)
    p[("norm_apply<%s, %d, %d, %s>"):format(T, f, aff, b(vec))]{ grid = n_part, block = threads }(
      x, y, coef, G, w or x, bias or x, P, chunk, planes, g_div, g_mod, grouping.C or 1)
    part:free()
    coef:free()
  end

  -- Row-wise ops over x as [rows, R]: fused when there are rows enough, split otherwise.
  local function by_rows(f, aff, x, y, w, bias, rows, R, eps)
    if rows * R == 0 then return end
    local threads = rows_threads(rows, R, pack_n(x.dtype))
    if threads then run_rows(f, aff, threads, x, y, w, bias, rows, R, eps)
    else run_split(f, aff, x, y, w, bias, rows, R, { kind = "plane" }, eps) end
  end
  return { prog = prog, run_split = run_split, by_rows = by_rows }
end

-- softmax and log_softmax
local function install_softmax(lib, K, S)
  local by_rows = S.by_rows
  -- The checks below sit in each operator (or in a function it tail-calls), never in a helper
  -- of its own: K's errors name the caller of the function that raises, which must be the
  -- problem's reference.

  local function softmax(op, f, x, y, dim)
    K.check_float(op, x, "x")
    K.check_same(op, x, y, "x", "y")
    if x:dim() < 1 then K.fail(op, "x is a scalar, a dimension to normalise over is needed") end
    if dim ~= nil and dim ~= -1 and dim ~= x:dim() then
      K.fail(op, "dim is %s: only the last dimension (-1 or %d) is supported", tostring(dim), x:dim())
    end
    if not K.writes(y) then return y end
    local R = x:size(-1)
    by_rows(f, 0, x, y, nil, nil, R > 0 and x:numel() // R or 0, R)
    return y
  end

  -- y = softmax(x) / log_softmax(x) over the last dimension (dim = -1, the default, or
  -- x:dim()); y may be x.
  function lib.softmax(x, y, dim) return softmax("softmax", F.softmax, x, y, dim) end
  function lib.log_softmax(x, y, dim) return softmax("log_softmax", F.log_softmax, x, y, dim) end
end

-- whether eps is a non-negative number
local function bad_eps(eps) return type(eps) ~= "number" or eps < 0 end

-- the normalisations by mean and variance: batch, instance, group and layer norm
local function install_stat_norms(lib, K, S)
  local by_rows, run_split = S.by_rows, S.run_split
  -- nn.BatchNorm2d in training mode: per channel (dimension 2) statistics over every other
  -- dimension, biased variance; y = (x - mean) / sqrt(var + eps) * weight + bias.
  -- (The running statistics are not updated: they do not affect the output.)
  function lib.batch_norm_train(x, weight, bias, y, eps)
    local op = "batch_norm_train"
    eps = eps or 1e-5
    K.check_float(op, x, "x")
    if x:dim() < 2 then K.fail(op, "x is %s, at least 2 dimensions (N, C, ...) are needed", K.shape_str(x.shape)) end
    local C = x:size(2)
    K.check_float(op, weight, "weight")
    K.check_float(op, bias, "bias")
    K.check_shape(op, weight, { C }, "weight")
    K.check_shape(op, bias, { C }, "bias")
    K.check_dtype(op, weight, x.dtype, "weight")
    K.check_dtype(op, bias, x.dtype, "bias")
    K.check_same(op, x, y, "x", "y")
    if bad_eps(eps) then K.fail(op, "eps is %s, a non-negative number is needed", tostring(eps)) end
    if not K.writes(y) then return y end
    if x:numel() == 0 then return y end
    local planes = x:size(1) * C
    run_split(F.std, 1, x, y, weight, bias, planes, x:numel() // planes, { kind = "channel", C = C }, eps)
    return y
  end

  -- nn.InstanceNorm2d (affine = False): statistics per (n, c) over the remaining dimensions.
  function lib.instance_norm(x, y, eps)
    local op = "instance_norm"
    eps = eps or 1e-5
    K.check_float(op, x, "x")
    if x:dim() < 3 then K.fail(op, "x is %s, at least 3 dimensions (N, C, ...) are needed", K.shape_str(x.shape)) end
    K.check_same(op, x, y, "x", "y")
    if bad_eps(eps) then K.fail(op, "eps is %s, a non-negative number is needed", tostring(eps)) end
    if not K.writes(y) then return y end
    if x:numel() == 0 then return y end
    local planes = x:size(1) * x:size(2)
    by_rows(F.std, 0, x, y, nil, nil, planes, x:numel() // planes, eps)
    return y
  end

  -- nn.GroupNorm(groups, C): statistics per (n, group of C / groups channels), then the
  -- per-channel weight and bias.
  function lib.group_norm(x, weight, bias, y, groups, eps)
    local op = "group_norm"
    eps = eps or 1e-5
    K.check_float(op, x, "x")
    if x:dim() < 2 then K.fail(op, "x is %s, at least 2 dimensions (N, C, ...) are needed", K.shape_str(x.shape)) end
    local C = x:size(2)
    if math.type(groups) ~= "integer" or groups < 1 or C % groups ~= 0 then
      K.fail(op, "groups is %s: it must be a positive integer that divides the %d channels",
        tostring(groups), C)
    end
    K.check_float(op, weight, "weight")
    K.check_float(op, bias, "bias")
    K.check_shape(op, weight, { C }, "weight")
    K.check_shape(op, bias, { C }, "bias")
    K.check_dtype(op, weight, x.dtype, "weight")
    K.check_dtype(op, bias, x.dtype, "bias")
    K.check_same(op, x, y, "x", "y")
    if bad_eps(eps) then K.fail(op, "eps is %s, a non-negative number is needed", tostring(eps)) end
    if not K.writes(y) then return y end
    if x:numel() == 0 then return y end
    local planes = x:size(1) * C
    run_split(F.std, 1, x, y, weight, bias, planes, x:numel() // planes,
      { kind = "run", m = C // groups, C = C }, eps)
    return y
  end

  -- nn.LayerNorm over the trailing dimensions of x that make weight's shape:
  -- y = (x - mean) / sqrt(var + eps) * weight + bias, elementwise weight and bias.
  function lib.layer_norm(x, weight, bias, y, eps)
    local op = "layer_norm"
    eps = eps or 1e-5
    K.check_float(op, x, "x")
    K.check_float(op, weight, "weight")
    local ws, xs = weight.shape, x.shape
    local lead = #xs - #ws
    local fits = lead >= 0
    for i = 1, #ws do if not fits or xs[lead + i] ~= ws[i] then fits = false end end
    if not fits then
      K.fail(op, "weight is %s but x is %s: weight's shape must be x's trailing dimensions",
        K.shape_str(ws), K.shape_str(xs))
    end
    K.check_float(op, bias, "bias")
    K.check_shape(op, bias, ws, "bias")
    K.check_dtype(op, weight, x.dtype, "weight")
    K.check_dtype(op, bias, x.dtype, "bias")
    K.check_same(op, x, y, "x", "y")
    if bad_eps(eps) then K.fail(op, "eps is %s, a non-negative number is needed", tostring(eps)) end
    if not K.writes(y) then return y end
    if x:numel() == 0 then return y end
    local M = weight:numel()
    by_rows(F.std, 2, x, y, weight, bias, x:numel() // M, M, eps)
    return y
  end
end

-- the normalisations by a norm: RMS, Frobenius, L1 and L2
local function install_scaled(lib, K, S)
  local by_rows, run_split, prog = S.by_rows, S.run_split, S.prog
  -- RMS norm over dimension 2 (the channels of NCHW), no weight:
  -- y = x / sqrt(mean(x^2, dim = 2, keepdim) + eps).
  function lib.rms_norm(x, y, eps)
    local op = "rms_norm"
    eps = eps or 1e-5
    K.check_float(op, x, "x")
    if x:dim() < 2 then K.fail(op, "x is %s, at least 2 dimensions (N, C, ...) are needed", K.shape_str(x.shape)) end
    K.check_same(op, x, y, "x", "y")
    if bad_eps(eps) then K.fail(op, "eps is %s, a non-negative number is needed", tostring(eps)) end
    if not K.writes(y) then return y end
    if x:numel() == 0 then return y end
    local outer, C = x:size(1), x:size(2)
    local inner = x:numel() // (outer * C)
    local cap = 0
    for _, c in ipairs(CAPS) do if C <= c then cap = c; break end end
    if cap > 0 then K.variant("norm", x.dtype, "rms.cap" .. cap)
    else
      K.variant("norm", x.dtype, "rms.loop")
      if C % 4 ~= 0 then K.variant("norm", x.dtype, "rms.loop_rest") end
    end
    local n_cols = outer * inner
    prog(x.dtype)[("rms_cols<%s, %d>"):format(K.ctype[x.dtype], cap)]{
      grid = K.blocks(n_cols, 128, 1), block = 128 }(x, y, n_cols, C, inner, eps)
    return y
  end

  -- y = x / ||x||_F, one norm over the whole tensor.
  function lib.frobenius_normalize(x, y)
    local op = "frobenius_normalize"
    K.check_float(op, x, "x")
    K.check_same(op, x, y, "x", "y")
    if not K.writes(y) then return y end
    if x:numel() == 0 then return y end
    run_split(F.norm2, 0, x, y, nil, nil, 1, x:numel(), { kind = "plane" })
    return y
  end

  local function rows2d(op, f, x, y)
    K.check_float(op, x, "x")
    if x:dim() ~= 2 then K.fail(op, "x is %s, a matrix is needed", K.shape_str(x.shape)) end
    K.check_same(op, x, y, "x", "y")
    if not K.writes(y) then return y end
    by_rows(f, 0, x, y, nil, nil, x:size(1), x:size(2))
    return y
  end

  -- y = x / mean(|x|, dim = 2, keepdim) for a matrix x.
  function lib.l1_normalize(x, y) return rows2d("l1_normalize", F.mean_abs, x, y) end
  -- y = x / ||x||_2 over dim 2 (keepdim) for a matrix x.
  function lib.l2_normalize(x, y) return rows2d("l2_normalize", F.norm2, x, y) end
end

local function install(lib, K)
  local S = runners(K)
  install_softmax(lib, K, S)
  install_stat_norms(lib, K, S)
  install_scaled(lib, K, S)
end

-- the size-selected paths (kreach.ops' header)
local VARIANTS = {
  { name = "rows", when = "rows enough for two waves of blocks (softmax, log_softmax, instance, L1 and L2 norm): norm_rows, a block a row" },
  { name = "rows.affine", when = "layer_norm with rows enough for two waves: norm_rows with the elementwise weight and bias" },
  { name = "split", when = "too few rows (softmax, log_softmax, instance, L1, L2 norm) and the Frobenius norm: norm_stats, norm_finalize, norm_apply, one chunk a plane" },
  { name = "split.chunks", when = "split with planes too few and long enough (P >= 2 * 256 * 8 packs): several chunks a plane" },
  { name = "split.affine", when = "layer_norm with too few rows: the split scheme with the elementwise weight and bias" },
  { name = "split.affine.chunks", when = "split.affine with several chunks a row: norm_apply's blocks take the same chunk of neighbouring rows" },
  { name = "split.channel", when = "batch_norm_train: statistics over every (n, c) plane of a channel" },
  { name = "split.channel.chunks", when = "batch_norm_train with planes long enough for several chunks" },
  { name = "split.run", when = "group_norm: statistics over a run of channels" },
  { name = "split.run.chunks", when = "group_norm with planes long enough for several chunks" },
  { name = "packs.unrolled", when = "a block's range longer than 3 * threads packs: 4 packs a thread a step in thread_stats and map_range" },
  { name = "affine.unrolled", when = "packs.unrolled for layer_norm: the weight and bias packs in map_range's unrolled loop" },
  { name = "packs.unaligned", when = "a row or plane that is not a multiple of the pack: its elements before and after the 16-byte packs" },
  { name = "scalar", when = "layer_norm whose normalised size is not a multiple of the pack (any op with unaligned pointers): element by element" },
  { name = "scalar.unrolled", when = "scalar with a block's range longer than 3 * threads elements: 4 elements a thread a step" },
  { name = "rms.cap8", when = "rms_norm over at most 8 channels: the column kept in 8 registers" },
  { name = "rms.cap16", when = "rms_norm over 9 to 16 channels" },
  { name = "rms.cap32", when = "rms_norm over 17 to 32 channels" },
  { name = "rms.cap64", when = "rms_norm over 33 to 64 channels" },
  { name = "rms.loop", when = "rms_norm over more than 64 channels: the column read twice, 4 channels a step" },
  { name = "rms.loop_rest", when = "rms.loop with a channel count that is not a multiple of 4: the channels after the steps of 4" },
}

return { install = install, variants = VARIANTS,
         sources = { { name = "norm", source = SRC, instantiate = instantiate } } }
