-- kreach.pytorch: PyTorch in the same run (docs/timing.md, "PyTorch in the same run"). A
-- problem's PyTorch model (its `torch` field, as `kreach export --format kernelbench` writes
-- it) runs in a Python worker (scripts/kreach/torch_worker.py, embedded in the binary) that the
-- kreach worker starts before its seal and drives one command at a time: the measurement stays
-- kreach's (kreach.judge.timing samples PyTorch between its own subjects, with the same stopping rule),
-- and PyTorch's inputs are kreach's, copied before each round into buffers the Python worker
-- allocates and kreach maps (CUDA IPC).
--
-- find() runs in the parent, once per command: which python3 (KREACH_PYTHON, else python3 on
-- PATH) and whether its PyTorch has CUDA. start() runs in the kreach worker.
local core = require "kreach.core"
local core_seal = require "kreach.core.seal"
local export = require "kreach.problem.export"
local json = require "kreach.json"
local proc = require "kreach.core.proc"
local inject = require "kreach.inject"
local tensor = require "kreach.core.tensor"
local text = require "kreach.text"

local M = {}

-- How long python3 may take to import torch and answer (find, start), to build a model
-- (load: torch.compile defers its work to the first call), and to answer one call (the first
-- call of a compiled model compiles it).
M.FIND_TIMEOUT_S = 60
M.START_TIMEOUT_S = 120
M.LOAD_TIMEOUT_S = 300
M.FIRST_CALL_TIMEOUT_S = 600
M.CALL_TIMEOUT_S = 60
-- A KernelBench-format candidate's module runs its load_inline builds when it is loaded.
M.BUILD_TIMEOUT_S = 900

-- The interpreter, for every use of Python in kreach (PyTorch timing, cuDNN search, the lint
-- of KernelBench candidates): $KREACH_PYTHON (when not empty), else python3 on PATH.
function M.python()
  local p = os.getenv("KREACH_PYTHON")
  if p and p ~= "" then return p, "KREACH_PYTHON" end
  return "python3", "PATH"
end

local PROBE = [[
import json, os, site, sys
try:
    import torch
    ok = torch.cuda.is_available()
    dirs = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
            os.path.dirname(os.path.dirname(os.path.realpath(torch.__file__)))]
    dirs += site.getsitepackages() + [p for p in sys.path if p and os.path.isdir(p)]
    print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "available": ok,
                      "device": torch.cuda.get_device_name(0) if ok else None,
                      "dirs": sorted(set(os.path.realpath(d) for d in dirs))}))
except Exception as ex:
    print(json.dumps({"error": "%s: %s" % (type(ex).__name__, ex)}))
]]

-- find([python]) -> { python =, torch =, cuda =, device =, dirs = (the interpreter's prefixes
-- and package directories, which its seal lets it read and run) } when a python3 with CUDA PyTorch is
-- there (python, else M.python()), else nil and why (one sentence, for the report's one note).
function M.find(python)
  local py, from = M.python()
  if python then py, from = python, "the caller" end
  local w, err = proc.spawn({ py, "-c", PROBE })
  if not w then return nil, ("cannot run %s (from %s): %s"):format(py, from, tostring(err)) end
  local line, why = w:read_line(M.FIND_TIMEOUT_S)
  if not line then w:kill() end
  w:wait()
  local stderr = w:stderr()
  w:free()
  local r = line and json.decode(line)
  if type(r) ~= "table" then
    return nil, ("%s (from %s) did not answer (%s)%s"):format(py, from, tostring(why),
      stderr ~= "" and (": " .. text.clean(stderr, 300)) or "")
  end
  if r.error then return nil, ("%s (from %s) cannot import torch: %s"):format(py, from, text.clean(r.error, 300)) end
  if not r.available then
    return nil, ("%s (from %s) has PyTorch %s without a CUDA device"):format(py, from, tostring(r.torch))
  end
  return { python = py, torch = r.torch, cuda = r.cuda, device = r.device, dirs = r.dirs }
end

-- script_source(file) -> the text of kreach's Python file scripts/kreach/<file>: the embedded
-- file, or the source tree's under $KREACH_LUA_DIR.
function M.script_source(file)
  local dev = os.getenv("KREACH_LUA_DIR")
  if dev and dev ~= "" then
    local f = io.open(dev .. "/kreach/" .. file, "rb")
    if f then local s = f:read("a"); f:close(); return s end
  end
  local files = package.loaded["kreach.embedded_files"] or {}
  return assert(files["kreach/" .. file], "kreach/" .. file .. " is not embedded in this kreach")
end

-- the Python worker: its guards (torch_guard.py, also run alone by the CPU tests) and its loop
local function worker_source() return M.script_source("torch_guard.py") .. "\n" .. M.script_source("torch_worker.py") end

-- ---- the guard (runtime/inject/kr_guard.c; docs/candidates.md, "Trust") ----

-- A fresh token for one Python worker: 32 hex digits from /dev/urandom.
local function new_token()
  local f = assert(io.open("/dev/urandom", "rb"))
  local b = f:read(16)
  f:close()
  return (b:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- guard_env(token) -> the Python worker's environment ({"NAME=value", ...}): this process's, with
-- the injection library loaded by the CUDA driver in its guard mode, or nil and why.
local function guard_env(token)
  local lib, why = inject.lib()
  if not lib then return nil, why end
  local env = inject.inherited()
  for _, k in ipairs({ "NVTX_INJECTION64_PATH", "KREACH_TRACE_FILE", "KREACH_TRACE_ALTERNATE" }) do env[k] = nil end
  env.CUDA_INJECTION64_PATH = core_seal.realpath(lib) or lib
  env.KREACH_GUARD_TOKEN = token
  local list = {}
  for k, v in pairs(env) do list[#list + 1] = k .. "=" .. v end
  table.sort(list)
  return list
end

-- The time of a timed call from its guard report: the larger of the CUDA events on the caller's
-- stream and the span of every record on any stream (equal for a call whose work stays on the
-- caller's stream and inside its window; larger when work ran elsewhere or after the second
-- event). nil and why when the report holds no time.
function M.guard_ms(g)
  local ev, span = tonumber(g.event_ms), tonumber(g.span_ms)
  if not ev then return nil, "the guard recorded no event time" .. (g.error and (": " .. tostring(g.error)) or "") end
  return math.max(ev, span or 0)
end

-- The slack, in ms, by which a call's all-streams span may pass its event time before the call
-- is said to have run work outside the caller's stream window: CUPTI's timestamps and CUDA's
-- events are read from different clocks. A guess, not yet measured (the one GPU run so far, on an
-- H100, printed spans far inside their events); it decides a warning only, never the time.
M.SPAN_SLACK_MS = 0.002

-- ---- a session with the Python worker ----

local Session = {}
Session.__index = Session

-- start({python =, cudnn_tf32 = bool, ruleset = descriptor, reap = bool}) -> a session, or nil
-- and why. The Python worker gets this process's environment (in a kreach worker, the seal's
-- allow-list), PyTorch's cuDNN TF32 setting as its argument and, with ruleset
-- (kreach.run.seal.python_ruleset), that Landlock ruleset as its descriptor 3, which it applies to
-- itself before it runs a candidate. With reap it runs under kreach's reaper (kreach.core.proc's
-- spawn, reaper): a process the candidate's native code starts, even in a session of its own,
-- ends when the worker does, and cannot hold the worker's output open; and a kill reaches it
-- from a kreach worker sealed after starting it, which may not signal it (docs/candidates.md).
-- It always runs under the guard (kreach's injection library in its guard mode, with a fresh
-- token): every call is reported, and timed, by the guard.
function M.start(o)
  o = o or {}
  local py = o.python or M.python()
  local token = new_token()
  local env, gwhy = guard_env(token)
  if not env then return nil, "cannot guard the Python worker: " .. tostring(gwhy) end
  local w, err = proc.spawn({ py, "-B", "-c", worker_source(), o.cudnn_tf32 and "tf32" or "no-tf32" },
                            { watch = true, fd3 = o.ruleset, reaper = o.reap and core.executable() or nil, env = env })
  if not w then return nil, ("cannot start %s: %s"):format(py, tostring(err)) end
  local self = setmetatable({ w = w, python = py, sets = {}, token = token, seq = 0 }, Session)
  local hello, why = self:read(M.START_TIMEOUT_S)
  if not hello then self:close(); return nil, why end
  if hello.error then
    self:close()
    return nil, text.clean(hello.error, 500)
  end
  if not hello.guarded then
    self:close()
    return nil, "the Python worker started without its guard"
  end
  self.info = { torch = hello.torch, cuda = hello.cuda, cudnn = hello.cudnn, device = hello.device,
                cudnn_tf32 = hello.cudnn_tf32, python = py, guarded = true }
  return self
end

-- read(timeout_s) -> the next reply, with the guard's report that came before it (reply.guard),
-- or nil and why. A guard line is one whose token is this session's, in sequence; a line that
-- looks like one and is not (a forgery by Python code that reached the protocol descriptor) is
-- an error of kind "tampered".
function Session:read(timeout_s)
  local guard
  while true do
    local r, why, kind = self:read_line(timeout_s)
    if not r then return nil, why, kind end
    if r.guard == nil then
      r.guard = guard
      return r
    end
    if r.guard ~= self.token then
      self.dead = true
      return nil, "a line on the protocol descriptor claimed to be the guard's, without its token: something in the Python worker forged it", "tampered"
    end
    if guard or r.seq ~= self.seq + 1 then
      self.dead = true
      return nil, ("the guard's reports came out of order (report %s after %d)"):format(tostring(r.seq), self.seq), "tampered"
    end
    self.seq = r.seq
    r.guard = nil
    guard = r
  end
end

function Session:read_line(timeout_s)
  local line, why = self.w:read_line(timeout_s)
  if not line then
    if why == "timeout" then self.w:kill() end
    local err = self.w:stderr()
    self.dead = true
    return nil, ("the Python worker %s%s"):format(
      why == "timeout" and ("did not answer within %g s"):format(timeout_s) or "ended",
      err ~= "" and (": " .. text.clean(err:sub(-1500), 1600)) or "")
  end
  local r = json.decode(line)
  if type(r) ~= "table" then return nil, "the Python worker broke the protocol: " .. text.clean(line, 200) end
  return r
end

-- request(cmd, timeout_s) -> the reply, or nil, why (an error the Python side reported, or the
-- worker's end), its kind ("build", "environment", "cuda", "python"; "worker": the worker ended) and a build's
-- log.
function Session:request(cmd, timeout_s)
  if self.dead then return nil, "the Python worker has ended", "worker" end
  local ok, werr = self.w:write(json.encode(cmd) .. "\n")
  if not ok then self.dead = true; return nil, "the Python worker is gone: " .. tostring(werr), "worker" end
  local r, why, rkind = self:read(timeout_s)
  if not r then return nil, why, rkind or "worker" end
  if r.error then
    return nil, text.clean(r.error .. (r.traceback and ("\n" .. r.traceback) or ""), 2500), r.kind or "python", r.log, r.guard
  end
  -- a guarded worker reports every call and every candidate's load: its absence means the
  -- worker's own calls into the guard were replaced
  if (cmd.op == "call" or cmd.op == "candidate") and not r.guard then
    self.dead = true
    return nil, "the guard's report of this " .. cmd.op .. " is missing: something in the Python worker kept the harness from calling it", "tampered"
  end
  return r
end

-- The forward call's arguments as the problem's torch field gives them: its `inputs`
-- expression, or the inputs in order.
local function inputs_expr(inst)
  local def = inst.problem.def
  if def.torch.inputs then return def.torch.inputs end
  local names = {}
  for _, a in ipairs(inst.args) do if a.kind == "input" then names[#names + 1] = a.name end end
  return "[" .. table.concat(names, ", ") .. "]"
end

M.inputs_expr = inputs_expr

-- check_params(inst, got, who) -> true, or nil and why: a model's parameter shapes (the Python
-- worker's reply) are the problem's params, in order.
local function check_params(inst, got, who)
  local want = {}
  for _, a in ipairs(inst.args) do if a.kind == "param" then want[#want + 1] = a end end
  got = got or {}
  local function shapes(list, f)
    local s = {}
    for i, x in ipairs(list) do s[i] = "{" .. table.concat(f(x), ", ") .. "}" end
    return table.concat(s, " ")
  end
  local same = #got == #want
  for i = 1, math.min(#got, #want) do
    if table.concat(got[i], ",") ~= table.concat(want[i].shape, ",") then same = false end
  end
  if not same then
    return nil, ("%s's parameters (%s) are not the problem's params (%s)"):format(who,
      #got > 0 and shapes(got, function(x) return x end) or "none",
      #want > 0 and shapes(want, function(a) return a.shape end) or "none")
  end
  return true
end

-- load(slot, inst, {compile = bool}) -> true, or nil and why. Builds the problem's Model in
-- the instance's dtype; its parameters must be the problem's params, in order and shape.
function Session:load(slot, inst, o)
  local r, why = self:request({ op = "load", slot = slot, name = inst.problem.name, reference = export.kernelbench(inst),
                                inputs = inputs_expr(inst), dtype = inst.dtype, compile = o and o.compile or false },
                              M.LOAD_TIMEOUT_S)
  if not r then return nil, why end
  return check_params(inst, r.params, "the PyTorch model")
end

-- mirror(k, inst, vals [, release]) -> true, or nil and why: buffers in the Python worker for
-- input set k (every input, param and output of the instance), mapped here; vals are the set's
-- tensors, copied in by :refresh. release: a loaded slot not yet called, whose model's own
-- parameters the worker frees first (they are replaced by the set's when it is called), so
-- that the largest models fit. Where mapping fails, the set is dropped on both sides.
function Session:mirror(k, inst, vals, release)
  local args = {}
  for i, a in ipairs(inst.args) do
    args[i] = { name = a.name, kind = a.kind, shape = json.array(a.kind ~= "scalar" and a.shape or {}), dtype = a.dtype,
                value = a.value }
  end
  local r, why = self:request({ op = "mirror", set = k, args = args, release = release }, M.CALL_TIMEOUT_S)
  if not r then return nil, why end
  local mapped = {}
  for i, a in ipairs(inst.args) do
    local h = r.handles[i]
    if a.kind ~= "scalar" then
      local ok, t = pcall(tensor.open_ipc, h, 0, a.shape, a.dtype)
      if not ok then
        self.sets[k] = { inst = inst, vals = vals, mapped = mapped }
        self:drop(k) -- what was mapped, and the worker's buffers
        return nil, "cannot map the Python worker's buffers: " .. tostring(t)
      end
      mapped[i] = t
    end
  end
  self.sets[k] = { inst = inst, vals = vals, mapped = mapped }
  return true
end

-- rebind(k, vals): set k's buffers take their values from vals from now on (the next refresh).
function Session:rebind(k, vals) self.sets[k].vals = vals end

-- inputs(k) -> the mapped input and param buffers of set k, by argument index (what a candidate
-- in the Python worker reads, and could change).
function Session:inputs(k)
  local s, out = self.sets[k], {}
  for i, a in ipairs(s.inst.args) do if a.kind == "input" or a.kind == "param" then out[i] = s.mapped[i] end end
  return out
end

-- refresh(k): copies set k's current inputs and params into the Python worker's buffers
-- (kreach's stream; the caller synchronises before the Python worker reads them).
function Session:refresh(k)
  local s = self.sets[k]
  for i, a in ipairs(s.inst.args) do
    if a.kind == "input" or a.kind == "param" then s.mapped[i]:copy_from(s.vals[i]) end
  end
end

-- outputs(k) -> the mapped output buffers of set k, by argument index.
function Session:outputs(k)
  local s, out = self.sets[k], {}
  for i, a in ipairs(s.inst.args) do if a.kind == "output" then out[i] = s.mapped[i] end end
  return out
end

-- call(slot, k, {timed =, flush_bytes =, copy =, poison = 32-bit pattern}) -> the reply ({ms,
-- host_ms, gated} when timed; with the guard also event_ms, span_ms, other_streams and outside,
-- and ms is M.guard_ms's; reply.guard: the guard's report, of every call), or nil, why and the
-- failure's kind ("build", "cuda", "python", "output", "tampered", "guard", or "worker" when the
-- Python worker ended or broke the protocol), a build's log and the guard's report. kreach's stream is
-- synchronised first, so that every copy into the set's buffers has landed.
function Session:call(slot, k, o)
  core.synchronize()
  o = o or {}
  local first = not (self.called and self.called[slot])
  self.called = self.called or {}
  self.called[slot] = true
  local r, why, kind, log, guard = self:request({ op = "call", slot = slot, set = k, timed = o.timed or false,
                                                  flush_bytes = o.flush_bytes, copy = o.copy or false, poison = o.poison },
                                                first and M.FIRST_CALL_TIMEOUT_S or M.CALL_TIMEOUT_S)
  if not r then return nil, why, kind, log, guard end
  local g = r.guard
  if o.timed then
    -- the time is the guard's, taken in C
    local ms, gwhy = M.guard_ms(g)
    if not ms then return nil, gwhy, "guard", nil, g end
    r.ms, r.event_ms, r.span_ms = ms, tonumber(g.event_ms), tonumber(g.span_ms)
    r.other_streams = math.tointeger(g.other_streams) or 0
    r.outside = (r.span_ms or 0) > (r.event_ms or 0) + M.SPAN_SLACK_MS
  end
  return r
end

-- candidate(slot, inst, o) -> true, or nil, why, kind ("build", "cuda", "python", "worker",
-- "params") and the build's log. o: source (the candidate's text), name (its file name, for
-- tracebacks), extensions and triton (the build directories), seal (apply the ruleset first).
-- Builds the candidate's ModelNew with the problem's get_init_inputs() in the instance's dtype;
-- its parameters must be the problem's params, in order and shape.
function Session:candidate(slot, inst, o)
  local r, why, kind, log, guard = self:request({ op = "candidate", slot = slot, name = o.name, source = o.source,
                                                  reference = export.kernelbench(inst), inputs = inputs_expr(inst),
                                                  dtype = inst.dtype, extensions = o.extensions, triton = o.triton,
                                                  seal = o.seal or false }, M.BUILD_TIMEOUT_S)
  if not r then return nil, why, kind, log, guard end
  self.sealed = r.sealed
  self.load_guard = r.guard
  local ok, perr = check_params(inst, r.params, "the candidate's ModelNew")
  if not ok then return nil, perr, "params" end
  return true
end

-- drop(k [, slot]) -> true, or nil and why: unmaps set k's buffers here and frees them in the
-- Python worker, and forgets the model in slot (where given), so that one session can go
-- through many problems (kreach oracle --torch).
function Session:drop(k, slot)
  local s = self.sets[k]
  if s then
    core.synchronize()
    for _, t in pairs(s.mapped) do if t:is_live() then t:free() end end
    self.sets[k] = nil
  end
  local r, why = self:request({ op = "drop", set = k, slot = slot }, M.CALL_TIMEOUT_S)
  if not r then return nil, why end
  if slot and self.called then self.called[slot] = nil end
  return true
end

function Session:close()
  for _, s in pairs(self.sets) do
    for _, t in pairs(s.mapped) do if t:is_live() then t:free() end end
  end
  self.sets = {}
  if self.w then
    if not self.dead then
      self.w:write('{"op": "exit"}\n')
      local _ = self.w:read_line(10)
    end
    self.w:kill()
    self.w:wait()
    self.w:free()
    self.w = nil
  end
end

return M
