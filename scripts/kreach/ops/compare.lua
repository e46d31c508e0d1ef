-- kreach.ops.compare: error metrics of an output against a reference (the oracle), in one pass
-- on the GPU with fp64 accumulation: sum of squared differences, sum of squared references,
-- the largest absolute difference and reference, and the count of non-finite outputs.
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
]==]

local function install(lib, K)
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
    local kreach = require "kreach"
    local acc = kreach.zeros({ 8 }, "f64")
    local n = y:numel()
    local sms = kreach.device().sm_count
    local blocks = math.max(1, math.min(sms * 8, (n + 255) // 256))
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
    return {
      n = n,
      rel_l2 = r[2] > 0 and math.sqrt(r[1] / r[2]) or math.sqrt(r[1]),
      max_abs = r[3], -- stored as the bits of a double, read back as one
      max_ref = r[4],
      nonfinite = math.tointeger(r[5]),
      mean_ref = r[6] / n,
    }
  end
end

return {
  install = install,
  sources = { { name = "compare", source = SRC, instantiate = function(T)
    return { ("diff_stats<%s, double>"):format(T), ("diff_stats<%s, %s>"):format(T, T) }
  end } },
}
