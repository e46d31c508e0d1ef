-- kreach.problem: the problem DSL. A problem file returns kreach.problem{...}: what a kernel
-- must compute (arguments with shapes, dtypes and input distributions; a reference written
-- with kreach.ops), its arithmetic and compulsory memory traffic, and the equivalent PyTorch
-- code. docs/scripting.md ("Problems") is the contract; this file checks it and instantiates
-- problems at a dtype and sizes.
local lfs = require "lfs"
local core = require "kreach.core"
local errors = require "kreach.errors"
local home = require "kreach.home"
local kinds = require "kreach.kinds"
local meta = require "kreach.meta"
local ops = require "kreach.ops"
local tensor = require "kreach.core.tensor"
local text = require "kreach.text"

local M = {}

local FIELDS = {
  id = "number", name = "string", suite = "string", category = "string",
  description = "string", sizes = "table", args = "table", reference = "function",
  flops = "function", bytes = "function", domain = "table", torch = "table", notes = "string",
}
local REQUIRED = { "id", "name", "suite", "category", "description", "args", "reference", "flops", "torch" }
local CATEGORIES = { matmul = true, activation = true, elementwise = true, normalization = true,
  pooling = true, reduction = true, scan = true, loss = true, attention = true,
  convolution = true, embedding = true, other = true }
-- the input domains a problem may declare (used to draw extra test inputs)
-- "rows": indices into a table's rows, drawn uniformly (randint(0, n)) by default and from
-- Zipf-like laws (zipf(n, alpha), heavy-tailed as real Criteo ids) in the other trials
M.DOMAINS = { real = true, positive = true, nonnegative = true, unit = true,
  probabilities = true, indices = true, mask = true, sign = true, symmetric = true,
  upper_triangular = true, lower_triangular = true, rows = true }
local DTYPES = kinds.set(kinds.DTYPES)
-- the number of numbers each generator takes (-1: one or more)
local GENERATORS = { uniform = 2, normal = 2, randint = 2, sign = 0, bool = 0, zipf = 2, bags = 2, unique = 1,
  jagged = -1 }
local TRANSFORMS = { symmetric = 0, triu = 0, tril = 0, scale_rand = 0, softmax = 0 }
local INITS = { ones = 0, zeros = 0, uniform = 2, normal = 2, kaiming_uniform = 1 }

-- ---- errors: every message names the problem (and, through load, its file) and the field ----

-- Problem errors are kreach.errors user errors, so that commands can tell a bad problem file
-- (exit status 3, a clean message) from a bug (a traceback); tostring gives the message. Their
-- status is the exit status a command ends with: 3 for a file that does not load, 2 for a name
-- that names nothing (a usage error).
-- raise(msg[, status]): kept for callers outside this module (status 3 unless given); new
-- code raises through kreach.errors
function M.raise(msg, status)
  errors.raise(status or errors.STATUS.load, msg)
end

local function problem_error(where, fmt, ...)
  errors.load("%s: %s", where, fmt:format(...))
end
M.error = problem_error

-- What the user asked for (a dtype, a size name) is not the problem's: status 2, not 3.
local function usage_error(where, fmt, ...)
  errors.usage("%s: %s", where, fmt:format(...))
end

M.is_error = errors.is -- an alias: any kreach.errors user error

-- An xpcall handler for the problem file's own functions (reference, flops, shapes): an error
-- raised inside kreach's code (an operator given the wrong arguments) is told at the line of
-- the problem file that called it, since kreach's own position means nothing to the author.
local function in_file(path)
  return function(e)
    if errors.is(e) then return e end
    local msg = errors.message(e)
    if path and not msg:find(path, 1, true) then
      for level = 2, 100 do
        local info = debug.getinfo(level, "Sl")
        if not info then break end
        if info.source == "@" .. path and info.currentline > 0 then
          return ("%s:%d: %s"):format(path, info.currentline, msg)
        end
      end
    end
    return msg
  end
end

-- " (did you mean 'x'?)" for a misspelt name among the keys of `known`, or ""
local function suggest(word, known)
  local names = {}
  for k in pairs(known) do names[#names + 1] = k end
  local best = text.suggest(word, names)
  return best and (" (did you mean '%s'?)"):format(best) or ""
end

-- whether a number is neither NaN nor infinite
local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- ---- distributions: "uniform", "uniform(-1, 1)", "randint(0, 4096)", "uniform | triu",
-- "zipf(1000, 1.1)" (rows of a 1000-row table, Zipf-like: kreach.ops.embedding's zipf_rows),
-- "bags(1, 100)" (the CSR offsets of embedding bags whose lengths are lo..hi, M.bag_offsets),
-- "unique(1000)" (distinct rows of a 1000-row table: kreach.ops.embedding's unique_rows),
-- "jagged(h1, ..., hF)" (an [F, B] tensor of bag lengths, row t a shuffle of 0..2 h_t: M.jagged_lengths) ----

local function parse_call(s, where, table_of, what)
  local name, argstr = s:match("^%s*([%a_][%w_]*)%s*(.-)%s*$")
  if not name then problem_error(where, "cannot read %s '%s'", what, s) end
  local args = {}
  if argstr ~= "" then
    local inner = argstr:match("^%((.*)%)$")
    if not inner then problem_error(where, "cannot read %s '%s'", what, s) end
    for a in inner:gmatch("[^,]+") do
      local v = tonumber(a:match("^%s*(.-)%s*$"))
      if not v then problem_error(where, "%s '%s': '%s' is not a number", what, s, a) end
      if not finite(v) then
        problem_error(where, "%s '%s': '%s' is not a finite number", what, s, a:match("^%s*(.-)%s*$"))
      end
      args[#args + 1] = v
    end
  end
  local want = table_of[name]
  if not want then
    local names = {}
    for k in pairs(table_of) do names[#names + 1] = k end
    table.sort(names)
    problem_error(where, "unknown %s '%s'%s (known: %s)", what, name, suggest(name, table_of),
      table.concat(names, ", "))
  end
  if #args ~= 0 and want >= 0 and #args ~= want then
    problem_error(where, "%s '%s' takes %d numbers, got %d", what, name, want, #args)
  end
  return name, args
end

-- limited_call(limit, path, where, doing, handler, f, ...) -> xpcall(f, handler, ...)'s first
-- two results. Where the problem has a file (path), and so outside the file's load (which has
-- its own limit), f runs within `limit` seconds (M.run_in_file); past it, a load error.
local function limited_call(limit, path, where, doing, handler, f, ...)
  if not path then return xpcall(f, handler, ...) end
  local args = table.pack(...)
  local done, ok, v = M.run_in_file(path, limit, doing,
    function() return xpcall(f, handler, table.unpack(args, 1, args.n)) end)
  if not done then problem_error(where, "%s", errors.message(ok)) end
  return ok, v
end

-- field_call(path, where, doing, handler, f, ...): limited_call within M.FIELD_LIMIT_S, for
-- the functions of a problem's that instantiating it calls (flops, bytes, shapes, dist, init)
local function field_call(path, ...) return limited_call(M.FIELD_LIMIT_S, path, ...) end

-- at_file(path, where) -> "path: where", or where when the problem has no file
local function at_file(path, where) return path and (path .. ": " .. where) or where end

-- An input's distribution at some sizes: its text, or what its function(sizes) returns (a
-- distribution whose numbers follow the sizes, as "randint(0, rows)"), called within
-- M.FIELD_LIMIT_S (field_call; path: the problem's file).
local function dist_text(a, sizes, where, path)
  if type(a.dist) ~= "function" then return a.dist or "uniform" end
  local ok, r = field_call(path, where, "in its dist function", in_file(path), a.dist, sizes)
  if not ok then problem_error(where, "the dist function failed: %s", errors.message(r)) end
  if type(r) ~= "string" then
    problem_error(at_file(path, where), "the dist function returned %s, not a distribution's text", type(r))
  end
  return r
end

-- host_dist{ text =, draw = function(shape, seed, variant, sizes) -> flat list, python = } -> a
-- distribution a problem computes on the host, for inputs whose structure the generators cannot
-- state (values tied to other inputs' layout): `draw` returns the values in row-major order for
-- one trial's seed and variant ("default", "centred", "shifted"); `text` is what reports show;
-- `python` (optional) is the expression `kreach export` writes into get_inputs (a function of the
-- problem's sizes, which get_inputs has as module-level names); without it, export refuses.
function M.host_dist(spec)
  if type(spec) ~= "table" or type(spec.draw) ~= "function" or type(spec.text) ~= "string" then
    error("host_dist{ text = string, draw = function(shape, seed, variant, sizes), python = string }", 2)
  end
  if spec.python ~= nil and type(spec.python) ~= "string" then error("host_dist: python is the export's expression, a string", 2) end
  return { host = true, text = spec.text, draw = spec.draw, python = spec.python }
end

local function is_host(d) return type(d) == "table" and d.host == true end

-- A parameter's init rule that the problem computes from the shape (init, a function): its text,
-- checked, called within M.FIELD_LIMIT_S (field_call; path: the problem's file, nil while the
-- file loads, whose own limit holds then).
local function init_text(init, shape, where, path)
  local ok, rule = field_call(path, where, "in its init function", in_file(path), init, shape)
  if not ok then problem_error(where, "the init function failed: %s", errors.message(rule)) end
  if type(rule) ~= "string" then
    problem_error(at_file(path, where), "the init function returned %s, not an init rule's text", type(rule))
  end
  return rule
end

-- An input's distribution, parsed, at some sizes (a host distribution as it is, with the sizes,
-- and the problem's file, whose time limit its draw runs under: draw_host)
local function input_dist(a, sizes, where, path)
  if is_host(a.dist) then
    return { gen = "host", text = a.dist.text, args = {}, transforms = {}, draw = a.dist.draw, python = a.dist.python,
             sizes = sizes, path = path }
  end
  return M.parse_dist(dist_text(a, sizes, where, path), where)
end

function M.parse_dist(s, where)
  where = where or "dist"
  if type(s) ~= "string" then problem_error(where, "a distribution is a string, got %s", type(s)) end
  local parts = {}
  for p in (s .. "|"):gmatch("([^|]*)|") do parts[#parts + 1] = p end
  local gen, args = parse_call(parts[1], where, GENERATORS, "distribution")
  local d = { text = s, gen = gen, args = args, transforms = {} }
  if gen == "uniform" and #args == 0 then d.args = { 0, 1 } end
  if gen == "normal" and #args == 0 then d.args = { 0, 1 } end
  if gen == "randint" and #args == 0 then problem_error(where, "randint needs (lo, hi)") end
  if gen == "bags" then
    if #args == 0 then problem_error(where, "bags needs (lo, hi), the range of the bags' lengths") end
    if math.type(args[1]) ~= "integer" or math.type(args[2]) ~= "integer" or args[1] < 0 or args[2] < args[1] then
      problem_error(where, "distribution '%s' needs whole lengths 0 <= lo <= hi", s)
    end
  end
  if gen == "jagged" then
    if #args == 0 then problem_error(where, "jagged needs (h1, ..., hF), the mean length of each row's bags") end
    for _, h in ipairs(args) do
      if math.type(h) ~= "integer" or h < 0 then problem_error(where, "distribution '%s' needs whole mean lengths >= 0", s) end
    end
  end
  if gen == "unique" then
    if #args == 0 then problem_error(where, "unique needs (rows)") end
    if math.type(args[1]) ~= "integer" or args[1] < 1 then problem_error(where, "distribution '%s' needs a whole number of rows >= 1", s) end
  end
  if gen == "zipf" then
    if #args == 0 then problem_error(where, "zipf needs (rows, alpha)") end
    if math.type(args[1]) ~= "integer" or args[1] < 1 or not (args[2] > 0) then
      problem_error(where, "distribution '%s' needs a whole number of rows >= 1 and alpha > 0", s)
    end
  end
  if (gen == "uniform" or gen == "randint") and not (d.args[1] < d.args[2]) then
    problem_error(where, "distribution '%s' needs lo < hi", s)
  end
  for i = 2, #parts do
    local t = parse_call(parts[i], where, TRANSFORMS, "transform")
    d.transforms[#d.transforms + 1] = t
  end
  return d
end

-- ---- argument constructors ----

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
  if a.kind == "input" then
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
  elseif a.kind == "param" then
    if a.init == nil then problem_error(where, "a parameter needs an init rule ('ones', 'zeros', 'uniform(lo, hi)', 'normal(mean, std)', 'kaiming_uniform(fan_in)', 'kaiming_uniform')") end
    if type(a.init) == "string" then parse_call(a.init, where .. ": init", INITS, "init rule") end
    if type(a.init) == "function" then -- at the default sizes, as a dist function is
      parse_call(init_text(a.init, shape, where), where .. ": init", INITS, "init rule")
    elseif type(a.init) ~= "string" then
      problem_error(where, "init is an init rule's text or a function(shape) returning one, got %s", type(a.init))
    end
  elseif a.kind == "scalar" then
    if type(a.value) ~= "number" and type(a.value) ~= "boolean" then
      problem_error(where, "a scalar needs a number value, got %s", type(a.value))
    end
    if type(a.value) == "number" and not finite(a.value) then
      problem_error(where, "a scalar needs a finite value, got %s", tostring(a.value))
    end
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
                        category = def.category, description = def.description,
                        sizes = sizes, path = nil }, Problem)
end

-- An instance: the problem at a dtype and sizes, with every shape resolved.
local Instance = {}
Instance.__index = Instance

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
        parse_call(M.init_rule(r), at_file(self.path, w) .. ": init", INITS, "init rule")
      end
    end
    inst.args[i] = r
  end
  local function call(f, what, ...)
    -- a field that loops for ever is stopped, as a load that does (M.FIELD_LIMIT_S)
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

local unit_hash -- below, with the other distributions

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
    vals = M.bag_offsets(a.shape[1] - 1, math.tointeger(d.args[1]), math.tointeger(d.args[2]), seed)
  elseif d.gen == "jagged" then
    vals = M.jagged_lengths(a.shape[2], d.args, seed)
  elseif d.gen == "host" then
    -- the problem's own code, within M.DRAW_LIMIT_S
    local where = ("input '%s': dist"):format(a.name)
    local ok, r = limited_call(M.DRAW_LIMIT_S, d.path, where, ("in the draw of its host distribution '%s'"):format(d.text),
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

-- init_rule(a) -> a parameter's init rule for its shape, with every number in it: a rule the
-- problem computes from the shape (a function) is called, and "kaiming_uniform" without its
-- fan_in takes PyTorch's, weight.size(1) * prod(kernel) (the product of the dimensions after
-- the first: in_channels / groups x kernel for a convolution's weight, in_features for a
-- linear one).
function M.init_rule(a)
  local rule = a.init
  if type(rule) == "function" then rule = rule(a.shape) end
  if type(rule) == "string" and rule:match("^%s*kaiming_uniform%s*$") then
    local fan_in = 1
    for i = 2, #a.shape do fan_in = fan_in * a.shape[i] end
    rule = ("kaiming_uniform(%d)"):format(fan_in)
  end
  return rule
end

local function init_param(a, seed, scratch, into)
  local new, drop = tensors(scratch)
  local t = into or new("out", a.shape, a.dtype)
  local name, args = parse_call(M.init_rule(a), "param '" .. a.name .. "'", INITS, "init rule")
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

-- ---- other input distributions, for the correctness trials (docs/correctness.md) ----

-- A number in [0, 1) from a seed and a salt (splitmix64), so that the other distributions are
-- a function of the trial's seed alone (declared before the draws, which use it).

-- The CSR offsets of n embedding bags (n + 1 values from 0) whose lengths are the multiset
-- lo, lo + 1, ..., hi, lo, ... (n of them, in turn), shuffled by `seed`: the lengths are spread
-- uniformly over lo..hi and their total, M.bags_total(n, lo, hi), is the same for every seed, so
-- the indices they index have one shape.
function M.bag_offsets(n, lo, hi, seed)
  local len = {}
  for i = 1, n do len[i] = lo + (i - 1) % (hi - lo + 1) end
  for i = n, 2, -1 do
    local j = math.floor(unit_hash(seed, i) * i) + 1
    len[i], len[j] = len[j], len[i]
  end
  local off = { 0 }
  for i = 1, n do off[i + 1] = off[i] + len[i] end
  return off
end

-- The lengths of F rows of n bags (a flat row-major table): row t is the multiset 0, 1, ..., 2 h_t,
-- 0, ... in turn, shuffled by `seed`: mean length about h_t (a keyed jagged tensor's lengths, one
-- row a feature), and a total, M.jagged_total(n, hs), that is the same for every seed.
function M.jagged_lengths(n, hs, seed)
  local out = {}
  for t, h in ipairs(hs) do
    local off = M.bag_offsets(n, 0, 2 * math.tointeger(h), seed * 31 + t)
    for i = 1, n do out[(t - 1) * n + i] = off[i + 1] - off[i] end
  end
  return out
end

-- The total of M.jagged_lengths(n, hs): a problem's id count.
function M.jagged_total(n, hs)
  local total = 0
  for _, h in ipairs(hs) do total = total + M.bags_total(n, 0, 2 * h) end
  return total
end

-- The total length of n bags of lengths lo..hi in turn (M.bag_offsets): a problem's index count.
function M.bags_total(n, lo, hi)
  local k = hi - lo + 1
  local full, rest = n // k, n % k
  return full * (lo + hi) * k // 2 + rest * lo + rest * (rest - 1) // 2
end

function unit_hash(seed, salt)
  local z = (seed * 0x9E3779B97F4A7C15 + salt * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
  z = ((z ~ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
  z = ((z ~ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
  z = z ~ (z >> 31)
  return (z >> 11) / 9007199254740992.0
end

local function fmt(x) return ("%.4g"):format(x) end

-- The generator an input is drawn from in a trial of kind `variant` ("centred" or "shifted"),
-- chosen by its domain; nil where the domain has no other distribution (indices, masks,
-- signs) or where none is declared. The input's transforms (triu, symmetric, softmax, ...)
-- are kept, so the structure the domain promises holds.
function M.other_generator(domain, variant, seed, i, dist)
  local u1, u2, u3 = unit_hash(seed, 3 * i + 1), unit_hash(seed, 3 * i + 2), unit_hash(seed, 3 * i + 3)
  local shifted = variant == "shifted"
  if domain == "rows" then
    -- the rows of randint(0, n): Zipf-like, alpha in [1.05, 1.1) or, shifted, [1.15, 1.2)
    if dist and dist.gen == "randint" and dist.args[1] == 0 then
      return "zipf", { math.tointeger(dist.args[2]), (shifted and 1.15 or 1.05) + 0.05 * u1 }
    end
    return nil
  end
  if domain == "real" or domain == "symmetric" or domain == "upper_triangular"
      or domain == "lower_triangular" or domain == "probabilities" then
    if shifted then
      local mu = (0.5 + 2.5 * u1) * (u3 < 0.5 and -1 or 1)
      return "normal", { mu, 0.25 + 1.75 * u2 }
    end
    return "normal", { 0, 0.5 + 2.5 * u2 }
  elseif domain == "positive" then
    local lo = shifted and (2 + 3 * u1) or (0.05 + 0.45 * u1)
    return "uniform", { lo, lo + 1 + 4 * u2 }
  elseif domain == "nonnegative" then
    local lo = shifted and (1 + 2 * u1) or 0
    return "uniform", { lo, lo + 0.5 + 4.5 * u2 }
  elseif domain == "unit" then
    if shifted then return "uniform", { 0.75 + 0.2 * u1, 1 } end
    return "uniform", { 0, 0.05 + 0.2 * u1 }
  end
  return nil
end

-- Makes every argument: inputs drawn from `seed`, parameters initialised, scalars as values,
-- outputs allocated and poisoned. Returns the list, in declared order, and the distribution
-- each input was drawn from (text, by argument index).
-- opts.variant: "default" (the problem's distributions), "centred" or "shifted" (another
-- distribution of each input's domain where it has one: M.other_generator).
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
        local gen, gargs = M.other_generator(a.domain, variant, seed, i, d)
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

-- ---- loading problems and suites ----

local function dir_exists(p)
  return lfs.attributes(p, "mode") == "directory"
end

-- Where problem files are looked for: $KREACH_PROBLEMS (a colon-separated list), ./problems,
-- and kreach.home's places: problems/ beside or above the binary's directory (a build tree
-- inside the repository), share/kreach/problems beside the binary's bin/ (an installed kreach:
-- cmake --install), else the source tree's (a build directory outside it). The second result:
-- every place looked at.
function M.roots()
  local roots = {}
  local env = os.getenv("KREACH_PROBLEMS")
  if env and env ~= "" then
    for p in env:gmatch("[^:]+") do
      -- a root that is not a directory is a mistake in the variable, said rather than skipped
      -- (the problems the user meant to add would otherwise be silently missing)
      local mode = lfs.attributes(p, "mode")
      if mode ~= "directory" then
        errors.usage("KREACH_PROBLEMS: %s is not a directory (%s)", p, mode and ("it is a " .. mode) or "no such file or directory")
      end
      roots[#roots + 1] = p
    end
  end
  if dir_exists("problems") then roots[#roots + 1] = "problems" end
  local found, looked = home.dirs("problems", "problems")
  for _, d in ipairs(found) do roots[#roots + 1] = d end
  table.insert(looked, 1, "./problems")
  return roots, looked
end

-- How long running a problem or suite file may take, in seconds of wall time (kreach.core.now),
-- before its load is stopped with an error: a file that loops for ever is a mistake, and every
-- command but `kreach list` (which loads files in a loader process with its own --timeout)
-- loads them in its own process. Shipped problem files load in milliseconds.
M.LOAD_LIMIT_S = 60
-- The same for a call of a function of a problem's when it is instantiated (flops, bytes, a
-- shape function): the shipped ones return at once.
M.FIELD_LIMIT_S = 10
-- The same for the draw of a host distribution (kreach.host_dist), once per trial: the shipped
-- ones (dlrm-bench/4's 1.7M ids) take under half a second on the CPU machine.
M.DRAW_LIMIT_S = 60

-- The environment a problem or suite file runs in: the standard library (problem and suite
-- files are trusted code, docs/scripting.md), except that os.exit raises instead of ending the
-- command silently, and `_G` is the environment itself. strict: assigning a global raises.
local function file_env(what, strict)
  local env
  local os_copy = {}
  for k, v in pairs(os) do os_copy[k] = v end
  os_copy.exit = function()
    error(("a %s file may not call os.exit"):format(what), 2)
  end
  -- tables, not an __index function: globals are read in a problem's reference and flops too
  local base = setmetatable({ os = os_copy }, { __index = _G })
  local mt = { __index = base }
  if strict then
    mt.__newindex = function(_, k)
      error(("assignment to undeclared global '%s'"):format(tostring(k)), 2)
    end
  end
  env = setmetatable({}, mt)
  base._G = env
  return env
end

-- run_in_file(path, limit, doing, f) -> pcall(f)'s results, within `limit` seconds for the code
-- of the file at `path` (a chunk of it, or one of its functions): a count hook (every 1000
-- instructions) reads the clock; once past the limit it raises "path:line: took longer than
-- LIMIT s DOING (an endless loop?)", and from then on every instruction of the file itself
-- raises, so that no pcall of the file's can swallow the error. The hook that was set before
-- (if any) is set again afterwards. A loop inside one C call (a pattern that backtracks for
-- ever) cannot be stopped this way.
function M.run_in_file(path, limit, doing, f)
  local source = "@" .. path
  local t0 = core.now()
  local msg
  local function every()
    local info = debug.getinfo(2, "S")
    if info and info.source == source then error(msg, 0) end
  end
  local function hook()
    if core.now() - t0 > limit then
      local line
      for level = 2, 200 do
        local info = debug.getinfo(level, "Sl")
        if not info then break end
        if info.source == source and info.currentline > 0 then line = info.currentline; break end
      end
      msg = ("%s:%s: took longer than %g s %s (an endless loop?)"):format(path, tostring(line or "?"), limit, doing)
      debug.sethook(every, "", 1)
      error(msg, 0)
    end
  end
  local old_hook, old_mask, old_count = debug.gethook()
  debug.sethook(hook, "", 1000)
  local res = table.pack(pcall(f))
  if type(old_hook) == "function" then debug.sethook(old_hook, old_mask, old_count) else debug.sethook() end
  if msg then return false, msg end
  return table.unpack(res, 1, res.n)
end

-- run_file(path, chunk): run_in_file with the load's limit (M.LOAD_LIMIT_S)
local function run_file(path, chunk) return M.run_in_file(path, M.LOAD_LIMIT_S, "to load", chunk) end

-- The id a suite's file must declare, by path (filled by load_suite): a file a suite lists as
-- problem 5 that says id = 1 is a mistake the suite's lookups would hide.
local suite_ids = {}

-- Loads a problem file. opts.sizes and opts.dtype are kept for instantiate. Errors name the
-- file: a syntax error with its line, a bad field with its name.
function M.load(path, opts)
  -- strict globals: a problem file reads the standard library and assigns no globals
  local chunk, err = loadfile(path, "t", file_env("problem", true))
  if not chunk then errors.file(path, err) end
  local ok, p = run_file(path, chunk)
  if not ok then
    -- a user error raised while it loads (a bad kreach.problem{...}) keeps its status
    errors.file(path, errors.message(p), errors.is(p) and p.status or nil)
  end
  if getmetatable(p) ~= Problem then
    errors.load("%s: the file must return kreach.problem{...}, it returned %s", path, type(p))
  end
  local want = suite_ids[path]
  if want and p.id ~= want then
    errors.load("%s: the file says id = %d, but its name makes it problem %d of its suite (files are <id>_<Name>.lua)",
      path, p.id, want)
  end
  p.path = path
  p.load_opts = opts
  return p
end

-- Suites: problems/<...>/suites/<name>.lua returns { name =, description =, dir =, ids = {...},
-- pending = {...}, bare_ids = } (pending: ids listed upstream whose port arrives later;
-- bare_ids = false: a bare number does not name this suite's problems, `<suite>/<id>` does,
-- for a suite whose ids repeat KernelBench's, as dlrm-bench's 1 to 12).
function M.find_suite(name)
  for _, root in ipairs(M.roots()) do
    for sub in lfs.dir(root) do
      local p = ("%s/%s/suites/%s.lua"):format(root, sub, name)
      if sub:sub(1, 1) ~= "." and lfs.attributes(p, "mode") == "file" then return p, root end
    end
  end
  return nil
end

function M.suites()
  local r, seen = {}, {}
  for _, root in ipairs(M.roots()) do
    for sub in lfs.dir(root) do
      local d = ("%s/%s/suites"):format(root, sub)
      if sub:sub(1, 1) ~= "." and dir_exists(d) then
        for f in lfs.dir(d) do
          local n = f:match("^(.+)%.lua$")
          if n and not seen[n] then seen[n] = true; r[#r + 1] = n end
        end
      end
    end
  end
  table.sort(r)
  return r
end

-- A suite's problem files in id order, and the ids still to come.
function M.load_suite(name)
  local path, root = M.find_suite(name)
  if not path then errors.usage("no suite '%s' (suites: %s)", name, table.concat(M.suites(), ", ")) end
  local chunk, lerr = loadfile(path, "t", file_env("suite", false))
  if not chunk then errors.file(path, lerr) end
  local ok, s = run_file(path, chunk)
  if not ok then errors.file(path, errors.message(s)) end
  if type(s) ~= "table" or type(s.ids) ~= "table" or type(s.dir) ~= "string" then
    errors.load("%s: a suite returns { name =, description =, dir =, ids = {...} }", path)
  end
  if s.bare_ids ~= nil and type(s.bare_ids) ~= "boolean" then
    errors.load("%s: bare_ids is a boolean (false: its problems are named %s/<id>, as %s/1, or by name), not %s",
      path, name, name, type(s.bare_ids))
  end
  local dir = root .. "/" .. s.dir
  if not dir_exists(dir) then
    errors.load("%s: dir '%s' is not a directory (%s; dir is relative to %s)", path, s.dir, dir, root)
  end
  local files, twice = {}, {}
  for f in lfs.dir(dir) do
    local id = tonumber(f:match("^(%d+)_.*%.lua$") or "")
    if id then
      if files[id] then twice[id] = { files[id], dir .. "/" .. f } end
      files[id] = dir .. "/" .. f
    end
  end
  local list, listed = {}, {}
  for _, id in ipairs(s.ids) do
    if listed[id] then errors.load("%s: ids lists problem %s twice", path, tostring(id)) end
    listed[id] = true
    if not files[id] then errors.load("%s: problem %s has no file in %s", path, tostring(id), dir) end
    if twice[id] then
      local a, b = twice[id][1], twice[id][2]
      if a > b then a, b = b, a end
      errors.load("%s: problem %s has two files in %s: %s and %s", path, tostring(id), dir,
        a:match("[^/]+$"), b:match("[^/]+$"))
    end
    list[#list + 1] = files[id]
    suite_ids[files[id]] = id
  end
  return { name = s.name or name, description = s.description, path = path, files = list,
           ids = s.ids, pending = s.pending or {}, bare_ids = s.bare_ids ~= false }
end

-- A name that is not exact (issue 35), tried once the exact ones fail: in any case, the whole
-- name ("19_relu") or the part after its id ("relu"); then a unique prefix ("3_batched") or
-- suffix ("_reverse") of either. Several files at one stage is a usage error that names them;
-- none, a "did you mean" from the edit distance. A number is an id, never part of a name.
-- entries: { file =, plain = "19_ReLU", suite = } from the suites searched; `where` ends the
-- "no problem" message. Returns the file, or nil plus the message's " did you mean" tail.
local function loose_match(what, entries, where)
  if what:match("^%d+$") then return nil, "" end
  local q = what:lower()
  local function pick(test)
    local found, seen = {}, {}
    for _, e in ipairs(entries) do
      local plain = e.plain:lower()
      local part = plain:match("^%d+_(.+)$") or plain
      if not seen[e.file] and (test(plain) or test(part)) then
        seen[e.file] = true
        found[#found + 1] = e
      end
    end
    return found
  end
  local found = pick(function(n) return n == q end)
  if #found == 0 then
    found = pick(function(n) return n:sub(1, #q) == q or (#n > #q and n:sub(-#q) == q) end)
  end
  if #found == 1 then return found[1].file end
  if #found > 1 then
    local count, names = {}, {}
    for _, e in ipairs(found) do count[e.plain] = (count[e.plain] or 0) + 1 end
    for i, e in ipairs(found) do
      if i > 8 then names[#names + 1] = ("and %d more"):format(#found - 8); break end
      names[i] = count[e.plain] > 1 and (e.suite .. "/" .. e.plain) or e.plain
    end
    errors.usage("'%s' could be %d problems%s: %s (type more of the name)", what, #found, where,
      table.concat(names, ", "))
  end
  local lower, by_lower = {}, {}
  for _, e in ipairs(entries) do
    local plain = e.plain:lower()
    for _, n in ipairs{ plain, plain:match("^%d+_(.+)$") } do
      if not by_lower[n] then by_lower[n] = e.plain; lower[#lower + 1] = n end
    end
  end
  local near = text.suggest(q, lower)
  return nil, near and (": did you mean '%s'?"):format(by_lower[near]) or ""
end

local function entries_of(s, into)
  for _, f in ipairs(s.files) do
    local base = f:match("([^/]+)%.lua$")
    into[#into + 1] = { file = f, plain = (base:gsub("^0+(%d)", "%1")), suite = s.name }
  end
  return into
end

-- Resolves what a user typed: a path, a suite's problem by id ("19", "019"), by suite and id
-- ("dlrm-bench/3", "kernelbench-l1/19") or by name ("19_ReLU", and loosely "relu": see
-- loose_match). Searches the suite `suite` (default: every suite; a bare id only the suites
-- whose ids are bare, not dlrm-bench's).
function M.resolve(what, suite)
  local mode = lfs.attributes(what, "mode")
  if mode == "file" then return what end
  -- <suite>/<id or name>, where <suite> is a suite and no such file exists
  local sname, rest = what:match("^([%w_%-]+)/([^/]+)$")
  if sname and not mode and M.find_suite(sname) then
    local s = M.load_suite(sname)
    local id = tonumber(rest)
    for i, f in ipairs(s.files) do
      local base = f:match("([^/]+)%.lua$")
      if (id and s.ids[i] == id) or base == rest or base:gsub("^0+(%d)", "%1") == rest then return f end
    end
    for _, pid in ipairs(s.pending) do
      if id == pid then errors.usage("problem %s of %s is not ported yet (kreach list %s)", rest, sname, sname) end
    end
    local f, hint = loose_match(rest, entries_of(s, {}), " of " .. sname)
    if f then return f end
    errors.usage("no problem '%s' in the suite %s (kreach list %s)%s", rest, sname, sname, hint)
  end
  -- what looks like a path (ids and names have no '/' and no '.lua') is a file that cannot be
  -- loaded (status 3), not a name to search the suites for
  if what:find("/", 1, true) or what:match("%.lua$") then
    errors.file(what, mode and ("cannot read the problem: it is a %s, not a file"):format(mode)
      or "cannot read the problem: no such file")
  end
  local names = suite and { suite } or M.suites()
  local id = tonumber(what)
  -- a suite that does not load does not hide the problems of the others; it is said when
  -- nothing matched, since the problem may be one of its own (status 3 then)
  local broken, entries = nil, {}
  for _, sn in ipairs(names) do
    local ok, s = pcall(M.load_suite, sn)
    if not ok then
      if not errors.is(s) or suite then error(s, 0) end
      broken = broken or s
    else
      entries_of(s, entries)
      for i, f in ipairs(s.files) do
        local base = f:match("([^/]+)%.lua$")
        local plain = base:gsub("^0+(%d)", "%1")
        if (id and s.bare_ids and s.ids[i] == id) or base == what or plain == what then return f end
      end
    end
  end
  -- a loose match could be wrong while a suite that does not load might hold the exact name
  if broken then
    errors.load("no problem '%s' in the suites that load (and one does not: %s)", what, errors.message(broken))
  end
  local f, hint = loose_match(what, entries, suite and (" of " .. suite) or "")
  if f then return f end
  errors.usage("no problem '%s' (a path, an id or a name from a suite)%s", what, hint)
end

return M
