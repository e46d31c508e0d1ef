-- kreach.candidate.python: judging a KernelBench-format candidate (a Python file defining ModelNew)
-- on the GPU, in the kreach worker (docs/candidates.md, "KernelBench-format candidates"). The
-- candidate runs in the Python worker (kreach.pytorch), on buffers kreach maps: kreach copies
-- each call's inputs into them, the Python worker calls ModelNew and copies what it returns
-- into the output buffers, and kreach's protocol (kreach.judge.check, kreach.judge.measure) judges those
-- as it judges a Lua candidate's outputs. What differs, and how it is covered:
--   * the candidate allocates its outputs (torch.empty): before each call every free block of
--     PyTorch's caching allocator is filled with the output dtype's poison, so an element it
--     never writes still reads as unwritten;
--   * it gets the inputs as tensors it could change in place: their buffers are hashed after
--     the call, against kreach's own copy;
--   * its load_inline builds and Triton kernels are compiled in directories keyed by its source
--     (kreach.run.seal.python_build_dirs), so a second run finds them built; a build that fails is
--     compile_error with the compiler's errors;
--   * the Python worker applies a Landlock ruleset before the candidate's module runs
--     (kreach.run.seal.python_rules).
--   * its outputs must be plain torch.Tensors (not subclasses), copied out with no Python-level
--     override in the way;
--   * the guard (libkreach_inject.so in the Python worker, runtime/inject/kr_guard.c) reports
--     each call and the load: a thread or process the candidate left running is
--     invalid_candidate, and a timed call's time is the larger of CUDA events on the caller's
--     stream and the span of everything it ran on any stream, both taken in C.
-- Its time is still measured inside the Python worker's process, next to the candidate's own
-- code: native code from load_inline shares that process (docs/candidates.md, "Trust").
local core = require "kreach.core"
local fs = require "kreach.core.fs"
local kbcandidate = require "kreach.candidate.pylint"
local util = require "kreach.core.util"
local text = require "kreach.text"
local verdict = require "kreach.verdict"

local M = {}

M.SLOT = "candidate"
-- How a .py candidate's time is measured (the record's time_method).
M.METHOD = "in-process: CUDA events and the all-streams span (CUPTI), both taken in C by kreach's guard"
-- The largest part of a build's log a verdict keeps.
M.MAX_LOG_BYTES = 6000

-- The poison of an output dtype as the 32-bit word the Python worker fills free memory with
-- (kreach's poison patterns, runtime/kr_dtype.c, repeated to 32 bits; int32-signed for torch).
local WORDS = { f32 = 0x7FA5A5A5, bf16 = 0x7FA57FA5, f16 = 0x7D257D25 }
function M.poison_word(dtype)
  local w = WORDS[dtype] or 0xA5A5A5A5
  if w >= 0x80000000 then w = w - 0x100000000 end
  return w
end

-- key(source) -> the hash that names a candidate's build directories
function M.key(source) return util.hash(source) end

-- read(path) -> the candidate's source, or nil and why
function M.read(path)
  local body, err = fs.read_regular(path, kbcandidate.MAX_FILE_BYTES)
  if not body then return nil, ("%s: %s"):format(path, tostring(err)) end
  return body
end

-- build_log(log, dirs) -> the part of a failed build's output worth reading: the lines that
-- name an error (with the two after each), the build directories shown as <build>; else its end.
function M.build_log(log, dirs)
  log = tostring(log or "")
  for _, d in pairs(dirs or {}) do log = log:gsub(d:gsub("%p", "%%%0"), "<build>") end
  local lines, keep, picked = {}, 0, {}
  for l in log:gmatch("[^\n]+") do lines[#lines + 1] = l end
  for _, l in ipairs(lines) do
    -- ninja's command lines ("[1/3] nvcc ...") say nothing the error lines do not
    if l:find("[Ee]rror") and not l:match("^%[%d+/%d+%]") then keep = 3 end
    if keep > 0 then picked[#picked + 1] = l; keep = keep - 1 end
  end
  local out = #picked > 0 and table.concat(picked, "\n") or log:sub(-M.MAX_LOG_BYTES)
  return text.clean(out, M.MAX_LOG_BYTES)
end

-- The verdict of a failure the Python worker reported (kreach.pytorch's kinds).
local function failure(path, why, kind, log, dirs, during)
  if kind == "build" then
    return verdict.new("compile_error", ("%s: its build failed while %s:\n%s"):format(path, during, M.build_log(log or why, dirs)))
  elseif kind == "environment" then
    return verdict.new("runtime_error", ("%s: the Python worker cannot build it on this machine (not the candidate's fault): %s"):format(path, why))
  elseif kind == "cuda" then
    return verdict.new("runtime_error", ("%s: a CUDA error while %s: %s"):format(path, during, why))
  elseif kind == "tampered" or kind == "output" then
    return verdict.new("invalid_candidate", ("%s: while %s: %s"):format(path, during, why))
  elseif kind == "guard" then
    return verdict.new("runtime_error", ("%s: the guard could not measure the call while %s: %s"):format(path, during, why))
  elseif kind == "worker" then
    if tostring(why):find("did not answer within", 1, true) then
      return verdict.new("timeout", ("%s: the Python worker %s while %s"):format(path,
        (tostring(why):gsub("^the Python worker ", "")), during))
    end
    return verdict.new("runtime_error", ("%s: while %s, %s"):format(path, during, why))
  end
  return verdict.new("invalid_candidate", ("%s: while %s: %s"):format(path, during, why))
end
M.failure = failure

local Runner = {}
Runner.__index = Runner

-- open(session, inst, path, {source =, dirs = {extensions =, triton =}, seal = bool}) -> runner,
-- or nil and a verdict. Builds the candidate in the Python worker (its load_inline builds run
-- now). source: the file's text as read when its build directories were named (read again
-- when not given), so that what runs is what the directories' key was made from.
function M.open(session, inst, path, o)
  o = o or {}
  local source, err = o.source, nil
  if not source then source, err = M.read(path) end
  if not source then return nil, verdict.new("invalid_candidate", err) end
  local ok, why, kind, log = session:candidate(M.SLOT, inst, { source = source, name = path,
    extensions = o.dirs and o.dirs.extensions, triton = o.dirs and o.dirs.triton, seal = o.seal })
  if not ok then return nil, failure(path, why, kind, log, o.dirs, "loading it") end
  local left = M.left_running(session.load_guard, "its module loaded")
  if left then return nil, verdict.new("invalid_candidate", ("%s: %s"):format(path, left)) end
  local pattern
  for _, a in ipairs(inst.args) do if a.kind == "output" and not pattern then pattern = M.poison_word(a.dtype) end end
  return setmetatable({ session = session, inst = inst, path = path, dirs = o.dirs, pattern = pattern,
                        sealed = session.sealed, timed = { calls = 0, other_streams = 0, outside = 0, max_excess_ms = 0 } },
                      Runner)
end

-- left_running(report, after) -> why a guard report shows the candidate left a thread or a
-- process running ("left 1 thread running after forward returned"), or nil.
function M.left_running(g, after)
  if type(g) ~= "table" then return nil end
  local threads, children = math.tointeger(g.threads_new) or 0, math.tointeger(g.children) or 0
  if threads > 0 then
    return ("left %d thread%s running after %s (a thread can queue work after the timed window, or between calls)"):format(
      threads, threads == 1 and "" or "s", after)
  end
  if children > 0 then
    return ("left a process running after %s (a process can use the GPU beside the timed calls)"):format(after)
  end
  return nil
end

-- runner:call(k, {timed =, flush_bytes =}) -> the reply, or nil and a verdict: one call of
-- ModelNew on set k, free memory poisoned first, its outputs copied into the set's buffers.
function Runner:call(k, o)
  o = o or {}
  local r, why, kind, log = self.session:call(M.SLOT, k, { copy = true, poison = self.pattern, timed = o.timed,
                                                           flush_bytes = o.flush_bytes })
  if not r then return nil, failure(self.path, why, kind, log, self.dirs, "calling it") end
  local g = r.guard -- every call's report (kreach.pytorch refuses a reply without one)
  if (math.tointeger(g.threads_new) or -1) < 0 then
    return nil, failure(self.path, "it could not read this process's threads", "guard", nil, self.dirs, "calling it")
  end
  local left = M.left_running(g, "forward returned")
  if left then return nil, verdict.new("invalid_candidate", ("%s: %s"):format(self.path, left)) end
  if o.timed then
    if g.error then return nil, failure(self.path, g.error, "guard", nil, self.dirs, "timing it") end
    if (math.tointeger(g.dropped) or 0) > 0 then
      return nil, failure(self.path, ("CUPTI lost %d records of the call, so its span is not known"):format(g.dropped),
        "guard", nil, self.dirs, "timing it")
    end
    local t = self.timed
    t.calls = t.calls + 1
    if (r.other_streams or 0) > 0 then t.other_streams = t.other_streams + 1 end
    if r.outside then t.outside = t.outside + 1 end
    t.max_excess_ms = math.max(t.max_excess_ms, (r.span_ms or 0) - (r.event_ms or 0))
  end
  return r
end

-- runner:provenance() -> how its timed calls were measured: { method, calls, other_streams
-- (calls that queued work on a stream other than the caller's), outside (calls whose span
-- passed their events: their time is the span), max_excess_ms }, and the warnings it gives.
function Runner:provenance()
  local t, warnings = self.timed, {}
  if t.other_streams > 0 then
    warnings[#warnings + 1] = ("candidate: %d of %d timed calls queued work on streams other than the caller's; each was timed by the span of every stream (CUPTI)"):format(
      t.other_streams, t.calls)
  end
  if t.outside > t.other_streams then
    warnings[#warnings + 1] = ("candidate: %d of %d timed calls ran work outside their events' window (up to %.3f ms past it); each was timed by the span of every stream"):format(
      t.outside, t.calls, t.max_excess_ms)
  end
  return { method = M.METHOD, calls = t.calls,
           other_streams = t.other_streams, outside = t.outside, max_excess_ms = t.max_excess_ms }, warnings
end

-- runner:mutated(k, reference, lib) -> the names of the inputs and params whose buffers in set
-- k no longer hash as reference's tensors do (kreach's own copies of the same values).
function Runner:mutated(k, reference, lib)
  local names = {}
  for i, t in pairs(self.session:inputs(k)) do
    if lib.hash(t) ~= lib.hash(reference[i]) then names[#names + 1] = self.inst.args[i].name end
  end
  table.sort(names)
  return names
end

-- runner:check_call(vals, outs, lib) -> true and the mutated inputs' names, or nil and a
-- verdict: what kreach.judge.check's Runner does for one call: vals' inputs copied into the "check"
-- set, one call, its outputs copied into outs (kreach.judge.check's fenced outputs).
function Runner:check_call(vals, outs, lib)
  local s = self.session
  if not s.sets.check then
    local ok, why = s:mirror("check", self.inst, vals)
    if not ok then return nil, verdict.new("runtime_error", "cannot share buffers with the Python worker: " .. why) end
  end
  s:rebind("check", vals)
  s:refresh("check")
  local r, v = self:call("check")
  if not r then return nil, v end
  local mapped = s:outputs("check")
  for i, out in pairs(outs) do out.view:copy_from(mapped[i]) end
  return true, self:mutated("check", vals, lib)
end

-- ---- the judge's side: an opened candidate ----
-- open_candidate(inst, path, o) -> the object kreach.judge.check and kreach.judge.measure drive a
-- KernelBench-format candidate through (kreach.candidate's open; its methods are those of
-- kreach.candidate.lua's open). o.python = { session = a kreach.pytorch session, dirs = its
-- build directories, seal = bool, source = the file's text as the worker read it } (required),
-- o.phase. Nothing runs until :bind, which builds ModelNew in the Python worker (after
-- PyTorch's own models, so that a compiled model compiles before the candidate's seal).
local Opened = {}
Opened.__index = Opened

function M.open_candidate(inst, path, o)
  o = o or {}
  if not o.python then error("a KernelBench-format candidate needs the Python worker (opts.python)", 3) end
  -- its rounds are checked for changed inputs only (its last calls are judged after timing)
  return setmetatable({ inst = inst, path = path, py = o.python, phase = o.phase or function() end,
                        round_checks = false }, Opened)
end

-- bind(sets) -> true | nil, verdict: ModelNew built in the Python worker (self.python says how
-- long it took, and the session's seal); with the timed calls' sets (kreach.judge.sets), their
-- copies in the Python worker, whose output buffers become the sets' candidate outputs
function Opened:bind(sets)
  self.phase("load")
  local session = self.py.session
  local t0 = core.now()
  local runner, v = M.open(session, self.inst, self.path, self.py)
  self.python = { load_s = core.now() - t0, sealed = session.sealed or false, torch = session.info.torch,
                  guarded = session.info.guarded }
  if not runner then return nil, v end
  self.runner = runner
  if not sets then return true end
  if not sets.mirrored then
    local ok, why = sets:mirror(session)
    if not ok then return nil, verdict.new("runtime_error", "cannot share buffers with the Python worker: " .. why) end
  end
  for k = 1, #sets do
    for i, t in pairs(session:outputs(k)) do sets[k].cvals[i]:free(); sets[k].cvals[i] = t:poison() end
  end
  return true
end

function Opened:call(k)
  local r, v = self.runner:call(k)
  if not r then return nil, v end
  return true
end

-- sample(k, {flush_bytes}) -> ms | nil, verdict: a timed call, timed in the Python worker
function Opened:sample(k, so)
  local r, v = self.runner:call(k, { timed = true, flush_bytes = so.flush_bytes })
  if not r then return nil, v end
  if not r.gated then self.ungated = (self.ungated or 0) + 1 end
  return r.ms
end

function Opened:check_call(vals, outs, _, lib)
  local ok, r = self.runner:check_call(vals, outs, lib)
  if not ok then return nil, r end
  return r
end

function Opened:release() end
function Opened:mutated(k, vals, lib) return self.runner:mutated(k, vals, lib) end

function Opened:method()
  local warnings = {}
  if self.ungated then
    warnings[1] = ("candidate: %d calls took longer to queue than the gate held, so their times include some of the host's launch time"):format(self.ungated)
  end
  local prov, pwarn = self.runner:provenance()
  for _, w in ipairs(pwarn) do warnings[#warnings + 1] = w end
  return prov, warnings
end

function Opened:close() end

return M
