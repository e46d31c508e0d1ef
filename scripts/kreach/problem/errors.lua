-- kreach.problem.errors: the problem stage's errors. Every message names the problem (and,
-- through load, its file) and the field; problem errors are kreach.errors user errors. Also the
-- small helpers the messages share: the xpcall handler that tells an error at the problem
-- file's line (in_file), "path: where" (at_file) and the "did you mean" tail (suggest).
local errors = require "kreach.errors"
local text = require "kreach.text"

local M = {}

-- Problem errors are kreach.errors user errors, so that commands can tell a bad problem file
-- (exit status 3, a clean message) from a bug (a traceback); tostring gives the message. Their
-- status is the exit status a command ends with: 3 for a file that does not load, 2 for a name
-- that names nothing (a usage error).
-- raise(msg[, status]): kept for callers outside this module (status 3 unless given); new
-- code raises through kreach.errors
function M.raise(msg, status)
  errors.raise(status or errors.STATUS.load, msg)
end

function M.error(where, fmt, ...)
  errors.load("%s: %s", where, fmt:format(...))
end

-- What the user asked for (a dtype, a size name) is not the problem's: status 2, not 3.
function M.usage(where, fmt, ...)
  errors.usage("%s: %s", where, fmt:format(...))
end

M.is_error = errors.is -- an alias: any kreach.errors user error

-- An xpcall handler for the problem file's own functions (reference, flops, shapes): an error
-- raised inside kreach's code (an operator given the wrong arguments) is told at the line of
-- the problem file that called it, since kreach's own position means nothing to the author.
function M.in_file(path)
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
function M.suggest(word, known)
  local names = {}
  for k in pairs(known) do names[#names + 1] = k end
  local best = text.suggest(word, names)
  return best and (" (did you mean '%s'?)"):format(best) or ""
end

-- at_file(path, where) -> "path: where", or where when the problem has no file
function M.at_file(path, where) return path and (path .. ": " .. where) or where end

return M
