-- kreach.ops.matmul: matrix products through cuBLAS (row-major, TF32 off; f16 and bf16
-- accumulate in fp32; f64 is DGEMM, the oracle). Shapes follow torch.matmul for the cases the
-- suites use: 2-D @ 2-D, batched 3-D @ 3-D, and N-D @ 2-D (the leading dimensions of A are
-- flattened into rows, which is exact for contiguous tensors).
-- Matrix-vector products (N = 1) are memory-bound: a dedicated kernel streams A once with
-- 16-byte loads, a block per row, where a GEMM would tile for reuse that is not there.
local tensor = require "kreach.core.tensor"
local cublas = require "kreach.core.cublas"

local GEMV = [==[
template <typename T, bool VEC>
__global__ void __launch_bounds__(256) gemv(const T *__restrict__ A, const T *__restrict__ x,
                                            T *__restrict__ y, i64 K) {
  typedef typename Acc<T>::type Ac;
  __shared__ Ac scratch[32];
  const T *row = A + (i64)blockIdx.x * K;
  Ac acc = 0;
  if (VEC) {
    const int N = Pack<T>::N;
    const i64 np = K / N;
    const Pack<T> *ra = reinterpret_cast<const Pack<T> *>(row);
    const Pack<T> *rx = reinterpret_cast<const Pack<T> *>(x);
    for (i64 p = threadIdx.x; p < np; p += blockDim.x) {
      Pack<T> a = ra[p], b = rx[p];
#pragma unroll
      for (int k = 0; k < N; k++) acc += ld(a.v[k]) * ld(b.v[k]);
    }
    for (i64 k = np * N + threadIdx.x; k < K; k += blockDim.x) acc += ld(row[k]) * ld(x[k]);
  } else {
    for (i64 k = threadIdx.x; k < K; k += blockDim.x) acc += ld(row[k]) * ld(x[k]);
  }
  acc = block_sum(acc, scratch);
  if (threadIdx.x == 0) y[blockIdx.x] = st<T>(acc);
}
]==]

local function gemv_instantiate(T)
  return { ("gemv<%s, true>"):format(T), ("gemv<%s, false>"):format(T) }
end

local function install(lib, K)
  -- c = op(a) @ op(b); opts: trans_a, trans_b (the last two dimensions), alpha, beta
  function lib.matmul(a, b, c, opts)
    local op = "matmul"
    opts = opts or {}
    K.check_float(op, a, "A")
    K.check_float(op, b, "B")
    K.check_float(op, c, "C")
    K.check_dtype(op, b, a.dtype, "B")
    K.check_dtype(op, c, a.dtype, "C")
    local ta, tb = opts.trans_a or false, opts.trans_b or false
    local da, db = a:dim(), b:dim()
    if da < 2 or db < 2 then
      K.fail(op, "A is %s and B is %s: both need at least 2 dimensions", K.shape_str(a.shape),
        K.shape_str(b.shape))
    end
    local as, bs = a.shape, b.shape
    local m, ka = as[da - 1], as[da]
    if ta then m, ka = ka, m end
    local kb, n = bs[db - 1], bs[db]
    if tb then kb, n = n, kb end
    if ka ~= kb then
      K.fail(op, "A%s is %s and B%s is %s: inner sizes %d and %d differ", ta and "^T" or "",
        K.shape_str(as), tb and "^T" or "", K.shape_str(bs), ka, kb)
    end
    local want
    local A, B, C = a, b, c
    if db == 2 then
      -- N-D @ 2-D: rows of A's leading dimensions times B
      want = {}
      for i = 1, da - 2 do want[i] = as[i] end
      want[#want + 1] = m
      want[#want + 1] = n
      if da > 2 then
        if ta then K.fail(op, "trans_a with a %d-D A is not supported", da) end
        local rows = a:numel() // ka
        A = a:view(rows, ka)
        K.check_shape(op, c, want, "C")
        C = c:view(rows, n)
      end
    elseif da == 3 and db == 3 then
      if as[1] ~= bs[1] then
        K.fail(op, "A is %s and B is %s: batch sizes differ", K.shape_str(as), K.shape_str(bs))
      end
      want = { as[1], m, n }
    else
      K.fail(op, "A is %s and B is %s: supported are 2-D, batched 3-D, and N-D @ 2-D",
        K.shape_str(as), K.shape_str(bs))
    end
    K.check_shape(op, c, want, "C")
    if not K.writes(c) then return c end
    if n == 1 and A:dim() == 2 and not ta and not opts.alpha and not opts.beta then
      local es = tensor.dtype_size(a.dtype)
      local vec = ka % (16 // es) == 0 and K.aligned(A, 16) and K.aligned(B, 16)
      K.variant("matmul", a.dtype, vec and "gemv.packs" or "gemv.scalar")
      -- the block's 256 threads stride over the row's packs (or elements) more than once
      if (vec and ka // (16 // es) or ka) > 256 then K.variant("matmul", a.dtype, "gemv.long") end
      local p = K.program("gemv", GEMV, a.dtype, gemv_instantiate)
      p[("gemv<%s, %s>"):format(K.ctype[a.dtype], vec and "true" or "false")]{ grid = m, block = 256 }(A, B, C, ka)
      return c
    end
    K.variant("matmul", a.dtype, "gemm")
    cublas.gemm(C, A, B, { trans_a = ta, trans_b = tb, alpha = opts.alpha,
                                            beta = opts.beta })
    return c
  end
end

-- the size-selected paths (kreach.ops' header)
local VARIANTS = {
  { name = "gemm", when = "every product but a matrix-vector one: cuBLAS" },
  { name = "gemv.packs", when = "a matrix-vector product (N = 1) whose K is a multiple of the pack: 16-byte loads" },
  { name = "gemv.scalar", when = "a matrix-vector product whose K is not a multiple of the pack: element by element" },
  { name = "gemv.long", when = "a matrix-vector product whose row is more than 256 packs (or elements): each thread takes several" },
}

return { install = install, variants = VARIANTS,
         sources = { { name = "gemv", source = GEMV, instantiate = gemv_instantiate } } }
