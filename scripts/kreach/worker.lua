-- kreach.worker: running candidate work in a worker process, with a time limit per phase.
--
-- The parent never runs candidate code. It starts `kreach worker <job> <args...>`; the worker
-- announces each phase on its standard output ("phase <name>"), and ends with one line
-- "result <json>". The parent reads those lines with the phase's time limit: a worker that
-- runs past it is killed (verdict `timeout`), one that dies is reported by its signal or exit
-- status with the end of its standard error (`runtime_error`), and one that says nothing
-- usable is a `runtime_error` too. Every outcome is one verdict; nothing escapes as an error.
local verdict = require "kreach.verdict"

local M = {}

M.DEFAULT_TIMEOUT_S = 60

-- ---- the worker's side ----

-- Announces a phase (flushed at once, so the parent's clock starts now).
function M.phase(name)
  io.stdout:write("phase ", name, "\n")
  io.stdout:flush()
end

-- Ends the worker's output with its result (a table that encodes as JSON).
-- The results store's JSON codec (kreach.store.json): exact for integers and doubles, and NaN
-- and infinities cross the pipe as they are.
function M.result(t)
  io.stdout:write("result ", require("kreach.store").json.encode(t), "\n")
  io.stdout:flush()
end

-- ---- the parent's side ----

local function tail(s, n)
  s = s or ""
  if #s > n then s = "..." .. s:sub(-n) end
  return (s:gsub("%s+$", ""))
end

-- run(argv, {timeout_s =, timeouts = {phase = seconds}}) -> result table (what the worker
-- passed to M.result), or nil and a verdict. argv is the worker's command line.
function M.run(argv, opts)
  opts = opts or {}
  local kreach = require "kreach"
  local w, err = kreach.proc.spawn(argv)
  if not w then return nil, verdict.new("runtime_error", "cannot start the worker: " .. err) end
  local phase, result = "start", nil
  local limit = function(p) return (opts.timeouts and opts.timeouts[p]) or opts.timeout_s or M.DEFAULT_TIMEOUT_S end
  while true do
    local line, why = w:read_line(limit(phase))
    if not line then
      if why == "timeout" then
        w:kill()
        w:wait()
        local v = verdict.new("timeout", ("phase '%s' ran past its limit of %g s"):format(phase, limit(phase)))
        v.phase = phase
        w:free()
        return nil, v
      end
      break -- eof
    end
    local p = line:match("^phase (%S+)$")
    if p then
      phase = p
    else
      local j = line:match("^result (.*)$")
      if j then
        local ok, t = pcall(require("kreach.store").json.decode, j)
        if ok then result = t end
      end
    end
  end
  local how, code, name = w:wait()
  local stderr = w:stderr()
  w:free()
  if how == "signaled" then
    local v = verdict.new("runtime_error", ("the worker died of %s in phase '%s'%s"):format(name, phase,
      stderr ~= "" and (":\n" .. tail(stderr, 2000)) or ""))
    v.phase, v.signal = phase, name
    return nil, v
  end
  if not result then
    local v = verdict.new("runtime_error", ("the worker exited with status %d in phase '%s' without a result%s"):format(
      code, phase, stderr ~= "" and (":\n" .. tail(stderr, 2000)) or ""))
    v.phase, v.status = phase, code
    return nil, v
  end
  return result
end

return M
