-- kreach.ops: the reference operator library that problems' `reference` functions call.
--
-- One implementation serves both paths of a problem: called on tensors of the problem's dtype
-- it is the *baseline* (what candidates are timed against), called on f64 tensors it is the
-- *oracle* (the ground truth for correctness). Kernels are CUDA templates compiled by NVRTC
-- for the dtype they are called with; float, half and bfloat16 accumulate in fp32, double in
-- fp64. Matrix products go to cuBLAS (TF32 off).
--
-- The same functions also run on shape-only tensors (kreach.meta): then they check shapes and
-- dtypes and record which outputs were written, and launch nothing. That is how a problem is
-- validated without a GPU.
--
-- Each family of operators is a module kreach.ops.<family> returning
--   { install = function(lib, K) ... end,      -- adds its functions to lib, using the kit K
--     sources = { { name =, source =, instantiate = function(ctype, dtype) -> {...} } } }
-- `sources` lists every CUDA source the family compiles and the template instantiations it
-- needs at each dtype, so that tests compile them all without a GPU. Adding a family or an
-- operator needs no rebuild of the binary when KREACH_LUA_DIR points at a source tree.
--
-- Variants. Where the sizes select among a family's code paths (a kernel or a template argument,
-- a split reduction, a vectorised body and its scalar tail, a loop that only a large size runs
-- more than once, a grid-stride loop past a grid's cap), the module declares them,
--   variants = { { name =, when = [, alignment = true] [, unreachable = why] }, ... },
-- and each call names the ones it takes through K.variant(family, dtype, name, ...): a name the
-- family does not declare raises, so that no path is added without being declared.
-- tests/lua/variants_values_spec.lua runs problems at sizes chosen to reach each declared variant
-- against PyTorch on the CPU, and fails when one is never reached; `alignment` marks a path only
-- an unaligned pointer selects (no size does), `unreachable` one that no test size nor limit
-- reaches (with why). A family's `limits` are the caps a test may lower (M.with_limits) so that
-- the path above a cap runs at small sizes; the defaults are the shipped behaviour.
local tensor = require "kreach.core.tensor"
local nvrtc = require "kreach.core.nvrtc"
local meta = require "kreach.meta"
local host = require "kreach.host"
local cuda = require "kreach.ops.cuda"
local elementwise = require "kreach.ops.elementwise"
local matmul = require "kreach.ops.matmul"
local reduce = require "kreach.ops.reduce"
local norm = require "kreach.ops.norm"
local pool = require "kreach.ops.pool"
local scan = require "kreach.ops.scan"
local loss = require "kreach.ops.loss"
local attention = require "kreach.ops.attention"
local compare = require "kreach.ops.compare"
local conv = require "kreach.ops.conv"
local embedding = require "kreach.ops.embedding"
local interaction = require "kreach.ops.interaction"
local linear = require "kreach.ops.linear"
local sparse = require "kreach.ops.sparse"
local FAMILY = { elementwise = elementwise, matmul = matmul, reduce = reduce, norm = norm,
                 pool = pool, scan = scan, loss = loss, attention = attention, compare = compare,
                 conv = conv, embedding = embedding, interaction = interaction, linear = linear,
                 sparse = sparse }

local M = {}

-- the variants named by calls while a table is being recorded into (M.record)
local recording

-- declared[family][name] -> the variant's declaration (built on first use)
local declared = {}
local function declaration(family, name)
  local d = declared[family]
  if not d then
    d = {}
    local mod = FAMILY[family]
    for _, v in ipairs(mod and mod.variants or {}) do d[v.name] = v end
    declared[family] = d
  end
  return d[name]
end

-- the families, in the order they are installed (a family is a module kreach.ops.<name>,
-- required above)
M.families = { "elementwise", "matmul", "reduce", "norm", "pool", "scan", "loss", "attention",
               "compare", "conv", "embedding", "interaction", "linear", "sparse" }

M.OPTIONS = { "-std=c++17" }

local CTYPE = {
  f64 = "double", f32 = "float", f16 = "__half", bf16 = "__nv_bfloat16", i64 = "long long",
  i32 = "int", i16 = "short", i8 = "signed char", u8 = "unsigned char", bool = "bool",
}
local FLOAT = { f64 = true, f32 = true, f16 = true, bf16 = true }
M.CTYPE = CTYPE

-- ---- the kit shared by the families ----

local function shape_str(s) return "{" .. table.concat(s, ", ") .. "}" end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function new_kit(lib)
  local K = { meta = lib.meta, ctype = CTYPE, is_float = FLOAT, shape_str = shape_str,
              same_shape = same }
  local programs = {}

  -- Raises "op: message" at the caller of the operator (the problem's reference).
  function K.fail(op, fmt, ...)
    error(op .. ": " .. fmt:format(...), 3)
  end

  function K.check_tensor(op, t, what)
    if not (meta.is_meta(t) or tensor.is_tensor(t)) then
      error(("%s: %s is %s, not a tensor"):format(op, what, type(t)), 3)
    end
  end

  function K.check_float(op, t, what)
    K.check_tensor(op, t, what)
    if not FLOAT[t.dtype] then
      error(("%s: %s is %s, a floating dtype is needed"):format(op, what, t.dtype), 3)
    end
  end

  function K.check_same(op, a, b, what_a, what_b)
    if not same(a.shape, b.shape) then
      error(("%s: %s is %s but %s is %s"):format(op, what_b, shape_str(b.shape), what_a,
        shape_str(a.shape)), 3)
    end
    if a.dtype ~= b.dtype then
      error(("%s: %s is %s but %s is %s"):format(op, what_b, b.dtype, what_a, a.dtype), 3)
    end
  end

  function K.check_shape(op, t, shape, what)
    if not same(t.shape, shape) then
      error(("%s: %s is %s, expected %s"):format(op, what, shape_str(t.shape), shape_str(shape)), 3)
    end
  end

  function K.check_dtype(op, t, dtype, what)
    if t.dtype ~= dtype then
      error(("%s: %s is %s, expected %s"):format(op, what, t.dtype, dtype), 3)
    end
  end

  -- Marks an output written (meta mode); returns true when the caller should launch.
  function K.writes(...)
    if not lib.meta then return true end
    for _, t in ipairs({ ... }) do t:mark_written() end
    return false
  end

  -- The compiled program for a family's source at one dtype: `instantiate(ctype)` lists the
  -- template instantiations to make launchable. Compiled once per (family, dtype, key).
  function K.program(family, source, dtype, instantiate, key)
    local k = family .. "\0" .. dtype .. "\0" .. (key or "")
    local p = programs[k]
    if p then return p end
    local inst = instantiate(CTYPE[dtype], dtype)
    if host.active() then
      -- the host device (KREACH_DEVICE=host): g++ under kreach.emulate, not NVRTC
      local prog = host.build{ source = M.compile_source(family, source), instantiate = inst,
                               name = "kreach.ops." .. family }
      programs[k] = prog
      return prog
    end
    local prog, err = nvrtc.build{ source = M.compile_source(family, source),
                                    name = "kreach_ops_" .. family .. ".cu", instantiate = inst,
                                    options = M.OPTIONS }
    if not prog then error("kreach.ops." .. family .. ": the operator source does not compile:\n" .. err, 0) end
    programs[k] = prog
    return prog
  end

  -- Blocks for a 1-D launch of n items, `per` items a thread.
  function K.blocks(n, threads, per)
    local b = (n + threads * per - 1) // (threads * per)
    return b < 1 and 1 or b
  end

  -- Temporary device memory for an operator (or a shape-only stand-in in meta mode).
  -- While a timing pool is set (lib.pool, kreach.judge.timing), it serves the memory, so that no
  -- allocation or free happens inside a timed call or a captured graph.
  function K.empty(shape, dtype)
    if lib.meta then return meta.new(shape, dtype, "scratch") end
    if lib.pool then return lib.pool:take(shape, dtype) end
    return tensor.empty(shape, dtype)
  end

  function K.aligned(t, bytes)
    if lib.meta then return true end
    return t:data_ptr() % bytes == 0
  end

  -- K.variant(family, dtype, name, ...): the call at dtype takes these declared variants of the
  -- family (see the header); raises on a name the family does not declare.
  function K.variant(family, dtype, ...)
    for i = 1, select("#", ...) do
      local name = select(i, ...)
      if not declaration(family, name) then
        error(("kreach.ops.%s: the selection chose the variant '%s', which the family's variants do not declare"):format(
          family, tostring(name)), 2)
      end
      if recording then
        local key = family .. "/" .. name
        local r = recording[key]
        if not r then r = {}; recording[key] = r end
        r[dtype] = (r[dtype] or 0) + 1
      end
    end
  end

  return K
end

-- A library: lib.meta tells which kind, every family installed in it.
function M.library(opts)
  local lib = { meta = opts and opts.meta or false }
  local K = new_kit(lib)
  lib.kit = K
  -- empty(shape, dtype) -> a temporary for a reference (an intermediate between two operators):
  -- shape-only while the reference is validated, from the timing pool while it is timed (no
  -- allocation in a timed call), else a new tensor. Free it with :free() when done.
  lib.empty = K.empty
  for _, fam in ipairs(M.families) do
    local mod = M.family(fam)
    if mod then mod.install(lib, K) end
  end
  return lib
end

-- The module of a family, or nil when there is no such family.
function M.family(fam)
  return FAMILY[fam]
end

-- The source and instantiations a family compiles at a dtype, for K.program.
function M.compile_source(family, source)
  return cuda .. "\n" .. source
end

-- variants() -> every declared variant, in the families' order: { family =, name =, id =
-- "family/name", when =, alignment =, unreachable = }
function M.variants()
  local out = {}
  for _, fam in ipairs(M.families) do
    for _, v in ipairs(FAMILY[fam].variants or {}) do
      out[#out + 1] = { family = fam, name = v.name, id = fam .. "/" .. v.name, when = v.when,
                        alignment = v.alignment or false, unreachable = v.unreachable }
    end
  end
  return out
end

-- record(t) -> the previous table: from now on each variant a call takes is counted into t
-- (t["family/name"][dtype] = calls); nil stops recording.
function M.record(t)
  local prev = recording
  recording = t
  return prev
end

-- with_limits({ [family] = { [limit] = value } }, fn, ...) -> fn(...)'s results, run with those
-- limits of the families (their `limits`) in place of the shipped ones, which are put back
-- afterwards (also when fn raises, which is raised again).
function M.with_limits(limits, fn, ...)
  local saved = {}
  for fam, t in pairs(limits) do
    local mod = FAMILY[fam]
    if not (mod and mod.limits) then error(("kreach.ops: the family %s has no limits"):format(tostring(fam)), 2) end
    saved[fam] = {}
    for k, v in pairs(t) do
      if mod.limits[k] == nil then error(("kreach.ops.%s: no limit '%s'"):format(fam, tostring(k)), 2) end
      saved[fam][k] = mod.limits[k]
      mod.limits[k] = v
    end
  end
  local r = table.pack(pcall(fn, ...))
  for fam, t in pairs(saved) do
    for k, v in pairs(t) do FAMILY[fam].limits[k] = v end
  end
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

local libs = {}
-- The shared instances: ops.get() for real tensors, ops.get(true) for meta tensors.
function M.get(is_meta)
  local k = is_meta and "meta" or "real"
  if not libs[k] then libs[k] = M.library{ meta = is_meta } end
  return libs[k]
end

return M
