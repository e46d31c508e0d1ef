-- kreach.ops.linear: torch.nn.Linear with its activation, y = act(x W^T + b), the layers of a
-- recommender's MLPs (DLRM-Bench). The bias is broadcast into y first and cuBLAS adds x W^T to it
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
]==]

local THREADS = 256

local function instantiate(T) return { ("bias_rows<%s>"):format(T) } end

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
end

return { install = install, sources = { { name = "linear", source = SRC, instantiate = instantiate } } }
