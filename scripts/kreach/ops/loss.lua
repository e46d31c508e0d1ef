-- kreach.ops.loss: scalar losses (mean squared error, smooth L1, KL divergence, hinge, cross
-- entropy, triplet margin), each reducing its inputs to a one-element output.
--
-- Every loss is a two-stage reduction, deterministic for a given device: a first kernel reads
-- each input once (16-byte packs where alignment allows) and leaves one fp64 partial sum per
-- block (elementwise losses) or per row (row losses); a one-block kernel then sums those
-- partials in fp64 and divides. Elements are computed in Acc<T> (fp32, fp64 for the oracle);
-- each pack's few terms are summed in Acc<T> and added to a per-thread fp64 sum, so no long fp32
-- chain exists anywhere (fp64 adds cost nothing next to the memory traffic). Semantics are
-- PyTorch's, NaN propagation included (clamp(min=0) keeps a NaN, unlike fmax).
local core = require "kreach.core"
local snippets = require "kreach.ops.snippets"
local tensor = require "kreach.core.tensor"

local SRC = snippets.LD_PACK .. snippets.ONLINE_SOFTMAX .. [==[
enum { MSE, SMOOTH_L1, KL_DIV, HINGE };

/* The pointwise loss of prediction x and target y; a and b are the op's parameters (smooth L1:
 * beta and 0.5 / beta). */
template <int OP, typename A> __device__ __forceinline__ A pair_op(A x, A y, A a, A b) {
  if (OP == MSE) { A d = x - y; return d * d; }
  if (OP == SMOOTH_L1) {
    /* 0.5 d^2 / beta as d^2 * (0.5 / beta): exact for beta = 1 (and any power of two), within
     * an ulp otherwise; beta = 0 always takes the L1 branch */
    A d = kabs(x - y);
    return d < a ? d * d * b : d - (A)0.5 * a;
  }
  if (OP == KL_DIV) {
    /* kl_div(log(x), y) pointwise is xlogy(y, y) - y * log(x), with xlogy(0, .) = 0. Computed
     * as y * log(y / x): one log, not two, and no cancellation between two large logs when
     * y ~ x. Where the quotient over- or underflows or is not positive, the formula as written
     * (which gives PyTorch's inf and NaN cases). y = 0 keeps PyTorch's -(0 * log(x)): NaN for
     * x = 0, NaN or inf. */
    if (y == (A)0) return -(y * klog(x));
    A q = y / x;
    if (q > (A)0 && q < kinf<A>()) return y * klog(q);
    return y * klog(y) - y * klog(x);
  }
  if (OP == HINGE) { A v = (A)1 - x * y; return v < (A)0 ? (A)0 : v; }
  return x;
}

/* partial[block] = sum of pair_op over this block's share of n elements (grid-stride, two packs
 * a step, both loaded before either is used, for more bytes in flight). With BCAST, y is a
 * vector of `cols` values broadcast along the last dimension of x: element i pairs with
 * y[i % cols]. VEC needs 16-byte aligned x and y and, with BCAST, cols % Pack::N == 0 (a pack
 * never crosses a row; then n % Pack::N == 0 too). */
template <typename T, int OP, bool VEC, bool BCAST>
__global__ void __launch_bounds__(256)
pair_sum(const T *__restrict__ x, const T *__restrict__ y, i64 n, i64 cols, double pa,
         double pb, double *__restrict__ partial) {
  typedef typename Acc<T>::type A;
  __shared__ double scratch[32];
  const A a = (A)pa, b = (A)pb;
  const int N = VEC ? Pack<T>::N : 1;
  const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  const i64 stride = (i64)gridDim.x * blockDim.x * N;
  i64 i = tid * N;
  /* the column of element i, advanced by stride % cols each step: no division in the loop */
  i64 col = BCAST ? i % cols : 0;
  const i64 step = BCAST ? stride % cols : 0;
  double acc = 0;
  for (; i + stride + N <= n; i += 2 * stride) {
    i64 col1 = 0;
    if (BCAST) { col1 = col + step; if (col1 >= cols) col1 -= cols; }
    const i64 j0 = BCAST ? col : i, j1 = BCAST ? col1 : i + stride;
    A s = 0;
    if (VEC) {
      Pack<T> x0 = ld_pack(x + i), y0 = ld_pack(y + j0);
      Pack<T> x1 = ld_pack(x + i + stride), y1 = ld_pack(y + j1);
#pragma unroll
      for (int k = 0; k < Pack<T>::N; k++) s += pair_op<OP>(ld(x0.v[k]), ld(y0.v[k]), a, b);
#pragma unroll
      for (int k = 0; k < Pack<T>::N; k++) s += pair_op<OP>(ld(x1.v[k]), ld(y1.v[k]), a, b);
    } else {
      T x0 = x[i], y0 = y[j0], x1 = x[i + stride], y1 = y[j1];
      s = pair_op<OP>(ld(x0), ld(y0), a, b) + pair_op<OP>(ld(x1), ld(y1), a, b);
    }
    acc += (double)s;
    if (BCAST) { col = col1 + step; if (col >= cols) col -= cols; }
  }
  if (i + N <= n) { /* one pack left for this thread */
    const i64 j0 = BCAST ? col : i;
    A s = 0;
    if (VEC) {
      Pack<T> x0 = ld_pack(x + i), y0 = ld_pack(y + j0);
#pragma unroll
      for (int k = 0; k < Pack<T>::N; k++) s += pair_op<OP>(ld(x0.v[k]), ld(y0.v[k]), a, b);
    } else {
      s = pair_op<OP>(ld(x[i]), ld(y[j0]), a, b);
    }
    acc += (double)s;
  }
  if (VEC && !BCAST) { /* the last n % N elements */
    i64 j = n - n % N + tid;
    if (tid < n % N) acc += (double)pair_op<OP>(ld(x[j]), ld(y[j]), a, b);
  }
  acc = block_sum(acc, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

/* Cross entropy of an N x C matrix of logits: row_loss[r] = logsumexp(row) - row[target[r]],
 * row_count[r] = 1; a target equal to ignore_index gives 0 and 0 (PyTorch's default
 * ignore_index = -100 leaves the row out of the mean). A target out of range gives NaN, where
 * PyTorch stops with a device assertion. One warp a row (WARP; rows of a few thousand) or one
 * block a row, grid-stride; each thread loads U packs before it uses them. */
template <typename T, bool VEC, bool WARP>
__global__ void __launch_bounds__(256)
cross_entropy_rows(const T *__restrict__ logits, const long long *__restrict__ target, i64 rows,
                   i64 cols, long long ignore_index, double *__restrict__ row_loss,
                   double *__restrict__ row_count) {
  typedef typename Acc<T>::type A;
  __shared__ A sm[32], ss[32];
  const int N = VEC ? Pack<T>::N : 1, U = 4;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const int g = WARP ? lane : threadIdx.x;                 /* this thread's place in its row */
  const i64 gstep = (i64)(WARP ? 32 : blockDim.x) * N;     /* elements a row step covers */
  const i64 first = WARP ? ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5 : blockIdx.x;
  const i64 every = WARP ? ((i64)gridDim.x * blockDim.x) >> 5 : gridDim.x;
  for (i64 r = first; r < rows; r += every) {
    const T *row = logits + r * cols;
    A m = -kinf<A>(), s = 0;
    for (i64 c0 = (i64)g * N; c0 < cols; c0 += U * gstep) {
      A v[U][N];
#pragma unroll
      for (int u = 0; u < U; u++) {
        const i64 c = c0 + u * gstep;
        if (c < cols) {
          if (VEC) {
            Pack<T> p = ld_pack(row + c);
#pragma unroll
            for (int k = 0; k < N; k++) v[u][k] = ld(p.v[k]);
          } else {
            v[u][0] = ld(row[c]);
          }
        }
      }
#pragma unroll
      for (int u = 0; u < U; u++)
        if (c0 + u * gstep < cols) lse_add<A, N>(m, s, v[u]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      A om = __shfl_xor_sync(0xffffffffu, m, o), os = __shfl_xor_sync(0xffffffffu, s, o);
      lse_merge(m, s, om, os);
    }
    if (!WARP) {
      if (lane == 0) { sm[w] = m; ss[w] = s; }
      __syncthreads();
      if (threadIdx.x == 0)
        for (int k = 1; k < nw; k++) lse_merge(m, s, sm[k], ss[k]);
    }
    if (g == 0) {
      long long t = target[r];
      if (t == ignore_index) {
        row_loss[r] = 0;
        row_count[r] = 0;
      } else {
        A picked = (t >= 0 && t < cols) ? ld(row[t]) : kinf<A>() - kinf<A>(); /* NaN */
        row_loss[r] = (double)(m + klog(s) - picked);
        row_count[r] = 1;
      }
    }
    if (!WARP) __syncthreads(); /* sm and ss are reused by the next row */
  }
}

/* The p-norm of a difference row, from the per-row accumulated sum (P: 1, 2, or 0 for a
 * general finite p > 0, whose terms are |d|^p). */
template <int P, typename A> __device__ __forceinline__ A norm_term(A d, A p) {
  if (P == 1) return kabs(d);
  if (P == 2) return d * d;
  return kpow(kabs(d), p);
}
template <int P, typename A> __device__ __forceinline__ A norm_finish(A s, A p) {
  if (P == 1) return s;
  if (P == 2) return ksqrt(s);
  return kpow(s, (A)1 / p);
}

/* One block per row of N x D anchor, positive, negative:
 * row_loss[r] = clamp_min(margin + ||a - p + eps|| - ||a - n + eps||, 0) (pairwise_distance adds
 * eps to the difference). The row sums and the final combination are fp64: the loss is a small
 * difference of two large norms, which fp32 would leave with a relative error near 1e-5. */
template <typename T, int P, bool VEC>
__global__ void __launch_bounds__(256)
triplet_rows(const T *__restrict__ an, const T *__restrict__ po, const T *__restrict__ ne,
             i64 rows, i64 cols, double margin, double p, double eps,
             double *__restrict__ row_loss) {
  typedef typename Acc<T>::type A;
  __shared__ double s1[32], s2[32];
  const int N = VEC ? Pack<T>::N : 1;
  const A pa = (A)p, e = (A)eps;
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const i64 base = r * cols;
    double dp = 0, dn = 0;
    for (i64 c = (i64)threadIdx.x * N; c < cols; c += (i64)blockDim.x * N) {
      A tp = 0, tn = 0;
      if (VEC) {
        Pack<T> x = *reinterpret_cast<const Pack<T> *>(an + base + c);
        Pack<T> y = *reinterpret_cast<const Pack<T> *>(po + base + c);
        Pack<T> z = *reinterpret_cast<const Pack<T> *>(ne + base + c);
#pragma unroll
        for (int k = 0; k < N; k++) {
          A xa = ld(x.v[k]);
          tp += norm_term<P>(xa - ld(y.v[k]) + e, pa);
          tn += norm_term<P>(xa - ld(z.v[k]) + e, pa);
        }
      } else {
        A xa = ld(an[base + c]);
        tp = norm_term<P>(xa - ld(po[base + c]) + e, pa);
        tn = norm_term<P>(xa - ld(ne[base + c]) + e, pa);
      }
      dp += (double)tp;
      dn += (double)tn;
    }
    dp = block_sum(dp, s1);
    dn = block_sum(dn, s2);
    if (threadIdx.x == 0) {
      double v = (margin + norm_finish<P>(dp, p)) - norm_finish<P>(dn, p);
      row_loss[r] = v < 0 ? 0 : v;
    }
  }
}

/* out[0] = sum(num[0:n]) / den, or sum(num) / sum(den_v) when den_v is given (RATIO), in one
 * block: each thread sums a strided share in fp64, then a tree. */
template <typename T, bool RATIO>
__global__ void __launch_bounds__(1024)
finish(const double *__restrict__ num, const double *__restrict__ den_v, i64 n, double den,
       T *__restrict__ out) {
  __shared__ double s1[32], s2[32];
  double a = 0, b = 0;
  for (i64 i = threadIdx.x; i < n; i += blockDim.x) {
    a += num[i];
    if (RATIO) b += den_v[i];
  }
  a = block_sum(a, s1);
  if (RATIO) b = block_sum(b, s2);
  if (threadIdx.x == 0) out[0] = st<T>((typename Acc<T>::type)(a / (RATIO ? b : den)));
}
]==]

local PAIR = { mse = 0, smooth_l1 = 1, kl_div = 2, hinge = 3 }
local THREADS = 256
local FINISH_THREADS = 1024
-- the caps a test may lower (kreach.ops.with_limits): blocks of a row kernel's launch
local LIMITS = { rows_grid_max = 0x7fffffff }

local function instantiate(T)
  local inst = {}
  local codes = {}
  for _, code in pairs(PAIR) do codes[#codes + 1] = code end
  table.sort(codes)
  for _, code in ipairs(codes) do
    for _, vec in ipairs({ "true", "false" }) do
      for _, bc in ipairs({ "true", "false" }) do
        inst[#inst + 1] = ("pair_sum<%s, %d, %s, %s>"):format(T, code, vec, bc)
      end
    end
  end
  for _, vec in ipairs({ "true", "false" }) do
    inst[#inst + 1] = ("cross_entropy_rows<%s, %s, true>"):format(T, vec)
    inst[#inst + 1] = ("cross_entropy_rows<%s, %s, false>"):format(T, vec)
    for _, p in ipairs({ 0, 1, 2 }) do
      inst[#inst + 1] = ("triplet_rows<%s, %d, %s>"):format(T, p, vec)
    end
  end
  inst[#inst + 1] = ("finish<%s, true>"):format(T)
  inst[#inst + 1] = ("finish<%s, false>"):format(T)
  return inst
end

-- What the losses share (K: the operators' kit): their program, the resident blocks of a kernel,
-- the finish of a mean, and the mean of a pointwise loss (pair_mean).
local function helpers(K)
  local function prog(dtype) return K.program("loss", SRC, dtype, instantiate) end
  local function pack_elems(dtype) return 16 // tensor.dtype_size(dtype) end

  -- Blocks of `threads` that are resident at once on the whole device for kernel `k`, limited
  -- by threads and registers (65536 a multiprocessor on every GPU since sm_50, allocated per
  -- warp in units of 256): a grid of exactly this many runs in one wave, with no tail.
  local function resident_blocks(k, threads)
    local dev = core.device()
    local regs = math.max(k.attributes.registers, 1)
    local per_warp = (regs * 32 + 255) // 256 * 256
    local by_regs = 65536 // (per_warp * (threads // 32))
    local by_threads = dev.max_threads_per_sm // threads
    return math.max(1, math.min(by_regs, by_threads)) * dev.sm_count
  end

  -- (the checks are written out in each operator so that errors point at its caller)
  local ONE = "out is %s, a one-element tensor ({} or {1}) is expected"

  -- out = sum(partial) / den, partial an f64 vector of n values
  local function finish(p, T, partial, n, den, out)
    if n > FINISH_THREADS then K.variant("loss", out.dtype, "finish.loop") end
    p[("finish<%s, false>"):format(T)]{ grid = 1, block = FINISH_THREADS }(partial, partial, n,
      den, out)
  end

  -- A mean over n elements of pair_op(x, y): first stage per block, then the finish.
  local function pair_mean(op, code, x, y, out, pa, pb, den, bcast)
    bcast = bcast or false
    local dtype = x.dtype
    local n = x:numel()
    local cols = bcast and x:size(-1) or 1
    local per = pack_elems(dtype)
    local vec = K.aligned(x, 16) and K.aligned(y, 16) and (not bcast or cols % per == 0)
    if not vec then per = 1 end
    local p = prog(dtype)
    local T = K.ctype[dtype]
    local k = p[("pair_sum<%s, %d, %s, %s>"):format(T, code, tostring(vec), tostring(bcast))]
    local blocks = math.min(K.blocks(n, THREADS, per), resident_blocks(k, THREADS))
    -- pair_sum's paths: two packs a step while the grid (capped at the resident blocks) does
    -- not cover n, then one pack, then the tail of n % N elements (not with BCAST)
    local kind = bcast and "pair.bcast" or "pair"
    K.variant("loss", dtype, kind .. (vec and ".packs" or ".scalar"))
    if blocks * THREADS * per + per <= n then K.variant("loss", dtype, kind .. ".loop") end
    if vec and not bcast and n % per ~= 0 then K.variant("loss", dtype, "pair.tail") end
    local partial = K.empty({ blocks }, "f64")
    k{ grid = blocks, block = THREADS }(x, y, n, math.max(cols, 1), pa or 0, pb or 0, partial)
    finish(p, T, partial, blocks, den or n, out)
    partial:free()
    return out
  end
  return { prog = prog, pack_elems = pack_elems, resident_blocks = resident_blocks, finish = finish, pair_mean = pair_mean, ONE = ONE }
end

-- the means of pointwise losses: MSE, smooth L1, KL divergence, hinge
local function install_pointwise(lib, K, H)
  local pair_mean, ONE = H.pair_mean, H.ONE
  -- out = mean((pred - target)^2)
  function lib.mse_loss(pred, target, out)
    local op = "mse_loss"
    K.check_float(op, pred, "pred")
    K.check_same(op, pred, target, "pred", "target")
    K.check_tensor(op, out, "out")
    K.check_dtype(op, out, pred.dtype, "out")
    if out:numel() ~= 1 then K.fail(op, ONE, K.shape_str(out.shape)) end
    if not K.writes(out) then return out end
    return pair_mean(op, PAIR.mse, pred, target, out)
  end

  -- out = F.smooth_l1_loss(pred, target, beta=beta), mean: per element |d| < beta ?
  -- 0.5 d^2 / beta : |d| - 0.5 beta (beta = 0 is the L1 loss)
  function lib.smooth_l1_loss(pred, target, out, beta)
    local op = "smooth_l1_loss"
    K.check_float(op, pred, "pred")
    K.check_same(op, pred, target, "pred", "target")
    K.check_tensor(op, out, "out")
    K.check_dtype(op, out, pred.dtype, "out")
    if out:numel() ~= 1 then K.fail(op, ONE, K.shape_str(out.shape)) end
    beta = beta or 1.0
    if type(beta) ~= "number" or beta < 0 then
      K.fail(op, "beta is %s, a non-negative number is needed", tostring(beta))
    end
    if not K.writes(out) then return out end
    return pair_mean(op, PAIR.smooth_l1, pred, target, out, beta, beta > 0 and 0.5 / beta or 0)
  end

  -- out = F.kl_div(torch.log(pred), target, reduction='batchmean'):
  -- sum(xlogy(target, target) - target * log(pred)) / pred.size(0)
  function lib.kl_div_batchmean(pred, target, out)
    local op = "kl_div_batchmean"
    K.check_float(op, pred, "pred")
    K.check_same(op, pred, target, "pred", "target")
    K.check_tensor(op, out, "out")
    K.check_dtype(op, out, pred.dtype, "out")
    if out:numel() ~= 1 then K.fail(op, ONE, K.shape_str(out.shape)) end
    if pred:dim() < 1 then K.fail(op, "pred is 0-D, batchmean needs a batch dimension") end
    if not K.writes(out) then return out end
    return pair_mean(op, PAIR.kl_div, pred, target, out, 0, 0, pred:size(1))
  end

  -- out = mean(clamp(1 - pred * target, min=0)) with target (M,) broadcast along the last
  -- dimension of pred (..., M): element [..., j] uses target[j]
  function lib.hinge_loss(pred, target, out)
    local op = "hinge_loss"
    K.check_float(op, pred, "pred")
    K.check_tensor(op, target, "target")
    K.check_dtype(op, target, pred.dtype, "target")
    if pred:dim() < 1 then K.fail(op, "pred is 0-D, it needs a last dimension to broadcast along") end
    K.check_shape(op, target, { pred:size(-1) }, "target")
    K.check_tensor(op, out, "out")
    K.check_dtype(op, out, pred.dtype, "out")
    if out:numel() ~= 1 then K.fail(op, ONE, K.shape_str(out.shape)) end
    if not K.writes(out) then return out end
    return pair_mean(op, PAIR.hinge, pred, target, out, 0, 0, nil, true)
  end
end

-- cross entropy
local function install_cross_entropy(lib, K, H)
  local prog, pack_elems, finish, ONE = H.prog, H.pack_elems, H.finish, H.ONE
  -- out = F.cross_entropy(logits, targets): mean over rows of logsumexp(row) - row[target],
  -- logits (N, C), targets (N,) i64 class indices; rows whose target is ignore_index (default
  -- -100, PyTorch's) are left out of the sum and of the count.
  function lib.cross_entropy(logits, targets, out, ignore_index)
    local op = "cross_entropy"
    K.check_float(op, logits, "logits")
    if logits:dim() ~= 2 then
      K.fail(op, "logits is %s, (N, C) is expected", K.shape_str(logits.shape))
    end
    K.check_tensor(op, targets, "targets")
    K.check_dtype(op, targets, "i64", "targets")
    K.check_shape(op, targets, { logits:size(1) }, "targets")
    K.check_tensor(op, out, "out")
    K.check_dtype(op, out, logits.dtype, "out")
    if out:numel() ~= 1 then K.fail(op, ONE, K.shape_str(out.shape)) end
    if not K.writes(out) then return out end
    local rows, cols = logits:size(1), logits:size(2)
    local dtype = logits.dtype
    local T = K.ctype[dtype]
    local per = pack_elems(dtype)
    local vec = cols % per == 0 and K.aligned(logits, 16)
    if not vec then per = 1 end
    local p = prog(dtype)
    local loss_r = K.empty({ math.max(rows, 1) }, "f64")
    local count_r = K.empty({ math.max(rows, 1) }, "f64")
    if rows > 0 then
      -- a warp a row when there are rows enough for every warp the device holds (or the rows
      -- are short), else a block a row, so that few long rows still spread over the device
      local dev = core.device()
      local warp = cols <= 1024 or rows * 32 >= dev.sm_count * dev.max_threads_per_sm
      local rows_per_block = warp and THREADS // 32 or 1
      local grid = math.min((rows + rows_per_block - 1) // rows_per_block, LIMITS.rows_grid_max)
      local kind = warp and "ce.warp" or "ce.block"
      K.variant("loss", dtype, kind .. (vec and ".packs" or ".scalar"))
      -- a row's step covers 32 (a warp) or 256 (a block) packs, 4 steps a pass
      if cols > 4 * (warp and 32 or THREADS) * per then K.variant("loss", dtype, kind .. ".long") end
      if grid * rows_per_block < rows then K.variant("loss", dtype, "ce.grid_loop") end
      p[("cross_entropy_rows<%s, %s, %s>"):format(T, tostring(vec), tostring(warp))]{
        grid = grid,
        block = THREADS }(logits, targets, rows, cols, ignore_index or -100, loss_r, count_r)
    end
    -- no rows (or every row ignored) gives 0 / 0 = NaN, like PyTorch
    if rows == 0 then loss_r:fill(0); count_r:fill(0) end
    if rows > FINISH_THREADS then K.variant("loss", dtype, "finish.loop") end
    p[("finish<%s, true>"):format(T)]{ grid = 1, block = FINISH_THREADS }(loss_r, count_r,
      math.max(rows, 1), 1, out)
    loss_r:free()
    count_r:free()
    return out
  end
end

-- the triplet margin loss
local function install_triplet(lib, K, H)
  local prog, pack_elems, finish, ONE = H.prog, H.pack_elems, H.finish, H.ONE
  -- out = nn.TripletMarginLoss(margin, p, eps, swap=False)(anchor, positive, negative), mean:
  -- per row clamp_min(margin + ||a - p + eps||_p - ||a - n + eps||_p, 0), rows of (N, D)
  function lib.triplet_margin_loss(anchor, positive, negative, out, margin, p, eps)
    local op = "triplet_margin_loss"
    K.check_float(op, anchor, "anchor")
    K.check_same(op, anchor, positive, "anchor", "positive")
    K.check_same(op, anchor, negative, "anchor", "negative")
    if anchor:dim() ~= 2 then
      K.fail(op, "anchor is %s, (N, D) is expected", K.shape_str(anchor.shape))
    end
    K.check_tensor(op, out, "out")
    K.check_dtype(op, out, anchor.dtype, "out")
    if out:numel() ~= 1 then K.fail(op, ONE, K.shape_str(out.shape)) end
    margin, p, eps = margin or 1.0, p or 2, eps or 1e-6
    if type(p) ~= "number" or not (p > 0) or p == math.huge then
      K.fail(op, "p is %s, a finite number > 0 is supported", tostring(p))
    end
    if not K.writes(out) then return out end
    local rows, cols = anchor:size(1), anchor:size(2)
    local dtype = anchor.dtype
    local T = K.ctype[dtype]
    local per = pack_elems(dtype)
    local vec = cols % per == 0 and K.aligned(anchor, 16) and K.aligned(positive, 16)
      and K.aligned(negative, 16)
    local pcode = (p == 1 and 1) or (p == 2 and 2) or 0
    local pr = prog(dtype)
    local loss_r = K.empty({ math.max(rows, 1) }, "f64")
    if rows > 0 then
      local grid = math.min(rows, LIMITS.rows_grid_max)
      K.variant("loss", dtype, vec and "triplet.packs" or "triplet.scalar")
      if cols > THREADS * (vec and per or 1) then K.variant("loss", dtype, "triplet.long") end
      if grid < rows then K.variant("loss", dtype, "triplet.grid_loop") end
      pr[("triplet_rows<%s, %d, %s>"):format(T, pcode, tostring(vec))]{
        grid = grid, block = THREADS }(anchor, positive, negative,
        rows, cols, margin, p, eps, loss_r)
    else
      loss_r:fill(0) -- the mean of no rows is 0 / 0 = NaN, like PyTorch
    end
    finish(pr, T, loss_r, math.max(rows, 1), rows, out)
    loss_r:free()
    return out
  end
end

local function install(lib, K)
  local H = helpers(K)
  install_pointwise(lib, K, H)
  install_cross_entropy(lib, K, H)
  install_triplet(lib, K, H)
end

-- the size-selected paths (kreach.ops' header)
local VARIANTS = {
  { name = "pair.packs", when = "mse, smooth L1 and KL divergence (aligned): pair_sum over 16-byte packs" },
  { name = "pair.tail", when = "pair.packs over a count that is not a multiple of the pack: the last n % N elements" },
  { name = "pair.scalar", when = "mse, smooth L1, KL divergence over unaligned pointers: element by element", alignment = true },
  { name = "pair.loop", when = "pair_sum over more elements than the resident blocks cover (about 8 * SMs * 256 packs): two packs a step" },
  { name = "pair.bcast.packs", when = "the hinge loss (its target broadcast along rows) with rows that are whole packs" },
  { name = "pair.bcast.scalar", when = "the hinge loss with rows that are not a multiple of the pack: element by element" },
  { name = "pair.bcast.loop", when = "the hinge loss over more elements than the resident blocks cover: the column advanced by the stride" },
  { name = "ce.warp.packs", when = "cross entropy, rows of at most 1024 or rows enough for every warp, whole packs: a warp a row" },
  { name = "ce.warp.scalar", when = "cross entropy a warp a row, rows that are not a multiple of the pack" },
  { name = "ce.warp.long", when = "cross entropy a warp a row, rows longer than 4 steps of the warp (4 * 32 packs or elements)" },
  { name = "ce.block.packs", when = "cross entropy with few rows longer than 1024, whole packs: a block a row" },
  { name = "ce.block.scalar", when = "cross entropy a block a row, rows that are not a multiple of the pack" },
  { name = "ce.block.long", when = "cross entropy a block a row, rows longer than 4 steps of the block (4 * 256 packs or elements)" },
  { name = "ce.grid_loop", when = "cross entropy over more rows than one launch's blocks hold (limit rows_grid_max)" },
  { name = "triplet.packs", when = "the triplet margin loss with rows that are whole packs" },
  { name = "triplet.scalar", when = "the triplet margin loss with rows that are not a multiple of the pack" },
  { name = "triplet.long", when = "the triplet margin loss with rows longer than 256 packs (or elements): several steps a thread" },
  { name = "triplet.grid_loop", when = "the triplet margin loss over more rows than one launch's blocks (limit rows_grid_max)" },
  { name = "finish.loop", when = "more than 1024 partial sums (rows of cross entropy or triplet loss): several a thread in finish" },
}

return { install = install, variants = VARIANTS, limits = LIMITS,
         sources = { { name = "loss", source = SRC, instantiate = instantiate } } }
