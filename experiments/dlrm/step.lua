-- A DLRM training step written with kreach's own operators (issue 18): the model, the
-- configurations and the initialisation of experiments/workloads/dlrm.py (facebookresearch/dlrm's
-- structure), forward, backward and plain SGD, with a substitution API: a DLRM-Bench candidate
-- replaces the operator of its problem.
--
--   local dlrm = dofile("experiments/dlrm/step.lua")
--   local s = dlrm.new("kaggle", { seed = 1 })        -- or { meta = true }: shape-only tensors
--   local loss = s:step(1)                            -- one step on data batch 1 (a tensor [1])
--   s:substitute(7, cand)                             -- cand = { forward =, k = } (measure.lua)
--   s:differs({ { problem = 7, sub = cand } })         -- nil, or why the substituted step is not the plain one
--   s:cross_check{ steps = 10, python = "python3" }   -- the losses of N Lua steps against PyTorch's
--
-- The step, in launch order, with the DLRM-Bench problem of each part:
--   bottom MLP (problem 10: Linear + ReLU layers)
--   26 embedding bags, one id a sample, into emb [B, 26 D] (problem 1)
--   dot interaction [B, D + 351] (problem 7)
--   top MLP but its last layer (Linear + ReLU)
--   head: Linear(256 -> 1) + sigmoid + BCE (mean) and its gradients (problem 11)
--   the top MLP's gradients (ReLU's mask, dW = dZ^T X, db = column sums, dX = dZ W)
--   the interaction's gradients (problem 8)
--   the bottom MLP's gradients
--   each table's gradient: its lookups' rows and summed gradients (problem 5), then SGD on
--   those rows; SGD on every dense parameter.
-- A problem's operator is called with the problem's own arguments, in its order: the baseline is
-- the problem's reference on the step's tensors, and a candidate gets the same list.
local kreach = require "kreach"
local cjson = require "cjson"
local ops_mod = require "kreach.ops"
local meta = require "kreach.meta"
local output = require "kreach.atomic"
local text = require "kreach.text"

local M = {}

-- experiments/workloads/dlrm.py's CONFIGS (tests/lua/dlrm_step_spec.lua checks them against it)
local KAGGLE_ROWS = { 1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
                      27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572 }
local MLPERF_ROWS = { 39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346,
                      10, 2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36 }
M.CONFIGS = {
  kaggle = { rows = KAGGLE_ROWS, dim = 16, bot = { 13, 512, 256, 64, 16 }, top = { 512, 256, 1 }, batch = 128,
             lr = 0.1, max_rows = 0 },
  mlperf = { rows = MLPERF_ROWS, dim = 128, bot = { 13, 512, 256, 128 }, top = { 1024, 1024, 512, 256, 1 },
             batch = 2048, lr = 1.0, max_rows = 10000000 },
}
M.ZIPF_ALPHA = 1.05   -- dlrm.py's --zipf-alpha default
M.CLICK_RATE = 0.25   -- dlrm.py's targets: rand < 0.25

-- The step's own kernels: what no operator of kreach.ops does (ReLU's gradient, SGD, the
-- layout change of the embedding gradient, the data's transforms).
local SRC = [==[
#define TH 256
extern "C" __global__ void __launch_bounds__(TH) relu_grad(const float *__restrict__ y, const float *__restrict__ dy,
                                                          float *__restrict__ dz, long long n) {
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < n; i += (long long)gridDim.x * TH) dz[i] = y[i] > 0.f ? dy[i] : 0.f;
}
/* w -= lr * g */
extern "C" __global__ void __launch_bounds__(TH) sgd_dense(float *__restrict__ w, const float *__restrict__ g, float lr, long long n) {
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < n; i += (long long)gridDim.x * TH) w[i] -= lr * g[i];
}
/* table[rows[j], :] -= lr * grads[j, :] for j < *count (distinct rows: no two threads share a row) */
extern "C" __global__ void __launch_bounds__(TH) sgd_rows(float *__restrict__ table, const long long *__restrict__ rows,
    const float *__restrict__ grads, const long long *__restrict__ count, float lr, long long cap, long long D) {
  const long long n = (*count < cap ? *count : cap) * D;
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < n; i += (long long)gridDim.x * TH)
    table[rows[i / D] * D + i % D] -= lr * grads[i];
}
/* g [B, T, D] -> gt [T, B, D] (each table's gradient contiguous) */
extern "C" __global__ void __launch_bounds__(TH) split_tables(const float *__restrict__ g, float *__restrict__ gt,
                                                             long long B, long long T, long long D) {
  const long long n = B * T * D;
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < n; i += (long long)gridDim.x * TH) {
    const long long d = i % D, t = (i / D) % T, b = i / (D * T);
    gt[(t * B + b) * D + d] = g[i];
  }
}
/* dlrm's dense features: log(1 + 100 u) */
extern "C" __global__ void __launch_bounds__(TH) log1p100(float *__restrict__ x, long long n) {
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < n; i += (long long)gridDim.x * TH) x[i] = log1pf(x[i] * 100.f);
}
/* clicks: u < rate */
extern "C" __global__ void __launch_bounds__(TH) below(float *__restrict__ x, float rate, long long n) {
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < n; i += (long long)gridDim.x * TH) x[i] = x[i] < rate ? 1.f : 0.f;
}
/* 0, 1, ..., n - 1 */
extern "C" __global__ void __launch_bounds__(TH) iota(long long *__restrict__ x, long long n) {
  for (long long i = (long long)blockIdx.x * TH + threadIdx.x; i < n; i += (long long)gridDim.x * TH) x[i] = i;
}
]==]

local K = kreach.kernel{ source = SRC, name = "dlrm_step.cu" }

local function blocks(n)
  local b = (n + 255) // 256
  return math.max(1, math.min(b, 65535 * 4))
end

local Step = {}
Step.__index = Step

-- The table rows of a configuration: dlrm.py's table_rows (scale 1), capped at max_rows.
function M.table_rows(cfg, max_rows)
  local cap = max_rows
  if cap == nil then cap = cfg.max_rows end
  local rows = {}
  for i, n in ipairs(cfg.rows) do rows[i] = (cap and cap > 0) and math.min(n, cap) or n end
  return rows
end

-- new(name, {batch =, max_rows =, seed =, batches =, meta =}) -> a step with its parameters
-- initialised as dlrm.py initialises them (values from kreach's generators and `seed`) and
-- `batches` data batches (default 2, dlrm.py's --data-batches).
function M.new(name, o)
  o = o or {}
  local cfg = M.CONFIGS[name]
  if not cfg then error(("dlrm step: unknown configuration '%s' (kaggle, mlperf)"):format(tostring(name)), 2) end
  local s = setmetatable({ name = name, cfg = cfg, meta = o.meta or false, subs = {}, seed = o.seed or 1 }, Step)
  s.B = o.batch or cfg.batch
  s.D = cfg.dim
  s.T = #cfg.rows
  s.F = s.T + 1
  s.rows = M.table_rows(cfg, o.max_rows)
  s.lr = cfg.lr
  s.top_in = s.D + s.F * (s.F - 1) // 2
  s.lib = o.meta and ops_mod.get(true) or ops_mod.library{}
  local seed = s.seed
  local function nextseed() seed = seed + 1; return seed end
  local function empty(shape, dtype)
    if s.meta then return meta.new(shape, dtype or "f32", "step") end
    return kreach.empty(shape, dtype or "f32")
  end
  s.empty = empty
  local function init(t, how, a, b)
    if s.meta then return t end
    if how == "uniform" then t:uniform(a, b, nextseed()) else t:normal(a, b, nextseed()) end
    return t
  end
  -- the tables: U(-sqrt(1/n), sqrt(1/n))
  s.tables = {}
  for t, n in ipairs(s.rows) do s.tables[t] = init(empty({ n, s.D }), "uniform", -math.sqrt(1 / n), math.sqrt(1 / n)) end
  -- an MLP: weight N(0, sqrt(2 / (in + out))), bias N(0, sqrt(1 / out)); activations and gradients
  local function mlp(sizes)
    local layers = {}
    for l = 1, #sizes - 1 do
      local n, m = sizes[l], sizes[l + 1]
      layers[l] = { w = init(empty({ m, n }), "normal", 0, math.sqrt(2 / (m + n))), b = init(empty({ m }), "normal", 0, math.sqrt(1 / m)),
                    y = empty({ s.B, m }), dz = empty({ s.B, m }), dx = empty({ s.B, n }),
                    dw = empty({ m, n }), db = empty({ m }) }
    end
    return layers
  end
  s.bot = mlp(cfg.bot)
  local top_sizes = { s.top_in }
  for _, v in ipairs(cfg.top) do top_sizes[#top_sizes + 1] = v end
  s.top = mlp(top_sizes)
  s.head = table.remove(s.top) -- the last layer (K -> 1: w [1, K], b [1]), with sigmoid and the loss: problem 11
  s.head.y, s.head.dz = nil, nil
  s.dR = s.top[1].dx             -- the gradient of the interaction's output
  s.emb = empty({ s.B, s.T * s.D })
  s.emb3 = s.emb:view({ s.B, s.T, s.D })
  s.R = empty({ s.B, s.top_in })
  s.dxi = empty({ s.B, s.D })
  s.demb = empty({ s.B, s.T, s.D })
  s.demb_t = empty({ s.T, s.B, s.D })
  s.loss = empty({ 1 })
  s.offsets = empty({ s.B + 1 }, "i64")
  s.rows_out = empty({ s.B }, "i64")
  s.grads = empty({ s.B, s.D })
  s.count = empty({ 1 }, "i64")
  if not s.meta then K.iota{ grid = blocks(s.B + 1), block = 256 }(s.offsets, s.B + 1) end
  -- the data: dense log(1 + 100 u), ids Zipf-like (alpha 1.05, hashed over the rows), clicks
  s.data = {}
  for i = 1, o.batches or 2 do
    local d = { dense = empty({ s.B, cfg.bot[1] }), target = empty({ s.B }), idx = {} }
    if not s.meta then
      d.dense:uniform(0, 1, nextseed())
      K.log1p100{ grid = blocks(d.dense:numel()), block = 256 }(d.dense, d.dense:numel())
      d.target:uniform(0, 1, nextseed())
      K.below{ grid = blocks(s.B), block = 256 }(d.target, M.CLICK_RATE, s.B)
    end
    for t, n in ipairs(s.rows) do
      d.idx[t] = empty({ s.B }, "i64")
      if not s.meta then
        local u = kreach.empty({ s.B }, "f64"):uniform(0, 1, nextseed())
        s.lib.zipf_rows(u, d.idx[t], n, M.ZIPF_ALPHA)
        u:free()
      end
    end
    s.data[i] = d
  end
  return s
end

-- ---- the problems' operators, each with the problem's arguments ----

-- Runs problem `id`'s operator on `args`: its substitute's forward when there is one, else the
-- baseline `base(args)`.
function Step:run_op(id, args, base)
  local sub = self.subs[id]
  if sub then
    local ok, err = sub.call(args)
    if not ok then error(("substitute of problem %d: %s"):format(id, tostring(err)), 0) end
    return
  end
  base(args)
end

-- the step's arguments for problem `id` on data batch `d` (the problem's order)
function Step:args_of(id, d)
  if id == 1 then
    local a = {}
    for t = 1, self.T do a[t] = d.idx[t] end
    for t = 1, self.T do a[self.T + t] = self.tables[t] end
    a[#a + 1] = self.emb
    return a
  elseif id == 7 then return { self.bot[#self.bot].y, self.emb3, self.R }
  elseif id == 8 then return { self.bot[#self.bot].y, self.emb3, self.dR, self.dxi, self.demb }
  elseif id == 10 then
    local a = { d.dense }
    for _, l in ipairs(self.bot) do a[#a + 1] = l.w; a[#a + 1] = l.b end
    a[#a + 1] = self.bot[#self.bot].y
    return a
  elseif id == 11 then
    local h = self.head
    return { self.top[#self.top].y, d.target, h.w, h.b, self.loss, h.dx, h.dw, h.db }
  end
  error("no slot for problem " .. tostring(id), 2)
end

-- The slots of the step whose problem's shapes are the step's at some sizes: problem id ->
-- the sizes (to check a candidate with `kreach check --size`), or nil and why not.
function Step:problem_sizes(id)
  local cfg = self.cfg
  if id == 1 then
    if self.D ~= 16 then return nil, ("problem 1 has Criteo Kaggle's 26 tables of dimension 16; this step's dimension is %d"):format(self.D) end
    for t, n in ipairs(self.rows) do
      if n ~= KAGGLE_ROWS[t] then return nil, "problem 1 has Criteo Kaggle's cardinalities; this step's tables differ" end
    end
    return { batch_size = self.B }
  elseif id == 7 or id == 8 then return { batch_size = self.B, features = self.F, dim = self.D }
  elseif id == 10 then
    local want = { 13, 512, 256, 128 }
    local same = #cfg.bot == #want
    for i, v in ipairs(want) do same = same and cfg.bot[i] == v end
    if not same then return nil, ("problem 10 is the bottom MLP 13-512-256-128; this step's is %s"):format(table.concat(cfg.bot, "-")) end
    return { batch_size = self.B }
  elseif id == 11 then return { batch_size = self.B, features = self.head.w:size(2) }
  elseif id == 5 then
    return nil, "problem 5's bags hold several lookups each (pooling 1..), this step's one (one-hot): no sizes give the step's shapes"
  end
  return nil, ("problem %d has no part in this step"):format(id)
end
M.SLOTS = { 1, 5, 7, 8, 10, 11 }

-- ---- the step ----

local function linear_backward(s, x, layer, dy, need_dx)
  local lib = s.lib
  K.relu_grad{ grid = blocks(layer.y:numel()), block = 256 }(layer.y, dy, layer.dz, layer.y:numel())
  lib.matmul(layer.dz, x, layer.dw, { trans_a = true })
  lib.sum(layer.dz, layer.db, 1)
  if need_dx then lib.matmul(layer.dz, layer.w, layer.dx) end
end

-- step(i) -> the loss tensor ([1], f32, on the device): one training step on data batch i
function Step:step(i)
  local d = self.data[(i - 1) % #self.data + 1]
  local lib = self.lib
  -- bottom MLP (problem 10)
  local function bottom_base(a)
    local x = a[1]
    for l, layer in ipairs(self.bot) do
      lib.linear(x, a[2 * l], a[2 * l + 1], layer.y, { activation = "relu" })
      x = layer.y
    end
  end
  if self.subs[10] then self:run_op(10, self:args_of(10, d), bottom_base) else bottom_base(self:args_of(10, d)) end
  -- the embedding bags (problem 1)
  self:run_op(1, self:args_of(1, d), function(a)
    for t = 1, self.T do lib.embedding_bag(a[self.T + t], a[t], nil, self.emb, { col = (t - 1) * self.D }) end
  end)
  -- the interaction (problem 7)
  self:run_op(7, self:args_of(7, d), function(a) lib.dot_interaction(a[1], a[2], a[3]) end)
  -- the top MLP but the head
  local x = self.R
  for _, layer in ipairs(self.top) do
    lib.linear(x, layer.w, layer.b, layer.y, { activation = "relu" })
    x = layer.y
  end
  -- the head: Linear(K, 1) + sigmoid + BCE and its gradients (problem 11)
  local ha = self:args_of(11, d)
  self:run_op(11, ha, function(a) lib.bce_head(a[1], a[3], a[4], a[2], a[5], a[6], a[7], a[8]) end)
  -- the top MLP's gradients, last layer first
  local dy = ha[6]
  for l = #self.top, 1, -1 do
    local layer = self.top[l]
    local xin = l > 1 and self.top[l - 1].y or self.R
    linear_backward(self, xin, layer, dy, true)
    dy = layer.dx
  end
  -- the interaction's gradients (problem 8)
  self:run_op(8, self:args_of(8, d), function(a) lib.dot_interaction_backward(a[1], a[2], a[3], a[4], a[5]) end)
  -- the bottom MLP's gradients (its output's gradient is the interaction's dx)
  dy = self.dxi
  for l = #self.bot, 1, -1 do
    local layer = self.bot[l]
    local xin = l > 1 and self.bot[l - 1].y or d.dense
    linear_backward(self, xin, layer, dy, l > 1)
    dy = layer.dx
  end
  -- each table's gradient rows (problem 5) and SGD on them
  K.split_tables{ grid = blocks(self.B * self.T * self.D), block = 256 }(self.demb, self.demb_t, self.B, self.T, self.D)
  for t = 1, self.T do
    local g = self.demb_t:narrow(1, t, 1):view({ self.B, self.D })
    lib.embedding_bag_backward(d.idx[t], self.offsets, g, self.rows[t], self.rows_out, self.grads, self.count)
    K.sgd_rows{ grid = blocks(self.B * self.D), block = 256 }(self.tables[t], self.rows_out, self.grads, self.count,
      self.lr, self.B, self.D)
  end
  -- SGD on the dense parameters
  local function sgd(w, g) K.sgd_dense{ grid = blocks(w:numel()), block = 256 }(w, g, self.lr, w:numel()) end
  for _, layer in ipairs(self.bot) do sgd(layer.w, layer.dw); sgd(layer.b, layer.db) end
  for _, layer in ipairs(self.top) do sgd(layer.w, layer.dw); sgd(layer.b, layer.db) end
  sgd(self.head.w, self.head.dw); sgd(self.head.b, self.head.db)
  return self.loss
end

-- substitute(id, sub): problem id's operator is sub.call(args) from now on (args: the problem's
-- argument list on the step's tensors); sub = nil puts the baseline back.
function Step:substitute(id, sub)
  self.subs[id] = sub
end

-- outputs() -> what one step computes, to compare two steps: { {name =, t =}, ... }: the loss,
-- the gradients of the embeddings and of the interaction's dense input, and each dense layer's
-- weight and bias gradients. The tensors are the step's own, which the next step overwrites.
function Step:outputs()
  local out = { { name = "loss", t = self.loss }, { name = "d(embeddings)", t = self.demb },
                { name = "d(bottom MLP output)", t = self.dxi } }
  local function layers(list, what)
    for l, layer in ipairs(list) do
      out[#out + 1] = { name = ("%s layer %d dW"):format(what, l), t = layer.dw }
      out[#out + 1] = { name = ("%s layer %d db"):format(what, l), t = layer.db }
    end
  end
  layers(self.bot, "bottom")
  layers(self.top, "top")
  layers({ self.head }, "head")
  return out
end

-- The parameters in dlrm.py's order (model.parameters(): the tables, the bottom MLP's weights
-- and biases, the top MLP's, the head's), for the PyTorch cross-check.
function Step:parameters()
  local out = {}
  for t = 1, self.T do out[#out + 1] = { name = ("emb_l.%d.weight"):format(t - 1), t = self.tables[t] } end
  for l, layer in ipairs(self.bot) do
    out[#out + 1] = { name = ("bot_l.%d.weight"):format(2 * (l - 1)), t = layer.w }
    out[#out + 1] = { name = ("bot_l.%d.bias"):format(2 * (l - 1)), t = layer.b }
  end
  local all = {}
  for _, layer in ipairs(self.top) do all[#all + 1] = layer end
  all[#all + 1] = self.head
  for l, layer in ipairs(all) do
    out[#out + 1] = { name = ("top_l.%d.weight"):format(2 * (l - 1)), t = layer.w }
    out[#out + 1] = { name = ("top_l.%d.bias"):format(2 * (l - 1)), t = layer.b }
  end
  return out
end

-- ---- the substituted step against the plain one ----

-- Each output's relative L2 between two steps (Step:differs): a candidate is held to 1e-4 on its
-- own outputs at f32 (the correctness policy), and the step's gradients carry that through a few
-- products; 1e-3 leaves room for that and for no more.
M.STEP_TOL = 1e-3

-- differs(rows) -> nil, or why the step with rows' substitutions (each {problem =, sub =}) is
-- not the plain step: one step of each on data batch 1 from the same parameters (the learning
-- rate 0 for both, so that neither moves them), every output of outputs() compared (kreach.ops's
-- compare) within STEP_TOL; a substitute that raises differs too. measure.lua asks before and
-- after timing a substitution, as kreach eval checks its timed calls' outputs.
function Step:differs(rows)
  local lr, pool = self.lr, self.lib.pool
  self.lr = 0
  local function one(with)
    if with then for _, r in ipairs(rows) do self:substitute(r.problem, r.sub) end end
    local ok, err = pcall(self.step, self, 1)
    if pool then pool:release() end
    for _, r in ipairs(rows) do self:substitute(r.problem, nil) end
    if not ok then return nil, tostring(err) end
    local kept = {}
    for i, o in ipairs(self:outputs()) do kept[i] = { name = o.name, t = o.t:clone() } end
    return kept
  end
  local plain, perr = one(false)
  local sub, serr
  if plain then sub, serr = one(true) end
  self.lr = lr
  if not plain then error("the plain step failed: " .. perr, 0) end
  local why
  if not sub then why = "the step with it failed: " .. serr
  else
    for i, p in ipairs(plain) do
      local c = self.lib.compare(sub[i].t, p.t)
      local bad = c.nonfinite > 0 or (c.max_ref == 0 and c.max_abs ~= 0) or (c.max_ref > 0 and not (c.rel_l2 <= M.STEP_TOL))
      if bad and not why then
        why = ("%s differs from the plain step's: relative L2 %.3g, max abs %.3g, %d non-finite (at most %g)"):format(
          p.name, c.rel_l2 or 0 / 0, c.max_abs or 0 / 0, c.nonfinite or 0, M.STEP_TOL)
      end
    end
    for _, k in ipairs(sub) do k.t:free() end
  end
  for _, k in ipairs(plain) do k.t:free() end
  return why
end

-- ---- the numerical cross-check with PyTorch ----

local function write_tensor(dir, name, t)
  local file = dir .. "/" .. name .. ".bin"
  local f = assert(io.open(file, "wb"))
  local total, chunk = t:nbytes(), 1 << 28
  local off = 0
  while off < total do
    local n = math.min(chunk, total - off)
    f:write(t:to_bytes(off, n))
    off = off + n
  end
  f:close()
  return { name = name, file = name .. ".bin", shape = t.shape, dtype = t.dtype }
end

-- dump(dir): the step's parameters and data batches as experiments/dlrm/torch_step.py reads
-- them (manifest.json and raw little-endian tensors)
function Step:dump(dir)
  local m = { config = self.name, batch = self.B, rows = self.rows, lr = self.lr, params = {}, batches = {} }
  for _, p in ipairs(self:parameters()) do m.params[#m.params + 1] = write_tensor(dir, p.name, p.t) end
  for i, d in ipairs(self.data) do
    local b = { dense = write_tensor(dir, ("b%d_dense"):format(i), d.dense),
                target = write_tensor(dir, ("b%d_target"):format(i), d.target), idx = {} }
    for t, x in ipairs(d.idx) do b.idx[t] = write_tensor(dir, ("b%d_idx%d"):format(i, t), x) end
    m.batches[i] = b
  end
  local f = assert(io.open(dir .. "/manifest.json", "w"))
  f:write(cjson.encode(m))
  f:close()
end

-- cross_check{steps =, python =, device = "cuda"|"cpu", no_torch =} -> { lua = losses,
-- torch = losses, max_rel_diff =, torch_step_ms =, torch_error = }: the step's parameters and
-- data written out, `steps` Lua steps (which move the parameters) and as many of PyTorch's
-- (experiments/dlrm/torch_step.py: dlrm.py's model and SGD on the same values), compared step
-- by step (the largest relative difference of the losses)
function Step:cross_check(o)
  local dir = assert(output.tmpdir())
  self:dump(dir)
  local losses = {}
  for i = 1, o.steps do
    local l = self:step(i)
    if self.lib.pool then self.lib.pool:release() end
    losses[i] = l:to_table()[1]
  end
  local res = { lua = losses }
  if o.no_torch then output.remove_tree(dir); return res end
  local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
  local cmd = ("%s %s --state %s --steps %d --device %s 2>&1"):format(text.shell_quote(o.python),
    text.shell_quote(here .. "/torch_step.py"), text.shell_quote(dir), o.steps, o.device or "cuda")
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  output.remove_tree(dir)
  local line = out:match("(%b{})%s*$")
  local ok, py = pcall(cjson.decode, line or "")
  if not ok or type(py) ~= "table" or not py.losses then
    res.torch_error = "torch_step.py printed no result: " .. out:sub(-600)
    return res
  end
  res.torch = py.losses
  res.torch_step_ms = py.step_ms ~= cjson.null and py.step_ms or nil
  local worst = 0
  for i = 1, o.steps do
    local d = math.abs(losses[i] - py.losses[i]) / math.max(math.abs(py.losses[i]), 1e-30)
    if d > worst then worst = d end
  end
  res.max_rel_diff = worst
  return res
end

return M
