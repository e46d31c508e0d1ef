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
/* A logistic head's rows, one warp a row i of x [rows, K]: z = x_i . w + b, p = sigmoid(z),
 * l_i = BCE(p, t_i) with PyTorch's logs clamped at -100, g_i = dL/dz of the mean loss as
 * PyTorch's autograd chains it: BCE's gradient (p - t_i) / max(p (1 - p), 1e-12) / rows, then
 * sigmoid's p (1 - p). That is (p - t_i) / rows wherever p (1 - p) >= 1e-12, and it vanishes
 * where the sigmoid saturates (p rounded to 0 or 1), as PyTorch's does (a DLRM step that
 * diverges then stalls as PyTorch's stalls). dx_i = g_i w. */
template <typename T>
__global__ void __launch_bounds__(LIN_THREADS)
bce_head_rows(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
              const T *__restrict__ t, T *__restrict__ l, T *__restrict__ g, T *__restrict__ dx, i64 rows, i64 K) {
  typedef typename Acc<T>::type A;
  const int lane = threadIdx.x & 31;
  const i64 warps = (i64)gridDim.x * (LIN_THREADS / 32);
  for (i64 i = (i64)blockIdx.x * (LIN_THREADS / 32) + (threadIdx.x >> 5); i < rows; i += warps) {
    A z = (A)0;
    for (i64 k = lane; k < K; k += 32) z += ld(x[i * K + k]) * ld(w[k]);
    z = warp_sum(z) + ld(b[0]);
    const A p = (A)1 / ((A)1 + kexp(-z));
    const A ti = ld(t[i]);
    const A lp = kmax(klog(p), (A)-100), lq = kmax(klog((A)1 - p), (A)-100);
    const A pq = ((A)1 - p) * p;
    const A gi = (A)1 / (A)rows * (p - ti) / kmax(pq, (A)1e-12) * pq;
    if (lane == 0) {
      l[i] = st<T>(-(ti * lp + ((A)1 - ti) * lq));
      g[i] = st<T>(gi);
    }
    for (i64 k = lane; k < K; k += 32) dx[i * K + k] = st<T>(gi * ld(w[k]));
  }
}
]==]

local THREADS = 256
-- the caps a test may lower (kreach.ops.with_limits): blocks of a launch
local LIMITS = { grid_max = 1 << 20 }

local function instantiate(T)
  return { ("bias_rows<%s>"):format(T), ("mul_add<%s>"):format(T), ("bce_head_rows<%s>"):format(T) }
end

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
      local want = K.blocks(rows * n_out, THREADS, 1)
      K.variant("linear", x.dtype, "bias_rows")
      if want > LIMITS.grid_max then K.variant("linear", x.dtype, "bias_rows.grid_loop") end
      k{ grid = math.min(want, LIMITS.grid_max), block = THREADS }(b, y, rows, n_out)
      lib.matmul(x, w, y, { trans_b = true, beta = 1 })
    else
      lib.matmul(x, w, y, { trans_b = true })
    end
    if act == "relu" then lib.relu(y, y) elseif act == "sigmoid" then lib.sigmoid(y, y) end
    return y
  end

  -- bce_head(x, w, b, target, loss, dx, dw, db): a recommender's head, Linear(K, 1) + sigmoid +
  -- binary cross-entropy (mean over the rows), and its gradients: x [rows, K], w [1, K], b [1],
  -- target [rows] (0 or 1); loss [1], dx [rows, K], dw [1, K], db [1]. Rows in one kernel (a warp a
  -- row: the logit, the loss term, dL/dz and dx), then the means and sums by kreach.ops.reduce:
  -- dw = sum over rows of g_i x_i (row_scale, then a column sum), db = sum of g_i.
  function lib.bce_head(x, w, b, target, loss, dx, dw, db)
    local op = "bce_head"
    K.check_float(op, x, "x")
    if x:dim() ~= 2 then K.fail(op, "x is %s, [rows, K] is needed", K.shape_str(x.shape)) end
    local rows, Kd = x:size(1), x:size(2)
    for _, c in ipairs({ { w, { 1, Kd }, "w" }, { b, { 1 }, "b" }, { target, { rows }, "target" }, { loss, { 1 }, "loss" },
                         { dx, { rows, Kd }, "dx" }, { dw, { 1, Kd }, "dw" }, { db, { 1 }, "db" } }) do
      K.check_tensor(op, c[1], c[3])
      K.check_shape(op, c[1], c[2], c[3])
      K.check_dtype(op, c[1], x.dtype, c[3])
    end
    local l = K.empty({ rows }, x.dtype)
    local g = K.empty({ rows }, x.dtype)
    local gx = K.empty({ rows, Kd }, x.dtype)
    if K.writes(dx, l, g) and rows > 0 then
      local k = K.program("linear", SRC, x.dtype, instantiate)[("bce_head_rows<%s>"):format(K.ctype[x.dtype])]
      local grid = math.min((rows + 7) // 8, LIMITS.grid_max)
      K.variant("linear", x.dtype, "bce")
      if Kd > 32 then K.variant("linear", x.dtype, "bce.long") end
      if grid * 8 < rows then K.variant("linear", x.dtype, "bce.grid_loop") end
      k{ grid = grid, block = THREADS }(x, w, b, target, l, g, dx, rows, Kd)
    end
    lib.mean(l, loss, 1)
    lib.sum(g, db, 1)
    lib.row_scale(g, x, gx)
    lib.sum(gx, dw, 1)
    if not lib.meta then
      l:free()
      g:free()
      gx:free()
    end
    return loss
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
    local want = K.blocks(n, THREADS, 1)
    K.variant("linear", a.dtype, "mul_add")
    if want > LIMITS.grid_max then K.variant("linear", a.dtype, "mul_add.grid_loop") end
    k{ grid = math.min(want, LIMITS.grid_max), block = THREADS }(a, b, c, y, n)
    return y
  end
end

-- the size-selected paths (kreach.ops' header)
local VARIANTS = {
  { name = "bias_rows", when = "linear with a bias: the bias broadcast into y before the GEMM adds to it" },
  { name = "bias_rows.grid_loop", when = "bias_rows over more elements than one launch's blocks (limit grid_max)" },
  { name = "mul_add", when = "mul_add: a thread an element" },
  { name = "mul_add.grid_loop", when = "mul_add over more elements than one launch's blocks (limit grid_max)" },
  { name = "bce", when = "bce_head: a warp a row" },
  { name = "bce.long", when = "bce_head with rows longer than 32 features: several a lane" },
  { name = "bce.grid_loop", when = "bce_head over more rows than one launch's warps (limit grid_max)" },
}

return { install = install, variants = VARIANTS, limits = LIMITS,
         sources = { { name = "linear", source = SRC, instantiate = instantiate } } }
