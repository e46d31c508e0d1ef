-- kreach.ops.compare: error metrics of an output against a reference (the oracle), in one pass
-- on the GPU with fp64 accumulation: sum of squared differences, sum of squared references,
-- the largest absolute difference and reference, and the count of non-finite outputs.
local core = require "kreach.core"
local tensors = require "kreach.tensors"

local SRC = [==[
/* acc: [0] sum (y - r)^2, [1] sum r^2, [2] max |y - r| (as bits), [3] max |r| (as bits),
 *      [4] non-finite outputs, [5] sum r, [6] sum r^2 again for the centred norm (unused) */
template <typename T, typename R>
__global__ void diff_stats(const T *__restrict__ y, const R *__restrict__ r, i64 n,
                           double *acc) {
  __shared__ double s1[32], s2[32], s3[32];
  double d2 = 0, r2 = 0, rs = 0, dmax = 0, rmax = 0, bad = 0;
  i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    double yv = (double)ld(y[i]), rv = (double)ld(r[i]);
    if (!isfinite(yv)) { bad += 1; continue; }
    double d = yv - rv;
    d2 += d * d; r2 += rv * rv; rs += rv;
    dmax = fmax(dmax, fabs(d)); rmax = fmax(rmax, fabs(rv));
  }
  d2 = block_sum(d2, s1); r2 = block_sum(r2, s2); rs = block_sum(rs, s3);
  double b = block_sum(bad, s1);
  dmax = warp_max(dmax); rmax = warp_max(rmax);
  if ((threadIdx.x & 31) == 0) {
    /* non-negative doubles order like their bit patterns */
    atomicMax((unsigned long long *)&acc[2], (unsigned long long)__double_as_longlong(dmax));
    atomicMax((unsigned long long *)&acc[3], (unsigned long long)__double_as_longlong(rmax));
  }
  if (threadIdx.x == 0) {
    atomicAdd(&acc[0], d2); atomicAdd(&acc[1], r2); atomicAdd(&acc[4], b); atomicAdd(&acc[5], rs);
  }
}

/* Integer outputs (argmax, ...): count mismatches; [0] holds the count. */
template <typename T>
__global__ void int_mismatch(const T *__restrict__ y, const T *__restrict__ r, i64 n,
                             double *acc) {
  __shared__ double s[32];
  double c = 0;
  i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c += y[i] != r[i];
  c = block_sum(c, s);
  if (threadIdx.x == 0) atomicAdd(&acc[0], c);
}

/* The correctness metrics of an output y against its oracle r, pass 1 (docs/correctness.md).
 * m: [0] sum (y - r)^2 over pairs where both are finite, [1] sum r^2, [2] sum r (finite r),
 *    [3] max |y - r| (bits), [4] max |r| (bits), [5] y non-finite where r is finite,
 *    [6] r non-finite and y not the same value, [7] [8] elements failing
 *    allclose(y, r, atol = tol, rtol = tol) for tol = ta, tb (NaN fails, as in PyTorch),
 *    [9] finite r (the count the sums are over) */
template <typename T, typename R>
__global__ void metrics1(const T *__restrict__ y, const R *__restrict__ r, i64 n, double ta,
                         double tb, double *m) {
  __shared__ double sh[32];
  double d2 = 0, r2 = 0, rs = 0, dmax = 0, rmax = 0, nf = 0, sp = 0, fa = 0, fb = 0, fin = 0;
  i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    double yv = (double)ld(y[i]), rv = (double)ld(r[i]);
    if (!isfinite(rv)) {
      bool same = (isnan(rv) && isnan(yv)) || yv == rv;
      sp += !same;
      fa += !(yv == rv); fb += !(yv == rv); /* allclose: inf == inf passes, NaN never */
      continue;
    }
    fin += 1; r2 += rv * rv; rs += rv; rmax = fmax(rmax, fabs(rv));
    if (!isfinite(yv)) { nf += 1; fa += 1; fb += 1; continue; }
    double d = fabs(yv - rv);
    d2 += d * d; dmax = fmax(dmax, d);
    fa += d > ta + ta * fabs(rv); fb += d > tb + tb * fabs(rv);
  }
  double v[10] = { d2, r2, rs, 0, 0, nf, sp, fa, fb, fin };
  for (int k = 0; k < 10; k++) {
    if (k == 3 || k == 4) continue;
    double s = block_sum(v[k], sh);
    if (threadIdx.x == 0) atomicAdd(&m[k], s);
  }
  dmax = warp_max(dmax); rmax = warp_max(rmax);
  if ((threadIdx.x & 31) == 0) {
    atomicMax((unsigned long long *)&m[3], (unsigned long long)__double_as_longlong(dmax));
    atomicMax((unsigned long long *)&m[4], (unsigned long long)__double_as_longlong(rmax));
  }
}

/* Pass 2, around the oracle's mean mu: [0] sum (r - mu)^2, [1] max |r - mu| (bits), over
 * finite r. */
template <typename R>
__global__ void metrics2(const R *__restrict__ r, i64 n, double mu, double *m) {
  __shared__ double sh[32];
  double c2 = 0, cmax = 0;
  i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    double rv = (double)ld(r[i]);
    if (!isfinite(rv)) continue;
    double c = rv - mu;
    c2 += c * c; cmax = fmax(cmax, fabs(c));
  }
  c2 = block_sum(c2, sh);
  if (threadIdx.x == 0) atomicAdd(&m[0], c2);
  cmax = warp_max(cmax);
  if ((threadIdx.x & 31) == 0)
    atomicMax((unsigned long long *)&m[1], (unsigned long long)__double_as_longlong(cmax));
}

/* A 128-bit hash of n bytes (two sums of mixed 32-bit words and their positions: any change
 * of a byte changes it but with probability ~2^-64 per lane). Words are read 4 bytes at a time
 * from a 4-byte-aligned start; the last n % 4 bytes one by one. */
__device__ __forceinline__ u64 mix64(u64 z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__global__ void hash_bytes(const void *__restrict__ data, i64 n, u64 *h) {
  const unsigned char *p = reinterpret_cast<const unsigned char *>(data);
  u64 a = 0, b = 0;
  i64 words = n / 4;
  const unsigned *w = reinterpret_cast<const unsigned *>(p);
  i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
    u64 v = w[i];
    a += mix64(v ^ ((u64)i * 0x9e3779b97f4a7c15ull));
    b += mix64((v << 32) + (u64)i * 0xd6e8feb86659fd93ull + 0x632be59bd9b4e019ull);
  }
  if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
    i64 j = words * 4 + threadIdx.x;
    u64 v = p[j];
    a += mix64(v ^ ((u64)j * 0x2545f4914f6cdd1dull) ^ 0x5851f42d4c957f2dull);
    b += mix64(v + (u64)j * 0x9e3779b97f4a7c15ull + 0x14057b7ef767814full);
  }
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  if ((threadIdx.x & 31) == 0) { atomicAdd(&h[0], a); atomicAdd(&h[1], b); }
}
]==]

-- x / 0: 0 when x is 0 too (an exact answer to an all-zero oracle), infinite otherwise
local function ratio(x, d) if d > 0 then return x / d end return x > 0 and math.huge or 0 end

-- derive(m) -> m with the metrics derived from the two passes' sums and maxima (sum_d2, sum_r2,
-- sum_c2, max_abs, max_ref, max_c): rel_l2, max_scaled, centred_l2, centred_max, const_l2,
-- const_max (docs/correctness.md). Pure, so that it is tested on hand-computed sums.
local function derive(m)
  m.rel_l2 = ratio(math.sqrt(m.sum_d2), math.sqrt(m.sum_r2))
  m.max_scaled = ratio(m.max_abs, m.max_ref)
  m.centred_l2 = ratio(math.sqrt(m.sum_d2), math.sqrt(m.sum_c2))
  m.centred_max = ratio(m.max_abs, m.max_c)
  m.const_l2 = ratio(math.sqrt(m.sum_c2), math.sqrt(m.sum_r2))
  m.const_max = ratio(m.max_c, m.max_ref)
  return m
end

-- from_diff(n, r) -> lib.compare's result from diff_stats's sums `r` (1-based).
local function from_diff(n, r)
  return {
    n = n,
    rel_l2 = r[2] > 0 and math.sqrt(r[1] / r[2]) or math.sqrt(r[1]),
    max_abs = r[3], -- stored as the bits of a double, read back as one
    max_ref = r[4],
    nonfinite = math.tointeger(r[5]),
    mean_ref = n > 0 and r[6] / n or 0,
  }
end

-- The oracle's mean over its finite elements, from pass 1's sums (metrics1's m).
local function mean_of(a)
  local finite = math.tointeger(a[10])
  return finite > 0 and a[3] / finite or 0
end

-- assemble(n, a, c, tols) -> the metrics of lib.metrics from pass 1's ten sums `a` (metrics1's
-- m, 1-based) and pass 2's two `c` (metrics2's m), derived.
local function assemble(n, a, c, tols)
  return derive{
    n = n, finite = math.tointeger(a[10]), sum_d2 = a[1], sum_r2 = a[2], mean_ref = mean_of(a),
    max_abs = a[4], max_ref = a[5], sum_c2 = c[1], max_c = c[2],
    nonfinite = math.tointeger(a[6]), special_mismatch = math.tointeger(a[7]),
    allclose_fail = { math.tointeger(a[8]), math.tointeger(a[9]) }, allclose_tols = tols,
  }
end

local function install(lib, K)
  -- a grid-stride launch: enough blocks to fill the GPU, no more than the work needs
  local function blocks_for(n)
    local sms = core.device().sm_count
    return math.max(1, math.min(sms * 8, (n + 255) // 256))
  end

  -- compare(y, ref) -> { n, rel_l2, max_abs, max_ref, nonfinite, mean_ref } for a float output
  -- against its f64 reference; for integer outputs { n, mismatches }.
  function lib.compare(y, ref)
    local op = "compare"
    K.check_tensor(op, y, "y")
    K.check_tensor(op, ref, "ref")
    if not K.same_shape(y.shape, ref.shape) then
      K.fail(op, "y is %s but ref is %s", K.shape_str(y.shape), K.shape_str(ref.shape))
    end
    if lib.meta then return { n = y:numel() } end
    local acc = tensors.zeros({ 8 }, "f64")
    local n = y:numel()
    local blocks = blocks_for(n)
    if not K.is_float[y.dtype] then
      K.check_dtype(op, ref, y.dtype, "ref")
      local p = K.program("compare", SRC, y.dtype, function(T) return { ("int_mismatch<%s>"):format(T) } end, "int")
      p[("int_mismatch<%s>"):format(K.ctype[y.dtype])]{ grid = blocks, block = 256 }(y, ref, n, acc)
      local r = acc:to_table()
      acc:free()
      return { n = n, mismatches = math.tointeger(r[1]) }
    end
    local R = K.ctype[ref.dtype]
    local name = ("diff_stats<%s, %s>"):format(K.ctype[y.dtype], R)
    local p = K.program("compare", SRC, y.dtype, function() return { name } end, ref.dtype)
    p[name]{ grid = blocks, block = 256 }(y, ref, n, acc)
    local r = acc:to_table()
    acc:free()
    return from_diff(n, r)
  end

  -- metrics(y, ref, {tols = {ta, tb}}) -> the correctness metrics of a float output against
  -- its f64 oracle (docs/correctness.md), in two passes on the GPU:
  --   n, finite (finite oracle elements), sum_d2, sum_r2, mean_ref, max_abs, max_ref,
  --   sum_c2 and max_c (of the oracle around its mean), nonfinite (y non-finite where the
  --   oracle is finite), special_mismatch (the oracle non-finite and y not equal to it),
  --   allclose_fail = { [ta] = count, [tb] = count };
  -- and derived: rel_l2, max_scaled (max_abs / max_ref), centred_l2, centred_max, and the
  -- scores of the best constant output (const_l2, const_max) and of zeros (1 and 1).
  -- Integer and bool outputs: { n, mismatches }.
  function lib.metrics(y, ref, opts)
    local op = "metrics"
    opts = opts or {}
    K.check_tensor(op, y, "y")
    K.check_tensor(op, ref, "ref")
    if not K.same_shape(y.shape, ref.shape) then
      K.fail(op, "y is %s but ref is %s", K.shape_str(y.shape), K.shape_str(ref.shape))
    end
    if lib.meta then return { n = y:numel() } end
    if not K.is_float[y.dtype] then return lib.compare(y, ref) end
    local n = y:numel()
    local tols = opts.tols or { 1e-4, 1e-2 }
    local R = K.ctype[ref.dtype]
    local n1 = ("metrics1<%s, %s>"):format(K.ctype[y.dtype], R)
    local n2 = ("metrics2<%s>"):format(R)
    local p = K.program("compare_metrics", SRC, y.dtype, function() return { n1, n2 } end, ref.dtype)
    local acc = tensors.zeros({ 10 }, "f64")
    if n > 0 then p[n1]{ grid = blocks_for(n), block = 256 }(y, ref, n, tols[1], tols[2], acc) end
    local a = acc:to_table()
    acc:free()
    local acc2 = tensors.zeros({ 2 }, "f64")
    if n > 0 then p[n2]{ grid = blocks_for(n), block = 256 }(ref, n, mean_of(a), acc2) end
    local c = acc2:to_table()
    acc2:free()
    return assemble(n, a, c, tols)
  end

  -- hash(t) -> a 32-hex-digit string: a 128-bit hash of the tensor's bytes, on the GPU.
  function lib.hash(t)
    K.check_tensor("hash", t, "t")
    if lib.meta then return "meta" end
    local nb = t:nbytes()
    local h = tensors.zeros({ 2 }, "i64")
    if nb > 0 then
      if t:data_ptr() % 4 ~= 0 then K.fail("hash", "the tensor's data is not 4-byte aligned") end
      local p = K.program("compare_hash", SRC, "u8", function() return { "hash_bytes" } end)
      p.hash_bytes{ grid = blocks_for(nb // 4 + 1), block = 256 }(t, nb, h)
    end
    local a, b = string.unpack("<I8I8", h:to_bytes())
    h:free()
    return ("%016x%016x"):format(a, b)
  end
end

return {
  install = install,
  derive = derive,
  assemble = assemble,
  from_diff = from_diff,
  SOURCE = SRC,
  sources = { { name = "compare", source = SRC, instantiate = function(T)
    return { ("diff_stats<%s, double>"):format(T), ("diff_stats<%s, %s>"):format(T, T),
             ("metrics1<%s, double>"):format(T), "metrics2<double>", "hash_bytes" }
  end } },
}
