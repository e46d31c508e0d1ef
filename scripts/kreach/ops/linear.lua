-- kreach.ops.linear: torch.nn.Linear with its activation, y = act(x W^T + b), the layers of a
-- recommender's MLPs (DLRM-Bench), and mul_add (y = a * b + c), DCNv2's cross combination. The bias is broadcast into y first and cuBLAS adds x W^T to it
-- (beta = 1, TF32 off), so that bias and product are rounded once together, as PyTorch's addmm
-- does; the activation (ReLU or sigmoid) then runs in place, a separate kernel as in PyTorch.
local SRC = [==[
#define LIN_THREADS 256
/* y[i, j] = b[j] over rows x cols */
template <typename T>
__global__ void __launch_bounds__(LIN_THREADS)
bias_rows(const T *__restrict__ b, T *__restrict__ y, i64 rows, i64 cols) {
  const i64 n = rows * cols;
  for (i64 e = (i64)blockIdx.x * LIN_THREADS + threadIdx.x; e < n; e += (i64)gridDim.x * LIN_THREADS)
    y[e] = b[e % cols];
}
/* y = a * b + c, elementwise over n (DCNv2's cross: x0 * (W V x + b) + x); y may be c */
template <typename T>
__global__ void __launch_bounds__(LIN_THREADS)
mul_add(const T *__restrict__ a, const T *__restrict__ b, const T *c, T *y, i64 n) {
  for (i64 e = (i64)blockIdx.x * LIN_THREADS + threadIdx.x; e < n; e += (i64)gridDim.x * LIN_THREADS)
    y[e] = st<T>(ld(a[e]) * ld(b[e]) + ld(c[e]));
}
]==]

local THREADS = 256

local function instantiate(T) return { ("bias_rows<%s>"):format(T), ("mul_add<%s>"):format(T) } end

local ACTIVATIONS = { relu = true, sigmoid = true }

local function install(lib, K)
  local OP = "linear"
  -- linear(x, w, b, y [, {activation = "relu" | "sigmoid"}]): y = act(x @ w^T + b); x [rows, in],
  -- w [out, in] (torch.nn.Linear's weight), b [out] or nil, y [rows, out], one floating dtype.
  function lib.linear(x, w, b, y, opts)
    opts = opts or {}
    for k in pairs(opts) do if k ~= "activation" then K.fail(OP, "unknown option '%s'", tostring(k)) end end
    local act = opts.activation
    if act ~= nil and not ACTIVATIONS[act] then K.fail(OP, "activation '%s': 'relu', 'sigmoid' or none", tostring(act)) end
    K.check_float(OP, x, "x")
    K.check_float(OP, w, "w")
    K.check_float(OP, y, "y")
    if x:dim() ~= 2 or w:dim() ~= 2 then
      K.fail(OP, "x is %s and w is %s: 2-D [rows, in] and [out, in] are needed", K.shape_str(x.shape), K.shape_str(w.shape))
    end
    local rows, n_in, n_out = x:size(1), x:size(2), w:size(1)
    if w:size(2) ~= n_in then K.fail(OP, "w is %s, expected [out, %d]", K.shape_str(w.shape), n_in) end
    K.check_dtype(OP, w, x.dtype, "w")
    K.check_shape(OP, y, { rows, n_out }, "y")
    K.check_dtype(OP, y, x.dtype, "y")
    if b ~= nil then
      K.check_tensor(OP, b, "b")
      K.check_shape(OP, b, { n_out }, "b")
      K.check_dtype(OP, b, x.dtype, "b")
    end
    if lib.meta then
      lib.matmul(x, w, y, { trans_b = true })
      return y
    end
    if rows == 0 or n_out == 0 then return y end
    if b ~= nil then
      local k = K.program("linear", SRC, x.dtype, instantiate)[("bias_rows<%s>"):format(K.ctype[x.dtype])]
      k{ grid = math.min(K.blocks(rows * n_out, THREADS, 1), 1 << 20), block = THREADS }(b, y, rows, n_out)
      lib.matmul(x, w, y, { trans_b = true, beta = 1 })
    else
      lib.matmul(x, w, y, { trans_b = true })
    end
    if act == "relu" then lib.relu(y, y) elseif act == "sigmoid" then lib.sigmoid(y, y) end
    return y
  end

  -- mul_add(a, b, c, y): y = a * b + c elementwise (one product and one sum, rounded once at
  -- the dtype); a, b, c and y of one shape and floating dtype; y may be c.
  function lib.mul_add(a, b, c, y)
    local op = "mul_add"
    K.check_float(op, a, "a")
    K.check_same(op, a, b, "a", "b")
    K.check_same(op, a, c, "a", "c")
    K.check_same(op, a, y, "a", "y")
    if not K.writes(y) then return y end
    local n = a:numel()
    if n == 0 then return y end
    local k = K.program("linear", SRC, a.dtype, instantiate)[("mul_add<%s>"):format(K.ctype[a.dtype])]
    k{ grid = math.min(K.blocks(n, THREADS, 1), 1 << 20), block = THREADS }(a, b, c, y, n)
    return y
  end
end

return { install = install, sources = { { name = "linear", source = SRC, instantiate = instantiate } } }
