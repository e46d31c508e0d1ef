-- kreach.candidate.lua: loading candidate files and running their `forward` in a sandbox.
--
-- A candidate is a Lua file returning { source = "...CUDA...", options = {...}, forward =
-- function(k, ...) ... end } (docs/candidates.md). Everything here treats the file as hostile:
-- it runs with only the sandbox's globals, under a step limit, sees tensors as metadata-only
-- handles, and reaches the GPU only through its own compiled kernels and scratch memory.
-- Every failure is a candidate error whose message names the file (and the line where Lua
-- knows it), so that it becomes the verdict `invalid_candidate`.
local directives = require "kreach.candidate.directives"
local errors = require "kreach.errors"
local fs = require "kreach.core.fs"
local meta = require "kreach.meta"
local nvrtc = require "kreach.core.nvrtc"
local seal = require "kreach.run.seal"
local sealcore = require "kreach.core.seal"
local tensor = require "kreach.core.tensor"
local util = require "kreach.core.util"
local verdict = require "kreach.verdict"

local M = {}

local CandidateError = { __tostring = function(e) return e.msg end }
M.CandidateError = CandidateError

-- A candidate error is material for a verdict, not an exit status (kreach.errors): its message
-- names the candidate's file, never a position in kreach's own code.
local function fail(kind, msg)
  error(setmetatable({ kind = kind, msg = errors.clean(msg) }, CandidateError), 0)
end
M.fail = fail

function M.is_error(e) return getmetatable(e) == CandidateError end

-- ---- NVRTC options: an allow-list. What is not known to be harmless is refused. ----

local function toolkit_include()
  for _, v in ipairs({ os.getenv("CUDA_HOME"), os.getenv("CUDA_PATH"), "/usr/local/cuda" }) do
    if v and v ~= "" then return (v:gsub("/+$", "")) .. "/include" end
  end
end

local FLAG_OPTIONS = {
  ["--use_fast_math"] = true, ["-use_fast_math"] = true,
  ["--extra-device-vectorization"] = true, ["-extra-device-vectorization"] = true,
  ["--restrict"] = true, ["-restrict"] = true,
  ["--generate-line-info"] = true, ["-lineinfo"] = true,
  ["--disable-warnings"] = true, ["-w"] = true,
  ["--no-source-include"] = true, ["-no-source-include"] = true,
}
local function bool(v) return v == "true" or v == "false" end
local VALUE_OPTIONS = { -- name -> a check of its value
  ["--fmad"] = bool, ["--ftz"] = bool, ["--prec-div"] = bool, ["--prec-sqrt"] = bool,
  ["--std"] = function(v) return v:match("^c%+%+%d%d$") ~= nil end,
  ["-std"] = function(v) return v:match("^c%+%+%d%d$") ~= nil end,
  ["--maxrregcount"] = function(v) return v:match("^%d+$") ~= nil end,
  ["-maxrregcount"] = function(v) return v:match("^%d+$") ~= nil end,
  ["--dopt"] = function(v) return v == "on" or v == "off" end,
}

-- Returns the options as given, or raises a candidate error naming the first refused one.
function M.check_options(opts, where)
  where = where or "candidate"
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail("invalid", ("%s: 'options' must be a table of strings, got %s"):format(where, type(opts))) end
  local out = {}
  for i, o in ipairs(opts) do
    if type(o) ~= "string" then fail("invalid", ("%s: option %d is a %s, not a string"):format(where, i, type(o))) end
    local name, value = o:match("^(%-%-?[%w%-_]+)=(.*)$")
    local ok, why = false, nil
    if FLAG_OPTIONS[o] then
      ok = true
    elseif name and VALUE_OPTIONS[name] then
      ok = VALUE_OPTIONS[name](value)
      why = ok and nil or ("'%s' is not a valid value for %s"):format(value, name)
    elseif o:match("^%-D[%a_][%w_]*=?.*$") then
      ok = not o:find("[%c]")
    elseif o:match("^%-I") or o:match("^%-%-include%-path") then
      -- headers from the CUDA toolkit only: no reading of arbitrary files at compile time
      local dir = o:match("^%-I(.+)$") or o:match("^%-%-include%-path=(.+)$") or ""
      local inc = toolkit_include()
      dir = dir:gsub("/+$", "")
      ok = inc ~= nil and (dir == inc or dir:sub(1, #inc + 1) == inc .. "/") and not dir:find("%.%.")
      why = ok and nil or ("include paths outside the CUDA toolkit (%s) are not allowed"):format(inc or "?")
    elseif o:match("^%-rdc") or o:match("^%-%-relocatable%-device%-code") or o == "-dc" or o == "--device-c" then
      why = "relocatable device code (and so device-side launches) is not allowed"
    elseif o:match("^%-arch") or o:match("^%-%-gpu%-architecture") then
      why = "the harness chooses the architecture"
    end
    if not ok then
      fail("invalid", ("%s: NVRTC option '%s' refused%s"):format(where, o,
        why and (": " .. why) or " (not on the list of allowed options; see docs/candidates.md)"))
    end
    out[#out + 1] = o
  end
  return out
end

-- ---- the sandbox ----

local SAFE_BASE = { "assert", "error", "ipairs", "next", "pairs", "select", "tonumber",
  "tostring", "type", "rawequal", "rawlen" }

local function copy_lib(lib, drop)
  local t = {}
  for k, v in pairs(lib) do if not (drop and drop[k]) then t[k] = v end end
  return t
end

-- Lua's pattern matching backtracks: a pattern with q repetitions (`*`, `+`, `-`, `?`, `%b`)
-- tried at each of n start positions can take about n^(q+1) steps (n^q anchored with `^`)
-- inside one C call, where no step limit reaches (a hostile reply's
-- ("a"):rep(20000):find(".-.-.-b") runs for hours); a pattern without repetitions, or a plain
-- find, compares it at each position: about n * m steps for a pattern of m bytes. A
-- back-reference (`%1`..`%9`) compares the whole capture again, up to n bytes, at every state
-- the backtracking reaches: it costs a factor of n as a repetition does, and is counted as one
-- (("a"):rep(30000):find("(.-)%1b") takes n^3/6 steps, not n^2). So while
-- candidate code runs, find, match, gmatch and gsub refuse a call whose bound is above
-- M.PATTERN_STEPS (about 5 s at worst) when candidate code makes it: directly, by a tail call,
-- or through a C function (a callback of table.sort or gsub). The harness's own calls from Lua
-- are not checked.
M.PATTERN_STEPS = 1e9
local sbyte = string.byte
-- pattern_repetitions(p) -> q, anchored, backrefs: the repetitions of Lua pattern p (`*`, `+`,
-- `-`, `?` and `%b`, not inside a set or after '%') plus its back-references (`%1`..`%9`);
-- whether it is anchored (a first `^`); how many of q are back-references.
-- kreach.profile.classify bounds its rules' patterns with it too.
function M.pattern_repetitions(p)
  local q, backrefs = 0, 0
  local i, n = 1, #p
  if sbyte(p, 1) == 94 then i = 2 end -- "^"
  -- the end of the set that starts at p[j] == "[": its "]"; a first "]" (after "^") is a member
  local function set_end(j)
    j = j + 1
    if sbyte(p, j) == 94 then j = j + 1 end
    if sbyte(p, j) == 93 then j = j + 1 end
    while j <= n and sbyte(p, j) ~= 93 do
      j = j + (sbyte(p, j) == 37 and 2 or 1) -- "%x" inside a set
    end
    return j
  end
  while i <= n do
    local c = sbyte(p, i)
    if c == 37 then -- "%"
      local e = sbyte(p, i + 1)
      if e == 98 then -- "%bxy"
        q, i = q + 1, i + 4
      elseif e == 102 then -- "%f[set]"
        i = sbyte(p, i + 2) == 91 and set_end(i + 2) + 1 or i + 2
      elseif e and e >= 49 and e <= 57 then -- "%1".."%9"
        q, backrefs, i = q + 1, backrefs + 1, i + 2
      else
        i = i + 2
      end
    elseif c == 91 then -- "["
      i = set_end(i) + 1
    else
      if c == 42 or c == 43 or c == 45 or c == 63 then q = q + 1 end -- "*", "+", "-", "?"
      i = i + 1
    end
  end
  return q, sbyte(p, 1) == 94, backrefs -- "^": anchored
end
local repetitions = M.pattern_repetitions
local sandboxed -- the source ("@path") of the candidate code running now, or nil
-- "3 repetitions", "1 repetition and 1 back-reference"
local function counted(reps, backrefs)
  local function n(k, what) return ("%d %s%s"):format(k, what, k == 1 and "" or "s") end
  if backrefs == 0 then return n(reps, "repetition") end
  if reps == 0 then return n(backrefs, "back-reference") end
  return n(reps, "repetition") .. " and " .. n(backrefs, "back-reference")
end
local function guard(name)
  local f = string[name]
  return function(s, p, ...)
    if sandboxed and type(p) == "string" and (type(s) == "string" or type(s) == "number") then
      local caller = debug.getinfo(2, "S")
      if not caller or caller.source == sandboxed or caller.what == "C" or debug.getinfo(1, "t").istailcall then
        local n, m = #tostring(s), #p
        local steps, q, anchored, backrefs
        if name == "find" and select(2, ...) then
          q, steps = 0, n * m -- plain
        else
          q, anchored, backrefs = repetitions(p)
          steps = q > 0 and n ^ (q + (anchored and 0 or 1)) or (anchored and m or n * m)
        end
        if steps > M.PATTERN_STEPS then
          error(("string.%s: %s over %d bytes could take %.3g steps (more than %.3g): match a shorter string or a simpler pattern"):format(
            name, q > 0 and ("a pattern with %s"):format(counted(q - (backrefs or 0), backrefs or 0)) or ("a pattern of %d bytes"):format(m),
            n, steps, M.PATTERN_STEPS), 2)
        end
      end
    end
    return f(s, p, ...)
  end
end
local SANDBOX_STRING = copy_lib(string, { dump = true })
for _, name in ipairs({ "find", "match", "gmatch", "gsub" }) do SANDBOX_STRING[name] = guard(name) end

-- A fresh environment: only what a forward function needs to compute launch configurations.
-- No io, os, debug, load, require, package, collectgarbage, coroutine (a coroutine would run
-- outside the step limit), pcall (it could swallow the step limit), metatables (finalizers
-- would run outside the sandbox), print (stdout belongs to the harness).
function M.environment()
  local env = {}
  for _, k in ipairs(SAFE_BASE) do env[k] = _G[k] end
  env.math = copy_lib(math, { random = true, randomseed = true })
  env.string = copy_lib(SANDBOX_STRING)
  env.table = copy_lib(table)
  env.utf8 = copy_lib(utf8)
  env._G = env
  env._VERSION = _VERSION
  return setmetatable(env, { __metatable = false })
end

-- ---- the Lua heap ----
-- A candidate's Lua code runs in the worker's own Lua state, so its allocations are capped
-- there (kreach.core.util.heap_limit, the state's counting allocator): one line that doubles a
-- string forty times must end at once, not after the worker's RLIMIT_DATA (gigabytes) is
-- reached. The allowance is M.HEAP_BYTES (kreach's --lua-memory; the worker sets it); the
-- cap is the harness's live heap when the candidate starts loading plus the allowance, armed
-- only while the candidate's code runs. What the candidate keeps referenced between calls (its
-- globals, its upvalues) stays inside the cap, so no series of calls can grow past it; what
-- the harness keeps meanwhile counts too (a few MiB at most in a worker, against 256).
-- The cap is lifted before any harness code runs after a candidate's call, so the harness
-- can always report the verdict, even when the candidate still holds its memory.
M.HEAP_BYTES = 256 * 1024 * 1024

-- The cap to arm for a candidate whose load starts now: the live heap plus the allowance.
local function heap_budget()
  collectgarbage()
  return { limit = util.heap_used() + M.HEAP_BYTES, allowance = M.HEAP_BYTES }
end

-- arm(budget) -> the cap before, as util.heap_limit returns it; an outer cap lower than the
-- candidate's (kreach.generate.extract's, around a model's reply) stays.
local function arm(budget)
  local before = util.heap_limit(budget.limit)
  if before and before < budget.limit then util.heap_limit(before) end
  return before
end

-- disarm(before, ...) -> ...: the cap as it was, with no allocation before it is restored
-- (the results stay on the stack)
local function disarm(before, ...)
  util.heap_limit(before)
  return ...
end

-- Runs fn(...) with at most `steps` Lua instructions (counted in blocks of 1000, harness code
-- called from it included). Once the limit is hit, every instruction of the chunk `source`
-- (the candidate file) raises, so no loop of the candidate's can swallow the error, while the
-- harness's own code runs on to report it.
function M.run_limited(steps, source, fn, ...)
  return M.run_sandboxed(nil, steps, source, fn, ...)
end

-- run_sandboxed(budget, steps, source, fn, ...): run_limited, with the Lua heap capped by
-- `budget` (heap_budget's; nil: not capped) while fn runs.
function M.run_sandboxed(budget, steps, source, fn, ...)
  local count = 0
  local tripped, where = false, nil
  local function every()
    local info = debug.getinfo(2, "Sl")
    if info and info.source == source then
      where = where or info.currentline
      error("step limit", 0)
    end
  end
  local function hook()
    count = count + 1000
    if count > steps then
      tripped = true
      debug.sethook(every, "", 1)
      every()
    end
  end
  -- an error value that is not a message (error({}), error()) is said as such, at the
  -- candidate's line that raised it: never as "table: 0x..." (an address differs from run to run)
  local function handler(e)
    if type(e) == "string" or M.is_error(e) then return e end
    local what = e == nil and "nil" or ("a " .. type(e) .. " value")
    for level = 2, 64 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source == source then
        return ("%s:%d: raised %s instead of an error message"):format(source:sub(2), info.currentline, what)
      end
    end
    return ("%s: raised %s instead of an error message"):format(source:sub(2), what)
  end
  -- a string's methods (("x"):find) are the string metatable's, shared by the process: the
  -- sandbox's guarded ones while fn runs
  local smt = getmetatable("")
  local sindex, outer = smt.__index, sandboxed
  smt.__index, sandboxed = SANDBOX_STRING, source
  debug.sethook(hook, "", 1000)
  local res
  if budget then
    local before = arm(budget)
    res = table.pack(disarm(before, xpcall(fn, handler, ...)))
  else
    res = table.pack(xpcall(fn, handler, ...))
  end
  debug.sethook()
  smt.__index, sandboxed = sindex, outer
  if tripped then
    return false, ("%s:%s: ran past its step limit (%d Lua instructions)"):format(source:sub(2),
      tostring(where or "?"), steps)
  end
  return table.unpack(res, 1, res.n)
end

-- ---- loading ----

-- What a message about the candidate's Lua heap says of its cap.
function M.heap_note(bytes)
  return ("the candidate's Lua heap is limited to %s (--lua-memory changes it)"):format(seal.format_size(bytes or M.HEAP_BYTES))
end

-- A Lua memory error ("not enough memory") says which limit it ran into: the candidate's heap
-- cap when one was armed (budget), else the worker's memory limit. The allocator does not say
-- which refused; with the worker's limit under twice the cap, both are named.
local function explain_memory(msg, budget)
  if not msg:find("not enough memory", 1, true) then return msg end
  local worker = seal.memory_note()
  local note
  if budget then
    local rlimit = sealcore.memory_limit()
    note = M.heap_note(budget.allowance)
    if worker and rlimit and rlimit < 2 * budget.limit then note = note .. "; " .. worker end
  else
    note = worker or "no memory limit is set"
  end
  return msg .. " (out of memory: " .. note .. ")"
end

local FIELDS = { source = "string", options = "table", forward = "function", name = "string",
  origin = "table", notes = "string" }

-- The most a candidate file may hold (kreach.run.evaluate's manifest rule uses the same limit).
M.MAX_FILE_BYTES = 4 * 1024 * 1024

-- read(path) -> the text of a candidate file | nil, "<path>: cannot read the candidate: <why>".
-- Only a regular file (links followed) of at most MAX_FILE_BYTES is read: a FIFO, /dev/zero or
-- a directory given as the candidate is refused at once instead of hanging or exhausting the
-- reader.
function M.read(path)
  if type(path) ~= "string" then error(("candidate.read: path must be a string, got %s"):format(type(path)), 2) end
  local text, err = fs.read_regular(path, M.MAX_FILE_BYTES)
  if not text then return nil, ("%s: cannot read the candidate: %s"):format(path, err) end
  return text
end

-- Loads a candidate file. Returns { path, source, options, forward, name, origin, line, heap
-- (the Lua heap's cap while its code runs) }; raises a
-- candidate error for a file that does not load or is not a candidate.
function M.load(path, opts)
  local text, err = M.read(path)
  if not text then fail("invalid", err) end
  return M.load_text(text, path, opts)
end

-- load_text(text, path, opts) -> what load returns, for a candidate's text that did not come
-- from a file (a model's reply: kreach.generate.extract); `path` names it in every message.
function M.load_text(text, path, opts)
  opts = opts or {}
  if #text > M.MAX_FILE_BYTES then
    fail("invalid", ("%s: %d bytes, more than a candidate may hold (%d)"):format(path, #text, M.MAX_FILE_BYTES))
  end
  local env = M.environment()
  -- as lua and loadfile read a file: a UTF-8 byte-order mark is skipped, and a first line that
  -- starts with '#' (#!) is a comment (its line still counts)
  text = text:gsub("^\239\187\191", "", 1)
  if text:sub(1, 1) == "#" then text = "--" .. text end
  local chunk, lerr = load(text, "@" .. path, "t", env)
  if not chunk then
    -- a syntax error names the file and line; "attempt to load a binary chunk" names nothing
    if not lerr:find(path, 1, true) then lerr = ("%s: not a Lua source file: %s"):format(path, lerr) end
    fail("invalid", lerr)
  end
  local budget = heap_budget()
  local ok, c = M.run_sandboxed(budget, opts.load_steps or 10000000, "@" .. path, chunk)
  if not ok then
    local msg = explain_memory(tostring(c), budget)
    if not msg:find(path, 1, true) then msg = path .. ": " .. msg end
    fail("invalid", msg)
  end
  if type(c) ~= "table" then fail("invalid", ("%s: a candidate file returns a table, not %s"):format(path, type(c))) end
  for k, v in pairs(c) do
    local want = FIELDS[k]
    if not want then fail("invalid", ("%s: unknown field '%s' (fields: source, options, forward, name, origin, notes)"):format(path, tostring(k))) end
    if type(v) ~= want then fail("invalid", ("%s: field '%s' must be a %s, got %s"):format(path, k, want, type(v))) end
  end
  if not c.source then fail("invalid", path .. ": missing field 'source' (the CUDA C++ source)") end
  if not c.forward then fail("invalid", path .. ": missing field 'forward' (function(k, ...))") end
  local info = debug.getinfo(c.forward, "S")
  if info.what ~= "Lua" or info.source ~= "@" .. path then
    fail("invalid", path .. ": 'forward' must be a function defined in the candidate file")
  end
  local options = M.check_options(c.options, path)
  -- the source's preprocessing may reach no file outside the CUDA toolkit's headers
  local sok, sline, swhy = directives.check(c.source, directives.context(options))
  if not sok then
    fail("invalid", sline > 0 and ("%s: source line %d: %s"):format(path, sline, swhy) or ("%s: %s"):format(path, swhy))
  end
  return { path = path, source = c.source, options = options,
           forward = c.forward, name = c.name, origin = c.origin, line = info.linedefined, heap = budget }
end

-- ---- what forward sees ----

-- Tensors reach forward as handles with metadata only; the real tensor stays in a table the
-- candidate cannot reach.
local Handle = { __metatable = false }
Handle.__index = function(h, k)
  local t = Handle.real[h]
  if k == "shape" then return t.shape end
  if k == "dtype" then return t.dtype end
  if k == "numel" then return function() return t:numel() end end
  if k == "dim" then return function() return t:dim() end end
  if k == "size" then return function(_, i) return t:size(i) end end
  error(("a tensor handle has shape, dtype, numel, size and dim only (not '%s')"):format(tostring(k)), 2)
end
Handle.__newindex = function() error("tensor handles are read-only", 2) end
Handle.__tostring = function(h) return "tensor(" .. Handle.real[h].dtype .. ", {" .. table.concat(Handle.real[h].shape, ", ") .. "})" end
Handle.real = setmetatable({}, { __mode = "k" })

function M.handle(t)
  local h = setmetatable({}, Handle)
  Handle.real[h] = t
  return h
end

function M.unwrap(v)
  local t = type(v) == "table" and Handle.real[v]
  return t or v
end

-- The `k` object: k.<kernel>{grid=, block=, shared=}(args...) launches one of the candidate's
-- kernels on the harness stream; k:scratch(shape, dtype) gives temporary device memory (freed
-- after the call). `prog` is the compiled program; `record`, when given, receives each launch
-- instead of running it (a dry run on shape-only tensors); `pool` (kreach.judge.timing.pool), when
-- given, serves k:scratch without allocating (timing).
function M.kit(prog, opts)
  opts = opts or {}
  local scratch = {}
  local launches = 0
  local launched, launched_seen = {}, {} -- the kernels launched, in the order of their first launch
  local k = {}
  local kernels = {}
  for _, name in ipairs(prog.kernels) do kernels[name] = true end
  local function launcher(name)
    return function(cfg)
      if type(cfg) ~= "table" then error(("k.%s takes a launch configuration {grid =, block =, shared =}"):format(name), 2) end
      return function(...)
        local args = table.pack(...)
        for i = 1, args.n do args[i] = M.unwrap(args[i]) end
        launches = launches + 1
        if not launched_seen[name] then
          launched_seen[name] = true
          launched[#launched + 1] = name
        end
        if opts.record then
          opts.record(name, cfg, args)
        else
          prog:kernel(name)(cfg)(table.unpack(args, 1, args.n))
        end
      end
    end
  end
  setmetatable(k, {
    __metatable = false,
    __index = function(_, name)
      if name == "scratch" then
        return function(_, shape, dtype)
          local t
          if opts.record then
            -- what kreach.empty checks, without allocating (and within the dry run's budget)
            if opts.scratch then opts.scratch(shape, dtype or "f32") end
            t = meta.new(shape, dtype or "f32", "scratch")
          elseif opts.pool then t = opts.pool:take(shape, dtype or "f32")
          else t = tensor.empty(shape, dtype or "f32") end
          scratch[#scratch + 1] = t
          return M.handle(t)
        end
      end
      if not kernels[name] then
        local names = {}
        for n in pairs(kernels) do names[#names + 1] = n end
        table.sort(names)
        error(("the candidate has no kernel '%s' (kernels: %s)"):format(tostring(name), table.concat(names, ", ")), 2)
      end
      return launcher(name)
    end,
    __newindex = function() error("k is read-only", 2) end,
  })
  local function release()
    for _, t in ipairs(scratch) do if t.is_live and t:is_live() and t.free then t:free() end end
    scratch = {}
  end
  return k, { release = release, launches = function() return launches end, launched = function() return launched end }
end

-- Calls the candidate's forward with handles for the tensors (numbers pass as they are).
-- Returns true, or false and a message naming the file and line.
function M.call_forward(cand, k, vals, opts)
  opts = opts or {}
  local args = {}
  for i, v in ipairs(vals) do args[i] = (type(v) == "number" or type(v) == "boolean") and v or M.handle(v) end
  local ok, r = M.run_sandboxed(cand.heap, opts.steps or 10000000, "@" .. cand.path, cand.forward, k, table.unpack(args, 1, #vals))
  if not ok then
    local msg = explain_memory(tostring(r), cand.heap)
    if M.is_error(r) then msg = r.msg end
    msg = errors.clean(msg)
    if not msg:find(cand.path, 1, true) then msg = cand.path .. ": " .. msg end
    return false, msg
  end
  if r ~= nil then
    return false, ("%s:%d: forward returned a value; candidates write the outputs they are given and return nothing"):format(cand.path, cand.line)
  end
  return true
end

-- ---- the judge's side: an opened candidate ----
-- open(inst, path, o) -> an opened candidate, or nil and a verdict: the file loaded (from
-- o.source, the bytes the caller read, when given; else read now) and compiled (o.build, in
-- place of kreach.core.nvrtc.build: tests give a host program; o.arch). The object the judge
-- (kreach.judge.check, kreach.judge.measure) drives any candidate format through
-- (kreach.candidate's open):
--   :bind(sets, {pool =})      -> true: the kit its forward is given (scratch from pool); the
--                                 timed calls' sets (kreach.judge.sets) it calls on
--   :call(k)                   -> true | nil, verdict: forward on set k's cvals (measure)
--   :check_call(vals, outs, args, lib) -> {} (mutated inputs: none beyond kreach's own hashes)
--                                 | nil, verdict: forward on a trial's arguments `args` (its
--                                 inputs vals, its fenced outputs outs; kreach.judge.check)
--   :release()                 after a call (and its synchronisation): the kit's launches
--   :mutated(k, vals, lib)     -> {} (a Lua candidate has no copies of the inputs of its own)
--   :method()                  -> how its time was measured (the record's time_method), warnings
--   :close()
--   round_checks = true        its timed rounds are judged (kreach.judge.rounds)
--   compile_ms, kernels        from the compile
local Opened = {}
Opened.__index = Opened

-- load_from(o, path) -> pcall's results of loading the candidate: from o.source (the bytes the
-- worker read once and checked) when given, else from its file
local function load_from(o, path)
  if o.source then return pcall(M.load_text, o.source, path) end
  return pcall(M.load, path)
end

M.METHOD = "kreach worker: CUDA events on kreach's stream, taken in C, the candidate's Lua sandboxed"

function M.open(inst, path, o)
  o = o or {}
  local phase = o.phase or function() end
  phase("load")
  local ok, cand = load_from(o, path)
  if not ok then return nil, verdict.from_candidate_error(cand) end
  phase("compile")
  local prog, err = (o.build or nvrtc.build){ source = cand.source, name = (path:match("([^/]+)%.lua$") or "candidate") .. ".cu",
                                               options = cand.options, arch = o.arch }
  if not prog then return nil, verdict.new("compile_error", err) end
  return setmetatable({ cand = cand, prog = prog, inst = inst, steps = o.steps, round_checks = true,
                        compile_ms = prog.compile_ms, kernels = prog.kernels }, Opened)
end

function Opened:bind(sets, b)
  self.sets = sets
  self.pool = b and b.pool
  self.kit, self.ctl = M.kit(self.prog, self.pool and { pool = self.pool } or nil)
  return true
end

function Opened:call(k)
  local ok, err = M.call_forward(self.cand, self.kit, self.sets[k].cvals, { steps = self.steps })
  self.ctl.release()
  if self.pool then self.pool:release() end
  if not ok then return nil, verdict.from_candidate_error(err) end
  return true
end

function Opened:check_call(_, _, args)
  if not self.kit then self:bind(nil) end
  local ok, err = M.call_forward(self.cand, self.kit, args, { steps = self.steps })
  if not ok then
    self.ctl.release()
    return nil, verdict.new("invalid_candidate", err)
  end
  return {}
end

function Opened:release() if self.ctl then self.ctl.release() end end
function Opened:mutated() return {} end
function Opened:method() return { method = M.METHOD }, {} end
function Opened:close() self:release() end

-- ---- before the GPU: compile and a dry run on shape-only tensors ----

-- The line the candidate file `path` is at (its innermost running frame), for messages.
local function candidate_line(path)
  for level = 2, 200 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.source == "@" .. path then return info.currentline end
  end
end

-- Checks one recorded launch as a real launch would, through the same C code: the launch
-- table as a launch parses it (grid and block dimensions, unknown keys, shared), the arguments
-- against the kernel's declaration (count, tensor dtypes, scalar ranges; the tensors are
-- shape-only), and the configuration against the limits of the architecture compiled for and
-- what the cubin says of the kernel (kr_launch_check: threads per block for its registers and
-- __launch_bounds__, block and grid dimensions, dynamic shared memory). A failure names the
-- candidate's file and the line of forward that launched.
local function check_launch(prog, name, cfg, args, path)
  local ok, err = pcall(function() return prog:kernel(name)(cfg):check(table.unpack(args, 1, args.n)) end)
  if not ok then
    local msg = tostring(err):gsub("^[^:\n]*:%d+: ", "", 1) -- the harness's own position
    error(("%s:%s: %s"):format(path, candidate_line(path) or "?", msg), 0)
  end
end

-- The most scratch memory a dry run lets one call of forward ask for (in all): more than any
-- GPU kreach knows has. On the GPU the allocation itself decides.
M.LINT_SCRATCH_LIMIT_BYTES = 1 << 40

-- The check of one k:scratch(shape, dtype) of a dry run: what kreach.empty checks before it
-- allocates (kreach.core.tensor.check_empty, the same C code), and a total within `limit`.
local function scratch_checker(path, limit)
  local used = 0
  return function(shape, dtype)
    local ok, bytes = pcall(tensor.check_empty, shape, dtype)
    if not ok then
      -- the arguments are the candidate's k:scratch's
      local msg = tostring(bytes):gsub("^[^:\n]*:%d+: ", "", 1):gsub("to '[%w_.]*check_empty'", "to 'scratch'", 1)
      error(("%s:%s: k:scratch: %s"):format(path, candidate_line(path) or "?", msg), 0)
    end
    used = used + bytes
    if used > limit then
      error(("%s:%s: k:scratch: %d bytes of scratch memory in one call, more than the limit of %d"):format(
        path, candidate_line(path) or "?", used, limit), 0)
    end
  end
end

-- lint(inst, path, {arch =}) -> verdict or nil, and a report { launches =, launched =, kernels =, arch = }
-- (launched: the kernels the dry run launched, in order; kernels: every kernel compiled):
-- everything that can be judged without running the candidate on a GPU: the file, its
-- options, the compile, and forward on shape-only tensors.
function M.lint(inst, path, opts)
  opts = opts or {}
  local phase = opts.phase or function() end
  phase("load")
  local ok, cand = load_from(opts, path)
  if not ok then return verdict.from_candidate_error(cand) end
  phase("compile")
  local prog, err = nvrtc.build{ source = cand.source, name = (path:match("([^/]+)%.lua$") or "candidate") .. ".cu",
                                  options = cand.options, arch = opts.arch }
  if not prog then return verdict.new("compile_error", err) end
  local record = function(name, cfg, args) check_launch(prog, name, cfg, args, path) end
  local k, ctl = M.kit(prog, { record = record,
                               scratch = scratch_checker(path, opts.scratch_limit_bytes or M.LINT_SCRATCH_LIMIT_BYTES) })
  local vals = {}
  for i, a in ipairs(inst.args) do
    if a.kind == "scalar" then vals[i] = a.value else vals[i] = meta.new(a.shape, a.dtype, a.name) end
  end
  phase("forward")
  local fok, ferr = M.call_forward(cand, k, vals, opts)
  ctl.release()
  if not fok then return verdict.from_candidate_error(ferr) end
  if ctl.launches() == 0 then
    return verdict.new("invalid_candidate", path .. ": forward launched no kernel")
  end
  return nil, { launches = ctl.launches(), launched = ctl.launched(), kernels = prog.kernels, arch = prog.arch }
end

return M
