-- kreach.problem.define: the problem language. A problem file returns kreach.problem{...} (M.define):
-- what a kernel must compute (arguments made by M.input, M.param, M.scalar and M.output, with
-- shapes, dtypes and input distributions; a reference written with kreach.ops), its arithmetic
-- and compulsory memory traffic, and the equivalent PyTorch code. docs/scripting.md ("Problems")
-- is the contract; this file checks it and instantiates problems at a dtype and sizes
-- (Problem:instantiate, whose instances kreach.problem.inputs draws on the GPU).
local dist = require "kreach.problem.dist"
local errors = require "kreach.errors"
local files = require "kreach.problem.files"
local inputs = require "kreach.problem.inputs"
local kinds = require "kreach.kinds"
local perr = require "kreach.problem.errors"
local tensor = require "kreach.core.tensor"

local M = {}

local problem_error, usage_error, suggest = perr.error, perr.usage, perr.suggest
local in_file, at_file, field_call = perr.in_file, perr.at_file, files.field_call
local parse_call, finite, INITS = dist.parse_call, dist.finite, dist.INITS
local input_dist, init_text = dist.input_dist, dist.init_text
local Instance = inputs.Instance

local FIELDS = {
  id = "number", name = "string", suite = "string", category = "string",
  description = "string", sizes = "table", args = "table", reference = "function",
  flops = "function", bytes = "function", domain = "table", torch = "table", notes = "string",
  subcategory = "string",
}
local REQUIRED = { "id", "name", "suite", "category", "description", "args", "reference", "flops", "torch" }
local CATEGORIES = { matmul = true, activation = true, elementwise = true, normalization = true,
  pooling = true, reduction = true, scan = true, loss = true, attention = true,
  convolution = true, embedding = true, other = true }
-- the subcategories (which kind within the category) a problem may declare, by category; a
-- category here requires one (convolution), one not here has none. Shown and grouped as
-- "category/subcategory" (kreach list, results summary --by category).
M.SUBCATEGORIES = {
  -- "separable": depthwise then pointwise (KernelBench's conv_depthwise_separable_2D)
  convolution = { "standard 1D", "standard 2D", "standard 3D", "transposed 1D", "transposed 2D",
    "transposed 3D", "depthwise 2D", "separable 2D", "pointwise 2D" },
  -- DLRM's: embedding-bag lookups, their table gradient, the optimiser's row update, the dot
  -- interaction and its gradient, sparse-id preprocessing
  embedding = { "bag", "bag grad", "optimizer", "interaction", "interaction grad", "preprocessing" },
}
local REQUIRES_SUBCATEGORY = { convolution = true }
-- the input domains a problem may declare (used to draw extra test inputs)
-- "rows": indices into a table's rows, drawn uniformly (randint(0, n)) by default and from
-- Zipf-like laws (zipf(n, alpha), heavy-tailed as real Criteo ids) in the other trials
M.DOMAINS = { real = true, positive = true, nonnegative = true, unit = true,
  probabilities = true, indices = true, mask = true, sign = true, symmetric = true,
  upper_triangular = true, lower_triangular = true, rows = true }
local DTYPES = kinds.set(kinds.DTYPES)

local function arg_ctor(kind)
  return function(name, a, b)
    local spec = { kind = kind, name = name }
    local opts
    if kind == "scalar" then
      spec.value = a
      opts = b or {}
    else
      spec.shape = a
      opts = b or {}
    end
    if type(opts) ~= "table" then
      error(("%s '%s': options must be a table"):format(kind, tostring(name)), 2)
    end
    for k, v in pairs(opts) do spec[k] = v end
    spec._opts = opts
    return spec
  end
end
M.input = arg_ctor("input")
M.param = arg_ctor("param")
M.scalar = arg_ctor("scalar")
M.output = arg_ctor("output")

local ARG_KEYS = {
  input = { kind = 1, name = 1, shape = 1, dtype = 1, dist = 1, domain = 1, _opts = 1 },
  param = { kind = 1, name = 1, shape = 1, dtype = 1, init = 1, _opts = 1 },
  scalar = { kind = 1, name = 1, value = 1, type = 1, _opts = 1 },
  output = { kind = 1, name = 1, shape = 1, dtype = 1, _opts = 1 },
}
local ORDER = { input = 1, param = 2, scalar = 3, output = 4 }

local function as_is(e) return e end

-- A shape entry is an integer, the name of a size, or the whole shape is function(sizes).
-- path: the problem's file, for field_call's limit.
local function resolve_shape(shape, sizes, where, path)
  if type(shape) == "function" then
    local ok, r = field_call(path, where, "in a shape function", as_is, shape, sizes)
    if not ok then problem_error(where, "the shape function failed: %s", tostring(r)) end
    shape = r
  end
  if type(shape) ~= "table" then problem_error(where, "shape must be a table or a function, got %s", type(shape)) end
  if #shape > 8 then problem_error(where, "shape has %d dimensions (at most 8)", #shape) end
  local out = {}
  for i, s in ipairs(shape) do
    local v = s
    if type(s) == "string" then
      v = sizes[s]
      if v == nil then problem_error(where, "shape entry %d names the size '%s', which is not in sizes%s", i, s, suggest(s, sizes)) end
    end
    if math.type(v) ~= "integer" or v < 0 then
      problem_error(where, "shape entry %d is %s, not a non-negative integer", i, tostring(v))
    end
    out[i] = v
  end
  return out
end

-- the generators that draw i64 values, and what they draw
local I64_DRAWS = { bags = "offsets", jagged = "lengths", unique = "rows", zipf = "rows" }

-- an input's distribution and domain, checked at the default sizes
local function check_input(a, where, sizes, shape)
  local d = input_dist(a, sizes, where .. ": dist")
  if a.domain ~= nil and not M.DOMAINS[a.domain] then
    problem_error(where, "unknown domain '%s'%s", tostring(a.domain), suggest(tostring(a.domain), M.DOMAINS))
  end
  if I64_DRAWS[d.gen] and a.dtype ~= "i64" then
    problem_error(where, "%s draws %s as i64; the dtype is %s", d.gen, I64_DRAWS[d.gen], tostring(a.dtype or "the problem's"))
  end
  if d.gen == "bags" and type(a.shape) == "table" and #a.shape ~= 1 then
    problem_error(where, "bags draws a 1-D [bags + 1] tensor of offsets")
  end
  if d.gen == "jagged" then
    if #shape ~= 2 or shape[1] ~= #d.args then
      problem_error(where, "jagged with %d mean lengths draws an [%d, bags] tensor, not %s", #d.args, #d.args, table.concat(shape, "x"))
    end
  end
  if d.gen == "unique" then
    local count = 1
    for _, v in ipairs(shape) do count = count * v end
    if count > d.args[1] then problem_error(where, "unique(%d) cannot draw %d distinct rows", math.tointeger(d.args[1]), count) end
  end
  if a.domain == "rows" then
    if a.dtype ~= "i64" then problem_error(where, "the domain 'rows' is of i64 indices; the dtype is %s", tostring(a.dtype or "the problem's")) end
    if not ((d.gen == "randint" and d.args[1] == 0) or d.gen == "zipf") then
      problem_error(where, "the domain 'rows' needs the distribution randint(0, rows) or zipf(rows, alpha), not '%s'", d.text)
    end
  end
end

-- a parameter's init rule (a function of the shape is called at the default sizes, as a dist
-- function is)
local function check_param(a, where, shape)
  if a.init == nil then problem_error(where, "a parameter needs an init rule ('ones', 'zeros', 'uniform(lo, hi)', 'normal(mean, std)', 'kaiming_uniform(fan_in)', 'kaiming_uniform')") end
  if type(a.init) == "string" then parse_call(a.init, where .. ": init", INITS, "init rule") end
  if type(a.init) == "function" then
    parse_call(init_text(a.init, shape, where), where .. ": init", INITS, "init rule")
  elseif type(a.init) ~= "string" then
    problem_error(where, "init is an init rule's text or a function(shape) returning one, got %s", type(a.init))
  end
end

local function check_scalar(a, where)
  if type(a.value) ~= "number" and type(a.value) ~= "boolean" then
    problem_error(where, "a scalar needs a number value, got %s", type(a.value))
  end
  if type(a.value) == "number" and not finite(a.value) then
    problem_error(where, "a scalar needs a finite value, got %s", tostring(a.value))
  end
end

-- one entry of args: its kind, name, options, shape and dtype, then what its kind needs
local function check_arg(a, i, where0, sizes, names)
  local where = ("%s: field 'args': entry %d"):format(where0, i)
  if type(a) ~= "table" then problem_error(where, "is a %s, not an argument (use kreach.input, kreach.param, kreach.scalar or kreach.output)", type(a)) end
  local keys = ARG_KEYS[a.kind]
  if not keys then problem_error(where, "unknown kind '%s'", tostring(a.kind)) end
  if type(a.name) ~= "string" or not a.name:match("^[%a_][%w_]*$") then
    problem_error(where, "needs a name that is an identifier, got %s", tostring(a.name))
  end
  where = ("%s: field 'args': %s '%s'"):format(where0, a.kind, a.name)
  if names[a.name] then problem_error(where, "the name is used twice") end
  names[a.name] = true
  for k in pairs(a._opts or {}) do
    if not keys[k] then problem_error(where, "unknown option '%s'%s", tostring(k), suggest(tostring(k), keys)) end
  end
  local shape = a.kind ~= "scalar" and resolve_shape(a.shape, sizes, where) or nil
  if a.dtype ~= nil then
    local ok = pcall(tensor.dtype_size, a.dtype)
    if not ok then problem_error(where, "unknown dtype '%s'", tostring(a.dtype)) end
  end
  if a.kind == "input" then check_input(a, where, sizes, shape)
  elseif a.kind == "param" then check_param(a, where, shape)
  elseif a.kind == "scalar" then check_scalar(a, where)
  end
end

-- ---- the Problem object ----

local Problem = {}
Problem.__index = Problem
M.Problem = Problem

function M.define(def)
  if type(def) ~= "table" then problem_error("problem", "kreach.problem takes a table, got %s", type(def)) end
  local where = ("problem '%s'"):format(tostring(def.name or def.id or "?"))
  for k, v in pairs(def) do
    local want = FIELDS[k]
    if not want then problem_error(where, "unknown field '%s'%s", tostring(k), suggest(tostring(k), FIELDS)) end
    if type(v) ~= want then problem_error(where, "field '%s' must be a %s, got %s", k, want, type(v)) end
  end
  for _, k in ipairs(REQUIRED) do
    if def[k] == nil then problem_error(where, "missing field '%s'", k) end
  end
  if math.type(def.id) ~= "integer" then problem_error(where, "field 'id' must be an integer") end
  -- the name names files (kreach export writes <name>.py): letters, digits, '_', '-' and '.',
  -- not first '.'
  if not def.name:match("^[%w_%-][%w_.%-]*$") then
    problem_error(where, "field 'name': '%s' is not a name (letters, digits, '_', '-' and '.', not first '.')", def.name)
  end
  if not CATEGORIES[def.category] then
    problem_error(where, "field 'category': unknown category '%s'%s", def.category, suggest(def.category, CATEGORIES))
  end
  local subs = M.SUBCATEGORIES[def.category]
  if def.subcategory ~= nil then
    if not subs then
      problem_error(where, "field 'subcategory': category '%s' has no subcategories", def.category)
    end
    local set = {}
    for _, k in ipairs(subs) do set[k] = true end
    if not set[def.subcategory] then
      problem_error(where, "field 'subcategory': unknown %s subcategory '%s'%s (one of: %s)", def.category,
        def.subcategory, suggest(def.subcategory, set), table.concat(subs, ", "))
    end
  elseif REQUIRES_SUBCATEGORY[def.category] then
    problem_error(where, "missing field 'subcategory': a %s problem says which kind it is (one of: %s)",
      def.category, table.concat(subs, ", "))
  end
  local sizes = def.sizes or {}
  for k, v in pairs(sizes) do
    if type(k) ~= "string" or math.type(v) ~= "integer" then
      problem_error(where, "field 'sizes': %s = %s is not a name and an integer", tostring(k), tostring(v))
    end
  end
  local names, last = {}, 0
  for i, a in ipairs(def.args) do
    check_arg(a, i, where, sizes, names)
    if ORDER[a.kind] < last then
      problem_error(("%s: field 'args': %s '%s'"):format(where, a.kind, a.name),
        "arguments go in the order inputs, parameters, scalars, outputs")
    end
    last = ORDER[a.kind]
  end
  if last ~= 4 then problem_error(where, "field 'args': a problem needs at least one output") end
  if type(def.torch.model) ~= "string" then
    problem_error(where, "field 'torch': needs 'model', the Python source of class Model")
  end
  for k, v in pairs(def.torch) do
    if k ~= "model" and k ~= "init" and k ~= "inputs" then
      problem_error(where, "field 'torch': unknown key '%s' (model, init, inputs)", tostring(k))
    end
    if type(v) ~= "string" then problem_error(where, "field 'torch': '%s' must be a string of Python", tostring(k)) end
  end
  if def.domain then
    for k, v in pairs(def.domain) do
      if not names[k] then problem_error(where, "field 'domain': '%s' is not an argument", tostring(k)) end
      if not M.DOMAINS[v] then problem_error(where, "field 'domain': unknown domain '%s'%s", tostring(v), suggest(tostring(v), M.DOMAINS)) end
    end
  end
  return setmetatable({ def = def, id = def.id, name = def.name, suite = def.suite,
                        category = def.category, subcategory = def.subcategory, description = def.description,
                        sizes = sizes, path = nil }, Problem)
end


function Problem:instantiate(opts)
  opts = opts or {}
  local lo = self.load_opts or {}
  if opts.dtype == nil then opts = setmetatable({ dtype = lo.dtype }, { __index = opts }) end
  if opts.sizes == nil and lo.sizes then opts = setmetatable({ sizes = lo.sizes }, { __index = opts }) end
  local def = self.def
  local where = ("problem '%s'"):format(self.name)
  local dtype = opts.dtype or "f32"
  if not DTYPES[dtype] then usage_error(where, "dtype '%s': a problem runs at f32, bf16 or f16", tostring(dtype)) end
  local sizes = {}
  for k, v in pairs(self.sizes) do sizes[k] = v end
  for k, v in pairs(opts.sizes or {}) do
    if self.sizes[k] == nil then usage_error(where, "no size named '%s'%s", tostring(k), suggest(tostring(k), self.sizes)) end
    if math.type(v) ~= "integer" or v < 0 then problem_error(where, "size '%s' = %s is not a non-negative integer", k, tostring(v)) end
    sizes[k] = v
  end
  local inst = setmetatable({ problem = self, dtype = dtype, sizes = sizes, args = {} }, Instance)
  -- sizes whose products overflow 64-bit byte counts: the user's mistake (status 2) when the
  -- user set sizes, else the problem file's
  local overridden = opts.sizes and next(opts.sizes) ~= nil
  local function too_large(w, a, shape)
    local named = {}
    local list = type(a.shape) == "table" and a.shape or {}
    for _, s in ipairs(list) do
      if type(s) == "string" and not named[s] then named[s] = true; named[#named + 1] = ("%s = %d"):format(s, sizes[s]) end
    end
    if #named == 0 then
      for k in pairs(opts.sizes or {}) do named[#named + 1] = ("%s = %d"):format(k, sizes[k]) end
      table.sort(named)
    end
    local raise = overridden and usage_error or problem_error
    raise(w, "the shape {%s}%s is too large: its size in bytes overflows a 64-bit integer",
      table.concat(shape, ", "), #named > 0 and (" (" .. table.concat(named, ", ") .. ")") or "")
  end
  local dsize = tensor.dtype_size
  local bytes = 0
  for i, a in ipairs(def.args) do
    local w = ("%s: %s '%s'"):format(where, a.kind, a.name)
    local r = { kind = a.kind, name = a.name, index = i }
    if a.kind == "scalar" then
      r.value = a.value
      r.type = a.type or "float"
    else
      r.shape = resolve_shape(a.shape, sizes, w, self.path)
      r.dtype = a.dtype or dtype
      local n, esize = 1, dsize(r.dtype)
      for _, s in ipairs(r.shape) do
        if s ~= 0 and n > math.maxinteger // s then n = nil; break end
        n = n * s
      end
      if not n or (esize ~= 0 and n > math.maxinteger // esize) or n * esize > math.maxinteger - bytes then
        too_large(w, a, r.shape)
      end
      r.numel = n
      r.nbytes = n * esize
      bytes = bytes + r.nbytes
      if a.kind == "input" then
        r.dist = input_dist(a, sizes, w, self.path)
        r.domain = a.domain or (def.domain and def.domain[a.name])
      elseif a.kind == "param" then
        -- a rule the problem computes from the shape is computed once, here, within the field
        -- limit, and parsed, so that a bad one is told when the problem is instantiated
        r.init = type(a.init) == "function" and init_text(a.init, r.shape, w, self.path) or a.init
        parse_call(dist.init_rule(r), at_file(self.path, w) .. ": init", INITS, "init rule")
      end
    end
    inst.args[i] = r
  end
  local function call(f, what, ...)
    -- a field that loops for ever is stopped, as a load that does (files.FIELD_LIMIT_S)
    local ok, v = field_call(self.path, where, ("in its field '%s'"):format(what), in_file(self.path), f, ...)
    if not ok then problem_error(where, "field '%s' failed: %s", what, errors.message(v)) end
    if type(v) ~= "number" or not (v >= 0 and v < math.huge) then
      problem_error(at_file(self.path, where),
        "field '%s' returned %s, not a finite non-negative number", what, tostring(v))
    end
    return v
  end
  inst.flops = call(def.flops, "flops", sizes, dtype)
  inst.bytes = def.bytes and call(def.bytes, "bytes", sizes, dsize(dtype)) or bytes
  return inst
end

return M
