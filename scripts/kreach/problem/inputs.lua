-- kreach.problem.inputs: an instance's arguments on the GPU. An Instance (made by
-- Problem:instantiate) draws its inputs from their distributions (in f32, transformed, then
-- rounded to their dtype), initialises its parameters, allocates its outputs, redraws in place
-- between timed calls, makes the oracle's f64 copies, and runs the reference, on real tensors
-- or (validate) on shape-only ones.
local dist = require "kreach.problem.dist"
local errors = require "kreach.errors"
local files = require "kreach.problem.files"
local meta = require "kreach.meta"
local ops = require "kreach.ops"
local perr = require "kreach.problem.errors"
local tensor = require "kreach.core.tensor"

local M = {}

local problem_error, in_file, at_file = perr.error, perr.in_file, perr.at_file
local parse_call, INITS, unit_hash = dist.parse_call, dist.INITS, dist.unit_hash

-- An instance: the problem at a dtype and sizes, with every shape resolved.
local Instance = {}
Instance.__index = Instance
M.Instance = Instance

-- The operator library as a reference sees it: the library, plus `sizes` (this instance's
-- sizes, overrides included) and `dtype`, so that constructor arguments such as a pooling
-- window can be sizes that users override.
function Instance:ops(lib)
  local view = rawget(self, "_ops_" .. tostring(lib.meta))
  if not view then
    view = setmetatable({ sizes = self.sizes, dtype = self.dtype }, { __index = lib })
    rawset(self, "_ops_" .. tostring(lib.meta), view)
  end
  return view
end

-- The names of the arguments of each kind, in order.
function Instance:names(kind)
  local r = {}
  for _, a in ipairs(self.args) do if a.kind == kind then r[#r + 1] = a.name end end
  return r
end

-- Runs the reference on shape-only tensors: every operator checks its arguments, and every
-- declared output must be written. Needs no GPU. Raises a problem error on a mismatch.
function Instance:validate()
  local lib = ops.get(true)
  local vals = {}
  for i, a in ipairs(self.args) do
    if a.kind == "scalar" then vals[i] = a.value else vals[i] = meta.new(a.shape, a.dtype, a.name) end
  end
  local where = ("problem '%s': reference"):format(self.problem.name)
  local ok, err = xpcall(self.problem.def.reference, in_file(self.problem.path), self:ops(lib), table.unpack(vals, 1, #self.args))
  if not ok then problem_error(where, "%s", errors.message(err)) end
  for i, a in ipairs(self.args) do
    if a.kind == "output" and not vals[i]:written() then
      problem_error(where, "does not write output '%s'", a.name)
    end
    if a.kind ~= "output" and a.kind ~= "scalar" and vals[i]:written() then
      problem_error(where, "writes %s '%s', which it must only read", a.kind, a.name)
    end
  end
  return true
end

-- ---- on the GPU: arguments, the reference, the oracle ----

local function arg_seed(seed, i) return seed * 1000003 + i * 7919 end

-- The tensors a draw needs: new ones (freed by the draw when done with), or, given
-- scratch(slot, shape, dtype), ones the caller keeps from one draw to the next (Instance:redraw
-- during timing, where an allocation and a free of a large buffer would slow the next timed
-- call by remapping memory: 17% on problem 48's 8 GiB inputs on the H200).
local function tensors(scratch)
  if scratch then return scratch, function() end end
  return function(_, shape, dtype) return tensor.empty(shape, dtype) end, function(t) t:free() end
end

-- Draws one input: in f32 from its generator, transformed in f32, then rounded to its dtype
-- (integer and bool inputs are drawn directly).
local function draw(lib, a, seed, scratch)
  local new, drop = tensors(scratch)
  local d = a.dist
  if d.gen == "randint" or d.gen == "bool" then
    local t = new("out", a.shape, a.dtype)
    if d.gen == "bool" then t:randint(0, 2, seed) else t:randint(math.tointeger(d.args[1]), math.tointeger(d.args[2]), seed) end
    return t
  end
  -- drawn on the host, then copied over (into the caller's scratch tensor when it keeps one)
  local vals
  if d.gen == "bags" then -- a shuffle of a fixed multiset of lengths, as CSR offsets
    vals = dist.bag_offsets(a.shape[1] - 1, math.tointeger(d.args[1]), math.tointeger(d.args[2]), seed)
  elseif d.gen == "jagged" then
    vals = dist.jagged_lengths(a.shape[2], d.args, seed)
  elseif d.gen == "host" then
    -- the problem's own code, within files.DRAW_LIMIT_S
    local where = ("input '%s': dist"):format(a.name)
    local ok, r = files.limited_call(files.DRAW_LIMIT_S, d.path, where, ("in the draw of its host distribution '%s'"):format(d.text),
      in_file(d.path), d.draw, a.shape, seed, d.variant or "default", d.sizes)
    if not ok then problem_error(where, "the host distribution '%s' failed: %s", d.text, errors.message(r)) end
    vals = r
    local n = 1
    for _, v in ipairs(a.shape) do n = n * v end
    if type(vals) ~= "table" or #vals ~= n then
      problem_error(at_file(d.path, where), "the host distribution '%s' returned %s values, %d expected", d.text,
        type(vals) == "table" and tostring(#vals) or type(vals), n)
    end
  end
  if vals then
    local host = tensor.from_table(vals, { shape = a.shape, dtype = a.dtype })
    if not scratch then return host end
    local t = new("out", a.shape, a.dtype)
    t:copy_from(host)
    host:free()
    return t
  end
  if d.gen == "unique" then
    -- the start of the run of rows, from the seed
    local t = new("out", a.shape, a.dtype)
    local n = math.tointeger(d.args[1])
    lib.unique_rows(t, n, math.floor(unit_hash(seed, 1) * n))
    return t
  end
  if d.gen == "zipf" then
    local t = new("out", a.shape, a.dtype)
    local u = new("u", a.shape, "f64")
    u:uniform(0, 1, seed)
    lib.zipf_rows(u, t, math.tointeger(d.args[1]), d.args[2])
    drop(u)
    return t
  end
  local x = new("x", a.shape, "f32")
  if d.gen == "uniform" then x:uniform(d.args[1], d.args[2], seed)
  elseif d.gen == "normal" then x:normal(d.args[1], d.args[2], seed)
  elseif d.gen == "sign" then x:randint(0, 2, seed); lib.affine(x, x, 2, -1)
  end
  for _, t in ipairs(d.transforms) do
    if t == "symmetric" then
      local y = new("y", a.shape, "f32") -- a distribution has one symmetric transform
      lib.symmetrize(x, y)
      drop(x)
      x = y
    elseif t == "triu" then lib.triu(x, x)
    elseif t == "tril" then lib.tril(x, x)
    elseif t == "scale_rand" then
      -- one U[0, 1) scalar, drawn from the input's own seed stream
      local one = new("scale", { 1 }, "f32")
      local s = one:uniform(0, 1, seed + 1):item()
      drop(one)
      lib.scale(x, x, s)
    elseif t == "softmax" then
      lib.softmax(x, x, -1)
    end
  end
  if a.dtype == "f32" then return x end
  local r = new("out", a.shape, a.dtype)
  r:copy_from(x)
  drop(x)
  return r
end

local function init_param(a, seed, scratch, into)
  local new, drop = tensors(scratch)
  local t = into or new("out", a.shape, a.dtype)
  local name, args = parse_call(dist.init_rule(a), "param '" .. a.name .. "'", INITS, "init rule")
  -- the f32 draw: into t itself at f32 (a table of tens of GB is not drawn twice), else into a
  -- scratch f32 tensor rounded into t
  local function draw(f)
    if a.dtype == "f32" then f(t); return end
    local x = new("x", a.shape, "f32")
    f(x)
    t:copy_from(x); drop(x)
  end
  if name == "ones" then t:fill(1)
  elseif name == "zeros" then t:fill(0)
  elseif name == "uniform" then draw(function(x) x:uniform(args[1], args[2], seed) end)
  elseif name == "normal" then
    -- normal(mean, std), as dlrm initialises its MLPs
    draw(function(x) x:normal(args[1], args[2], seed) end)
  elseif name == "kaiming_uniform" then
    -- PyTorch's default for conv and linear weights: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    local b = 1 / math.sqrt(args[1])
    draw(function(x) x:uniform(-b, b, seed) end)
  end
  return t
end

local function fmt(x) return ("%.4g"):format(x) end

-- Makes every argument: inputs drawn from `seed`, parameters initialised, scalars as values,
-- outputs allocated and poisoned. Returns the list, in declared order, and the distribution
-- each input was drawn from (text, by argument index).
-- opts.variant: "default" (the problem's distributions), "centred" or "shifted" (another
-- distribution of each input's domain where it has one: dist.other_generator).
function Instance:make_args(seed, opts)
  opts = opts or {}
  local lib = ops.get(false)
  local vals, drawn = {}, {}
  local variant = opts.variant or "default"
  for i, a in ipairs(self.args) do
    if a.kind == "input" then
      local spec = a
      local d = a.dist
      if variant ~= "default" and d.gen == "host" then
        -- a host distribution draws its own other trials
        spec = setmetatable({ dist = setmetatable({ variant = variant }, { __index = d }) }, { __index = a })
        drawn[i] = ("%s (%s)"):format(d.text, variant)
      elseif variant ~= "default" and ((d.gen ~= "randint" and d.gen ~= "bool" and d.gen ~= "sign") or a.domain == "rows") then
        local gen, gargs = dist.other_generator(a.domain, variant, seed, i, d)
        if gen then
          spec = setmetatable({ dist = { gen = gen, args = gargs, transforms = d.transforms } }, { __index = a })
          local parts = { ("%s(%s, %s)"):format(gen, fmt(gargs[1]), fmt(gargs[2])) }
          for _, t in ipairs(d.transforms) do parts[#parts + 1] = t end
          drawn[i] = table.concat(parts, " | ")
        end
      end
      drawn[i] = drawn[i] or d.text
      vals[i] = draw(lib, spec, arg_seed(seed, i))
    elseif a.kind == "param" then vals[i] = init_param(a, arg_seed(seed, i))
    elseif a.kind == "scalar" then vals[i] = a.value
    else vals[i] = tensor.empty(a.shape, a.dtype):poison()
    end
  end
  return vals, drawn
end

-- Draws new values for the inputs and parameters of `vals` (made by make_args) from `seed`,
-- into the tensors that are there: the addresses stay, the values change. Outputs and
-- scalars are left alone. The values are those make_args(seed) would draw. `cache` (optional,
-- a table the caller keeps and frees with Instance:free_cache) holds the draw's temporaries
-- from one redraw to the next, so that a redraw between timed calls allocates and frees
-- nothing (after the first).
function Instance:redraw(vals, seed, cache)
  local lib = ops.get(false)
  for i, a in ipairs(self.args) do
    local scratch
    if cache then
      scratch = function(slot, shape, dtype)
        local key = i .. "/" .. slot
        local t = cache[key]
        if not t then t = tensor.empty(shape, dtype); cache[key] = t end
        return t
      end
    end
    local t
    if a.kind == "input" then t = draw(lib, a, arg_seed(seed, i), scratch)
    elseif a.kind == "param" then init_param(a, arg_seed(seed, i), scratch, vals[i]) -- drawn in place
    end
    if t then
      vals[i]:copy_from(t)
      if not cache then t:free() end
    end
  end
end

-- Frees the temporaries Instance:redraw kept in `cache`.
function Instance:free_cache(cache)
  for k, t in pairs(cache) do
    if t:is_live() then t:free() end
    cache[k] = nil
  end
end

-- The same arguments for the oracle: float inputs and parameters converted to f64 (exactly:
-- the oracle sees the rounded values the baseline saw), integer ones shared, f64 outputs.
function Instance:oracle_args(vals)
  local r = {}
  for i, a in ipairs(self.args) do
    local v = vals[i]
    if a.kind == "scalar" then r[i] = v
    elseif a.kind == "output" then
      r[i] = tensor.empty(a.shape, (a.dtype == "f32" or a.dtype == "bf16" or a.dtype == "f16") and "f64" or a.dtype):poison()
    elseif a.dtype == "f32" or a.dtype == "bf16" or a.dtype == "f16" then r[i] = v:to("f64")
    else r[i] = v
    end
  end
  return r
end

-- Runs the reference on real tensors; every output element must have been written.
function Instance:run_reference(vals)
  local lib = ops.get(false)
  self.problem.def.reference(self:ops(lib), table.unpack(vals, 1, #self.args))
  for i, a in ipairs(self.args) do
    if a.kind == "output" then
      local left = vals[i]:count_poisoned()
      if left > 0 then
        problem_error(("problem '%s': reference"):format(self.problem.name),
          "left %d of the %d elements of output '%s' unwritten", left, vals[i]:numel(), a.name)
      end
    end
  end
end

function Instance:free(vals)
  for i, a in ipairs(self.args) do
    local v = vals[i]
    if a.kind ~= "scalar" and v and v:is_live() then v:free() end
  end
end

-- Frees the arguments and their oracle copies (oracle_args), the tensors they share once.
function Instance:free_oracle(vals, ovals)
  for i, a in ipairs(self.args) do
    local v = ovals[i]
    if a.kind ~= "scalar" and v ~= vals[i] and v and v:is_live() then v:free() end
  end
  self:free(vals)
end

return M
