-- kreach.problem.files: the sandbox problem and suite files run in. A file runs in an
-- environment of the standard library (file_env: os.exit raises, strict globals for problem
-- files), and its code (the load, later the functions instantiating a problem calls, a host
-- distribution's draw) within a time limit (run_in_file, limited_call).
local core = require "kreach.core"
local errors = require "kreach.errors"
local perr = require "kreach.problem.errors"

local M = {}

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
function M.file_env(what, strict)
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
function M.run_file(path, chunk) return M.run_in_file(path, M.LOAD_LIMIT_S, "to load", chunk) end

function M.limited_call(limit, path, where, doing, handler, f, ...)
  if not path then return xpcall(f, handler, ...) end
  local args = table.pack(...)
  local done, ok, v = M.run_in_file(path, limit, doing,
    function() return xpcall(f, handler, table.unpack(args, 1, args.n)) end)
  if not done then perr.error(where, "%s", errors.message(ok)) end
  return ok, v
end

-- field_call(path, where, doing, handler, f, ...): limited_call within M.FIELD_LIMIT_S, for
-- the functions of a problem's that instantiating it calls (flops, bytes, shapes, dist, init)
function M.field_call(path, ...) return M.limited_call(M.FIELD_LIMIT_S, path, ...) end

return M
