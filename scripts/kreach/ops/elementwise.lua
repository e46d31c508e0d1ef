-- kreach.ops.elementwise: activations and other elementwise maps, scaling, row scaling,
-- triangular masks. One vectorised kernel (16-byte loads and stores, one pack a thread,
-- scalar tail) serves every unary map; the map is a compile-time template argument.
-- Semantics follow PyTorch's (NaN propagates through relu and hardtanh as it does there).
local tensor = require "kreach.core.tensor"

local SRC = [==[
enum { RELU, LEAKY_RELU, SIGMOID, TANH, SWISH, GELU, GELU_TANH, SELU, HARDSIGMOID, SOFTPLUS,
       SOFTSIGN, ELU, HARDTANH, SCALE, AFFINE };

template <int OP, typename A> __device__ __forceinline__ A unary_op(A x, A a, A b) {
  if (OP == RELU) return x > (A)0 ? x : (x != x ? x : (A)0);
  if (OP == LEAKY_RELU) return x > (A)0 ? x : x * a;
  if (OP == SIGMOID) return (A)1 / ((A)1 + kexp(-x));
  if (OP == TANH) return ktanh(x);
  if (OP == SWISH) return x / ((A)1 + kexp(-x));
  if (OP == GELU) return (A)0.5 * x * ((A)1 + kerf(x * (A)0.70710678118654752440));
  if (OP == GELU_TANH) {
    const A c = (A)0.79788456080286535588; /* sqrt(2 / pi) */
    return (A)0.5 * x * ((A)1 + ktanh(c * (x + (A)0.044715 * x * x * x)));
  }
  if (OP == SELU) {
    const A alpha = (A)1.6732632423543772848170429916717;
    const A scale = (A)1.0507009873554804934193349852946;
    return x > (A)0 ? scale * x : scale * alpha * kexpm1(x);
  }
  if (OP == HARDSIGMOID) return kmin(kmax(x + (A)3, (A)0), (A)6) / (A)6;
  if (OP == SOFTPLUS) return x * a > b ? x : klog1p(kexp(x * a)) / a; /* a = beta, b = threshold */
  if (OP == SOFTSIGN) return x / ((A)1 + kabs(x));
  if (OP == ELU) return x > (A)0 ? x : a * kexpm1(x);
  if (OP == HARDTANH) return x != x ? x : (x < a ? a : (x > b ? b : x));
  if (OP == SCALE) return x * a;
  if (OP == AFFINE) return x * a + b;
  return x;
}

template <typename T, int OP, bool VEC>
__global__ void unary(const T *__restrict__ x, T *__restrict__ y, i64 n, double pa, double pb) {
  typedef typename Acc<T>::type A;
  const A a = (A)pa, b = (A)pb;
  const int N = VEC ? Pack<T>::N : 1;
  i64 i = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (VEC && i + N <= n) {
    Pack<T> p = *reinterpret_cast<const Pack<T> *>(x + i);
#pragma unroll
    for (int k = 0; k < Pack<T>::N; k++) p.v[k] = st<T>(unary_op<OP>(ld(p.v[k]), a, b));
    *reinterpret_cast<Pack<T> *>(y + i) = p;
  } else {
    for (i64 j = i; j < n && j < i + N; j++) y[j] = st<T>(unary_op<OP>(ld(x[j]), a, b));
  }
}

/* C[i, j] = a[i] * B[i, j] over an R x C matrix */
template <typename T, bool VEC>
__global__ void row_scale(const T *__restrict__ a, const T *__restrict__ B, T *__restrict__ C,
                          i64 rows, i64 cols) {
  const int N = VEC ? Pack<T>::N : 1;
  i64 n = rows * cols;
  i64 i = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (VEC && i + N <= n) {
    typename Acc<T>::type s = ld(a[i / cols]); /* cols % N == 0: one row per pack */
    Pack<T> p = *reinterpret_cast<const Pack<T> *>(B + i);
#pragma unroll
    for (int k = 0; k < Pack<T>::N; k++) p.v[k] = st<T>(s * ld(p.v[k]));
    *reinterpret_cast<Pack<T> *>(C + i) = p;
  } else {
    for (i64 j = i; j < n && j < i + N; j++) C[j] = st<T>(ld(a[j / cols]) * ld(B[j]));
  }
}

/* y = triu(x, 0) (UPPER) or tril(x, 0) over the last two dims (batch of R x C matrices) */
template <typename T, bool UPPER>
__global__ void tri_mask(const T *__restrict__ x, T *__restrict__ y, i64 rows, i64 cols, i64 n) {
  i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  i64 c = i % cols, r = (i / cols) % rows;
  bool keep = UPPER ? (c >= r) : (c <= r);
  y[i] = keep ? x[i] : st<T>((typename Acc<T>::type)0);
}

/* y = (x + x^T) / 2 for a square n x n matrix */
template <typename T>
__global__ void symmetrize(const T *__restrict__ x, T *__restrict__ y, i64 n) {
  i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n * n) return;
  i64 r = i / n, c = i % n;
  y[i] = st<T>((ld(x[r * n + c]) + ld(x[c * n + r])) * (typename Acc<T>::type)0.5);
}
]==]

local UNARY = { relu = 0, leaky_relu = 1, sigmoid = 2, tanh = 3, swish = 4, gelu = 5,
  gelu_tanh = 6, selu = 7, hardsigmoid = 8, softplus = 9, softsign = 10, elu = 11,
  hardtanh = 12, scale = 13, affine = 14 }
local THREADS = 256

local function instantiate(T)
  local inst = {}
  for _, code in pairs(UNARY) do
    inst[#inst + 1] = ("unary<%s, %d, true>"):format(T, code)
    inst[#inst + 1] = ("unary<%s, %d, false>"):format(T, code)
  end
  table.sort(inst)
  for _, v in ipairs({ "true", "false" }) do
    inst[#inst + 1] = ("row_scale<%s, %s>"):format(T, v)
    inst[#inst + 1] = ("tri_mask<%s, %s>"):format(T, v)
  end
  inst[#inst + 1] = ("symmetrize<%s>"):format(T)
  return inst
end

local function install(lib, K)
  local function prog(dtype)
    return K.program("elementwise", SRC, dtype, instantiate)
  end

  local function unary(op, x, y, a, b)
    K.check_float(op, x, "x")
    K.check_same(op, x, y, "x", "y")
    if not K.writes(y) then return y end
    local n = x:numel()
    if n == 0 then return y end
    local p = prog(x.dtype)
    local T = K.ctype[x.dtype]
    local vec = K.aligned(x, 16) and K.aligned(y, 16)
    local per = vec and 16 // tensor.dtype_size(x.dtype) or 1
    if not vec then K.variant("elementwise", x.dtype, "unary.scalar")
    else
      if n >= per then K.variant("elementwise", x.dtype, "unary.packs") end
      if n % per ~= 0 then K.variant("elementwise", x.dtype, "unary.tail") end
    end
    local k = p[("unary<%s, %d, %s>"):format(T, UNARY[op], vec and "true" or "false")]
    k{ grid = K.blocks(n, THREADS, per), block = THREADS }(x, y, n, a or 0, b or 0)
    return y
  end

  -- y = f(x), elementwise; y may be x. Extra arguments are the op's parameters.
  function lib.relu(x, y) return unary("relu", x, y) end
  function lib.leaky_relu(x, y, slope) return unary("leaky_relu", x, y, slope or 0.01) end
  function lib.sigmoid(x, y) return unary("sigmoid", x, y) end
  function lib.tanh(x, y) return unary("tanh", x, y) end
  function lib.swish(x, y) return unary("swish", x, y) end
  function lib.gelu(x, y) return unary("gelu", x, y) end
  function lib.gelu_tanh(x, y) return unary("gelu_tanh", x, y) end
  function lib.selu(x, y) return unary("selu", x, y) end
  function lib.hardsigmoid(x, y) return unary("hardsigmoid", x, y) end
  function lib.softplus(x, y, beta, threshold) return unary("softplus", x, y, beta or 1, threshold or 20) end
  function lib.softsign(x, y) return unary("softsign", x, y) end
  function lib.elu(x, y, alpha) return unary("elu", x, y, alpha or 1) end
  function lib.hardtanh(x, y, lo, hi) return unary("hardtanh", x, y, lo or -1, hi or 1) end
  function lib.scale(x, y, s) return unary("scale", x, y, s) end
  function lib.affine(x, y, a, b) return unary("affine", x, y, a, b) end

  -- C = diag(a) @ B, as a[i] * B[i, j]
  function lib.row_scale(a, B, C)
    local op = "row_scale"
    K.check_float(op, a, "a")
    K.check_float(op, B, "B")
    if a:dim() ~= 1 or B:dim() ~= 2 or a:size(1) ~= B:size(1) then
      K.fail(op, "a is %s and B is %s: a must have one element per row of B",
        K.shape_str(a.shape), K.shape_str(B.shape))
    end
    K.check_same(op, B, C, "B", "C")
    K.check_dtype(op, a, B.dtype, "a")
    if not K.writes(C) then return C end
    local rows, cols = B:size(1), B:size(2)
    local per = 16 // tensor.dtype_size(B.dtype)
    local vec = cols % per == 0 and K.aligned(B, 16) and K.aligned(C, 16)
    if not vec then per = 1 end
    K.variant("elementwise", B.dtype, vec and "row_scale.packs" or "row_scale.scalar")
    local p = prog(B.dtype)
    p[("row_scale<%s, %s>"):format(K.ctype[B.dtype], vec and "true" or "false")]{
      grid = K.blocks(rows * cols, THREADS, per), block = THREADS }(a, B, C, rows, cols)
    return C
  end

  local function tri(op, upper, x, y)
    K.check_float(op, x, "x")
    if x:dim() < 2 then K.fail(op, "x has %d dimensions, at least 2 are needed", x:dim()) end
    K.check_same(op, x, y, "x", "y")
    if not K.writes(y) then return y end
    local n = x:numel()
    local p = prog(x.dtype)
    p[("tri_mask<%s, %s>"):format(K.ctype[x.dtype], upper and "true" or "false")]{
      grid = K.blocks(n, THREADS, 1), block = THREADS }(x, y, x:size(-2), x:size(-1), n)
    return y
  end
  -- y = triu(x) / tril(x) over the last two dimensions; y may be x
  function lib.triu(x, y) return tri("triu", true, x, y) end
  function lib.tril(x, y) return tri("tril", false, x, y) end

  -- y = (x + x^T) / 2 for a square matrix; y must not be x
  function lib.symmetrize(x, y)
    local op = "symmetrize"
    K.check_float(op, x, "x")
    if x:dim() ~= 2 or x:size(1) ~= x:size(2) then
      K.fail(op, "x is %s, a square matrix is needed", K.shape_str(x.shape))
    end
    K.check_same(op, x, y, "x", "y")
    if not K.writes(y) then return y end
    local n = x:size(1)
    prog(x.dtype)[("symmetrize<%s>"):format(K.ctype[x.dtype])]{
      grid = K.blocks(n * n, THREADS, 1), block = THREADS }(x, y, n)
    return y
  end
end

-- the size-selected paths (kreach.ops' header); triu, tril and symmetrize have one each
local VARIANTS = {
  { name = "unary.packs", when = "a unary map over at least one 16-byte pack (the pointers aligned)" },
  { name = "unary.tail", when = "a unary map over a count that is not a multiple of the pack: the last thread's elements one at a time" },
  { name = "unary.scalar", when = "a unary map over an unaligned pointer: element by element", alignment = true },
  { name = "row_scale.packs", when = "row_scale with a row length that is a multiple of the pack (16 bytes)" },
  { name = "row_scale.scalar", when = "row_scale with a row length that is not a multiple of the pack" },
}

return { install = install, variants = VARIANTS,
         sources = { { name = "elementwise", source = SRC, instantiate = instantiate } } }
