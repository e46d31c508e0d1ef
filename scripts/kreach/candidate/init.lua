-- kreach.candidate: the candidate stage's one entry point. A candidate file is one of the
-- formats of kinds.CANDIDATE_KINDS, known by its name; kind(path) returns that format's object,
-- and every other module asks it instead of testing the file's name:
--   name           "lua" (kreach's format: kreach.candidate.lua) or "python" (KernelBench's:
--                  kreach.candidate.pylint, the static lint, and kreach.candidate.python, the
--                  run in the Python worker)
--   needs_python   whether it runs in the Python worker (a python3 with CUDA PyTorch)
--   read(path)     -> its text | nil, why (a regular file of at most MAX_FILE_BYTES)
--   lint(path, problem) -> verdict | nil, report: the checks that run in the caller's process
--                  without a GPU (a .py file's ast lint); a Lua candidate has none here (its
--                  file is code: it is loaded only in a sealed worker, `kreach lint`'s and the
--                  judge's), so nil
--   lint_in_worker whether `kreach lint` judges it in a sealed worker (its file is code that
--                  must be loaded to be linted: the Lua format) rather than with lint above
--   open(inst, path, o) -> an opened candidate | nil, verdict: the worker side, the object the
--                  judge (kreach.judge.check, kreach.judge.measure) drives every format through:
--                  :bind(sets, {pool}), :call(k), :sample(k, so) (where it times itself in
--                  another process), :check_call(vals, outs, args, lib), :release(),
--                  :mutated(k, vals, lib), :method(), :close() (kreach.candidate.lua's open says
--                  what each does). o = { phase, source (the bytes the worker read), build, arch,
--                  steps (the Lua format's), python (the Python format's worker session) }
-- The stage owns the formats and the directives of candidate sources; it may require the base
-- modules and kreach.problem, never judge/, run/ or results/ (tests/layering.lua).
local fs = require "kreach.core.fs"
local kinds = require "kreach.kinds"
local lua_format = require "kreach.candidate.lua"
local pylint = require "kreach.candidate.pylint"
local python_format = require "kreach.candidate.python"

local M = {}

M.MAX_FILE_BYTES = lua_format.MAX_FILE_BYTES

M.FORMATS = {
  lua = {
    name = "lua",
    needs_python = false,
    read = lua_format.read,
    lint = function() return nil end,
    lint_in_worker = true,
    open = lua_format.open,
  },
  python = {
    name = "python",
    needs_python = true,
    read = function(path)
      local body, err = fs.read_regular(path, pylint.MAX_FILE_BYTES)
      if not body then return nil, ("%s: cannot read the candidate: %s"):format(path, tostring(err)) end
      return body
    end,
    lint = function(path, problem) return pylint.lint(path, problem) end,
    lint_in_worker = false,
    open = python_format.open_candidate,
  },
}
for _, k in ipairs(kinds.CANDIDATE_KINDS) do assert(M.FORMATS[k], "kreach.candidate: no format for the kind " .. k) end

-- kind(path) -> the format object of a candidate path (a .py file is KernelBench's format; a
-- file of any other name is read as a Lua candidate)
function M.kind(path)
  if type(path) ~= "string" then error(("candidate.kind: path must be a string, got %s"):format(type(path)), 2) end
  return M.FORMATS[kinds.kind(path)]
end

return M
