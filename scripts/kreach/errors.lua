-- kreach.errors: the one owner of user errors and their exit statuses (docs/cli.md, "Exit
-- status"). A user error (a bad argument, a file that does not load, a database that cannot
-- be used, no GPU) is raised as an error object carrying its status and a message meant for
-- the user; `kreach.cli` prints it as `kreach <command>: <message>` and exits with the status.
-- Anything else that escapes a command is a bug: a traceback and status 99.
--
-- An error object is a table { kind =, status =, msg = } with a __tostring (so code that only
-- prints errors keeps working), raised at level 0: no position is prepended, and a message
-- never carries an internal `scripts/kreach/<module>.lua:<line>:` (positions in the user's own
-- files, a problem's or a candidate's, are kept: they say where the user's mistake is).
local M = {}

-- kind -> exit status
M.STATUS = {
  failed = 1,     -- the command ran and found a failure (a file it cannot write, ...)
  usage = 2,      -- an unknown command or option, a bad value, a name that names nothing
  load = 3,       -- a script, problem, suite, candidate or other input file that cannot be loaded
  database = 3,   -- a results database that cannot be used: missing, not kreach's, corrupt, failing
  no_device = 77, -- the work needs a GPU and there is none
}

local Error = { __name = "kreach.Error" }
Error.__index = Error
Error.__tostring = function(e) return e.msg end
M.Error = Error

-- The directory this module was loaded from ("scripts/kreach/" when embedded, the directory
-- under $KREACH_LUA_DIR otherwise): a position in a file there is kreach's own, not the user's.
local HERE = (debug.getinfo(1, "S").source:match("^@(.*/)[^/]*$"))

local function pattern_quote(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end

-- { literal that must occur, pattern of the position to remove }. Each pattern starts at a
-- literal or a frontier, so that a long message (a candidate's error may be 200 kB) is cleaned
-- in linear time.
local INTERNAL = {}
if HERE then INTERNAL[#INTERNAL + 1] = { HERE, pattern_quote(HERE) .. "[%w_%-/]+%.lua:%d+: " } end
-- argparse, embedded beside kreach's own modules under its installed path
INTERNAL[#INTERNAL + 1] = { "argparse.lua:", "%f[^%s%c]%S-argparse%.lua:%d+: " }

-- A message with kreach's own source positions removed (wherever they appear: a message that
-- wraps another keeps the inner one's text), and any traceback cut off.
local function clean(msg)
  msg = tostring(msg)
  local tb = msg:find("\nstack traceback:", 1, true)
  if tb then msg = msg:sub(1, tb - 1) end
  for _, p in ipairs(INTERNAL) do
    if msg:find(p[1], 1, true) then msg = msg:gsub(p[2], "") end
  end
  return msg
end
M.clean = clean

-- new(status, msg, kind) -> an error object (not raised). `status` is one of M.STATUS's values
-- or a kind's name.
function M.new(status, msg, kind)
  if type(status) == "string" then
    kind = kind or status
    status = M.STATUS[status]
  end
  if math.type(status) ~= "integer" or status <= 0 or status > 125 then
    error(("errors.new: the status must be an exit status from 1 to 125 or a kind (%s), got %s")
      :format("failed, usage, load, database, no_device", tostring(status)), 2)
  end
  if not kind then
    for k, s in pairs(M.STATUS) do if s == status and k ~= "database" then kind = k end end
  end
  return setmetatable({ kind = kind or "failed", status = status, msg = clean(msg) }, Error)
end

-- raise(status, msg[, kind]): raises the error object, at level 0.
function M.raise(status, msg, kind)
  error(M.new(status, msg, kind), 0)
end

local function raiser(kind)
  return function(fmt, ...)
    if select("#", ...) > 0 then fmt = fmt:format(...) end
    error(M.new(M.STATUS[kind], fmt, kind), 0)
  end
end
-- usage(fmt, ...), load(fmt, ...), database(fmt, ...), failed(fmt, ...), no_device(fmt, ...):
-- raise a user error of that kind; the arguments are string.format's (a lone message is used
-- as it is, so a '%' in it needs no escaping).
M.usage = raiser("usage")
M.load = raiser("load")
M.database = raiser("database")
M.failed = raiser("failed")
local no_device = raiser("no_device")
-- no_device(why): the message is "no CUDA device: <why>", the form the binary and docs use
function M.no_device(fmt, ...)
  if select("#", ...) > 0 then fmt = fmt:format(...) end
  if not tostring(fmt):find("no CUDA device", 1, true) then fmt = "no CUDA device: " .. tostring(fmt) end
  no_device(fmt)
end

-- file(path, msg[, status]): a file that cannot be loaded (status 3 by default), the message
-- naming it: `path: msg`, unless msg names it already (Lua's "path:12: ..." does, with the line).
function M.file(path, msg, status)
  msg = clean(msg)
  if not msg:find(path, 1, true) then msg = path .. ": " .. msg end
  M.raise(status or M.STATUS.load, msg, status and nil or "load")
end

function M.is(e) return getmetatable(e) == Error end

-- The exit status of an error: its own for a user error, 99 (internal) for anything else.
function M.status(e)
  if M.is(e) then return e.status end
  return 99
end

-- The message of an error for the user: a user error's message, or anything else's text with
-- kreach's own positions and any traceback removed.
function M.message(e)
  if M.is(e) then return e.msg end
  if type(e) == "table" and getmetatable(e) and getmetatable(e).__tostring then return clean(tostring(e)) end
  if type(e) == "string" or type(e) == "number" then return clean(e) end
  return ("(error object is a %s value)"):format(type(e))
end

-- catch(fn, ...) -> true, fn's results | nil, the user error. Like pcall, for user errors
-- only: any other error (a bug) is raised again, as it was.
function M.catch(fn, ...)
  local res = table.pack(pcall(fn, ...))
  if res[1] then return true, table.unpack(res, 2, res.n) end
  if M.is(res[2]) then return nil, res[2] end
  error(res[2], 0)
end

return M
