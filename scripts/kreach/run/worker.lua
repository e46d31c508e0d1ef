-- kreach.run.worker: running candidate work in a worker process, with a time limit per phase.
--
-- The parent never runs candidate code. It starts `kreach worker <job> <args...>`; the worker
-- announces each phase on its standard output ("phase <name>"), and ends with one line
-- "result <json>". The parent reads those lines with the phase's time limit: a worker that
-- runs past it is killed (verdict `timeout`), one that dies is reported by its signal or exit
-- status with the end of its standard error (`runtime_error`), and one that says nothing
-- usable is a `runtime_error` too. Every outcome is one verdict; nothing escapes as an error.
--
-- The worker is sealed (kreach.run.seal): it starts with an environment built from an allow-list,
-- a private directory, a memory limit and a pipe from the parent; everything it reports is
-- bounded and stripped of terminal controls here (kreach.text) before anyone prints or stores it.
local core = require "kreach.core"
local proc = require "kreach.core.proc"
local protocol = require "kreach.run.protocol"
local seal = require "kreach.run.seal"
local text = require "kreach.text"
local verdict = require "kreach.verdict"

local M = {}

M.DEFAULT_TIMEOUT_S = 60
-- The phases before the candidate's own (the process starting, its CUDA context, the problem,
-- the seal) are the harness's: they get this limit, or --timeout when that is longer, and only
-- until the first phase of the candidate's has begun.
M.HARNESS_TIMEOUT_S = 120
M.HARNESS_PHASES = { start = true, setup = true }

-- ---- the worker's side ----

-- Announces a phase (flushed at once, so the parent's clock starts now).
function M.phase(name)
  io.stdout:write("phase ", name, "\n")
  io.stdout:flush()
end

-- Ends the worker's output with its result (a table), as kreach.run.protocol writes it: exact for
-- integers and doubles, and NaN and infinities cross the pipe as they are.
function M.result(t)
  local rec = seal.record()
  if rec and type(t) == "table" and t.seal == nil then t.seal = rec end
  io.stdout:write(protocol.result_line(t), "\n")
  io.stdout:flush()
end

-- ---- the parent's side ----

local function tail(s, n)
  s = s or ""
  if #s > n then s = "..." .. s:sub(-n) end
  return (s:gsub("%s+$", ""))
end

-- Why a worker that ended without a result may have run out of memory, from its last words.
local MEMORY_WORDS = { "not enough memory", "std::bad_alloc", "Cannot allocate memory" }
local function memory_hint(stderr, limit)
  for _, w in ipairs(MEMORY_WORDS) do
    if stderr:find(w, 1, true) then
      return " (out of memory: " .. (seal.memory_note(limit) or "the worker has no memory limit") .. ")"
    end
  end
  return ""
end

-- The Lua heap a candidate may hold in a worker (kreach.candidate.lua.HEAP_BYTES there), when
-- run's caller does not say: nil leaves the worker's default (256 MiB). A command whose
-- workers are started by a library it calls (kreach eval) sets it from --lua-memory.
M.lua_memory_bytes = nil

-- A worker that runs (start's), stepped by its owner: M.run steps one to its end; the build
-- pool (kreach.run.builds) steps several in turn, and pauses them while a call is timed.
local Running = {}
Running.__index = Running

-- start(argv, opts) -> a running worker, or nil and a verdict. argv is the worker's command
-- line; the worker gets the sealed environment of kreach.run.seal.prepare (and
-- $KREACH_LUA_MEMORY, the candidate's Lua heap), and its standard input is the parent watch's
-- pipe. opts: as run's.
function M.start(argv, opts)
  opts = opts or {}
  local prep, perr = seal.prepare{ memory_bytes = opts.memory_bytes }
  if not prep then return nil, verdict.new("runtime_error", "cannot prepare the worker: " .. tostring(perr)) end
  local lua_memory = opts.lua_memory_bytes or M.lua_memory_bytes
  if lua_memory then prep.env[#prep.env + 1] = ("KREACH_LUA_MEMORY=%d"):format(lua_memory) end
  -- a variable given here replaces the parent's (a device's CUDA_VISIBLE_DEVICES)
  for _, e in ipairs(opts.env or {}) do
    local name = e:match("^([^=]+)=")
    for i = #prep.env, 1, -1 do
      if prep.env[i]:sub(1, #name + 1) == name .. "=" then table.remove(prep.env, i) end
    end
    prep.env[#prep.env + 1] = e
  end
  local w, err = proc.spawn(argv, { env = prep.env, watch = true })
  if not w then
    prep.cleanup()
    return nil, verdict.new("runtime_error", "cannot start the worker: " .. err)
  end
  local r = setmetatable({ w = w, prep = prep, opts = opts, phase = "start", results = 0,
                           harness = true, -- no phase of the candidate's has begun
                           on_phase = opts.on_phase }, Running)
  r.deadline = core.now() + r:limit("start")
  return r
end

function Running:limit(p)
  local opts = self.opts
  if opts.timeouts and opts.timeouts[p] then return opts.timeouts[p] end
  local t = opts.timeout_s or M.DEFAULT_TIMEOUT_S
  if self.harness and M.HARNESS_PHASES[p] then return math.max(M.HARNESS_TIMEOUT_S, t) end
  return t
end

-- The worker's process id (the build pool stops and continues its tree while a call is timed).
function Running:pid() return self.w and self.w:pid() end

-- pause(): its phase's clock stops (the build pool has stopped the process); resume() starts
-- it again, the time paused added to the phase's limit.
function Running:pause()
  if not self.paused_at then self.paused_at = core.now() end
end
function Running:resume()
  if self.paused_at then
    self.deadline = self.deadline + (core.now() - self.paused_at)
    self.paused_at = nil
  end
end

function Running:finish(...)
  self.w:free()
  self.prep.cleanup()
  self.done = true
  return ...
end

-- step(wait_s) -> nil while the worker runs (after reading what it wrote within wait_s; nil:
-- until its end), or true and its result, or false and the verdict of a worker that failed.
function Running:step(wait_s)
  local w = self.w
  while true do
    local now = core.now()
    local left = self.deadline - now
    if self.paused_at then left = math.huge end
    local t = wait_s and math.min(wait_s, math.max(left, 0)) or math.max(left, 0)
    local line, why = w:read_line(t)
    if not line then
      if why == "timeout" then
        if self.paused_at or core.now() < self.deadline then return nil end
      end
      if why == "timeout" or why == "too long" then
        w:kill()
        w:wait()
        local phase = self.phase
        local v = why == "timeout"
          and verdict.new("timeout", ("phase '%s' ran past its limit of %g s"):format(phase, self:limit(phase)))
          or verdict.new("runtime_error", ("the worker wrote a line longer than the protocol allows (%d MiB) in phase '%s'"):format(
            proc.MAX_LINE // (1024 * 1024), phase))
        v.phase = phase
        return self:finish(false, v)
      end
      break -- eof
    end
    local p = line:match("^phase (%S+)$")
    if p then
      self.phase = text.clean(p, 200)
      if not M.HARNESS_PHASES[self.phase] then self.harness = false end
      self.deadline = core.now() + self:limit(self.phase)
      if self.on_phase then self.on_phase(self.phase) end
    else
      -- a line that is not a phase does not restart the phase's clock
      local j = line:match("^result (.*)$")
      if j then
        self.results = self.results + 1
        local t2 = protocol.decode_result(j)
        -- the worker cleaned its strings already (which can make them up to four times
        -- longer); this bound is the backstop for a worker that did not
        if t2 then self.result = text.clean_all(t2, 4 * text.MAX_BYTES + 256) end
      end
    end
    if wait_s then return nil end
  end
  return self:ended()
end

-- What a worker whose output ended comes to.
function Running:ended()
  local w, prep, phase, result = self.w, self.prep, self.phase, self.result
  local how, code, name = w:wait()
  local stderr = w:stderr()
  if how == "signaled" then
    local hint = memory_hint(stderr, prep.memory_bytes)
    if hint == "" and name == "SIGKILL" then
      hint = " (not sent by kreach; perhaps the kernel's out-of-memory killer: " .. seal.memory_note(prep.memory_bytes) .. ")"
    end
    local v = verdict.new("runtime_error", ("the worker died of %s in phase '%s'%s%s"):format(name, phase, hint,
      stderr ~= "" and (":\n" .. tail(stderr, 2000)) or ""))
    v.phase, v.signal = phase, name
    return self:finish(false, v)
  end
  -- the harness writes one result and exits 0; a kernel's printf shares the standard output
  -- and could write a line that looks like one
  if self.results > 1 then
    local v = verdict.new("runtime_error", ("the worker wrote %d result lines (a kernel's printf can write to the worker's standard output; one is the protocol)"):format(self.results))
    v.phase = phase
    return self:finish(false, v)
  end
  if result and code ~= 0 then result = nil end
  if not result then
    local v = verdict.new("runtime_error", ("the worker exited with status %d in phase '%s' without a result%s%s"):format(
      code, phase, memory_hint(stderr, prep.memory_bytes), stderr ~= "" and (":\n" .. tail(stderr, 2000)) or ""))
    v.phase, v.status = phase, code
    return self:finish(false, v)
  end
  return self:finish(true, result)
end

-- kill(): ends a running worker (the build pool's close).
function Running:kill()
  if self.done then return end
  self.w:kill()
  self.w:wait()
  self:finish()
end

-- run(argv, {timeout_s =, timeouts = {phase = seconds}, memory_bytes =, lua_memory_bytes =,
-- env = {"K=V"}, on_phase = function(name), idle = function()}) -> result table (what the
-- worker passed to M.result, cleaned), or nil and a verdict. argv is the worker's command
-- line; the worker gets the sealed environment of kreach.run.seal.prepare (and
-- $KREACH_LUA_MEMORY, the candidate's Lua heap; env: more variables, such as a device's
-- CUDA_VISIBLE_DEVICES), and its standard input is the parent watch's pipe. on_phase is called
-- with each phase the worker announces; idle, when given, every M.IDLE_S while the worker runs
-- (the build pool is serviced there: kreach.run.builds).
M.IDLE_S = 0.05
function M.run(argv, opts)
  opts = opts or {}
  local r, failed = M.start(argv, opts)
  if not r then return nil, failed end
  while true do
    local done, res = r:step(opts.idle and M.IDLE_S or nil)
    if done ~= nil then
      if done then return res end
      return nil, res
    end
    if opts.idle then opts.idle() end
  end
end

return M
