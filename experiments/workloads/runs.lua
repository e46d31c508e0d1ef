-- What the Lua experiments share about the runs of list.json (addressable_fraction.lua,
-- profiler_check.lua): the list, a run's command line, and a run under `kreach profile`.
local kreach = require "kreach"
local json = require("kreach.store").json

local M = {}

-- A word quoted for the shell.
function M.quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
local q = M.quote

-- list.json of the folder `dir` (experiments/workloads).
function M.load(dir)
  local f = assert(io.open(dir .. "/list.json"))
  local list = require("cjson").decode(f:read("a"))
  f:close()
  return list
end

-- The program's command line: python, the script as a path from the repository root `root`,
-- its options from the list, then each of `...` that is not nil as it is (words already fit for
-- the shell).
function M.program(run, root, python, ...)
  local argv = { q(python), q(root .. "/" .. run.argv[1]) }
  for j = 2, #run.argv do argv[#argv + 1] = q(run.argv[j]) end
  for j = 1, select("#", ...) do
    local w = select(j, ...)
    if w ~= nil then argv[#argv + 1] = w end
  end
  return table.concat(argv, " ")
end

-- The command that runs `program` (a command line) under `kreach profile --steps step`, storing
-- the profile in `db` under the run's name and printing the report as JSON; `kinds` sets
-- KREACH_TRACE_KINDS (nil: every kind); `alternate` adds --alternate (every other step traced).
function M.profile_command(run, program, db, kinds, alternate)
  return ("%s%s profile --steps step%s --db %s --workload %s --json -- %s"):format(
    kinds and ("env KREACH_TRACE_KINDS=" .. q(kinds) .. " ") or "", q(kreach.executable()),
    alternate and " --alternate" or "", q(db), q(run.name), program)
end

-- The report in the output of such a command (its last line that starts with "{"), or nil.
function M.report_of(out)
  local line
  for l in out:gmatch("[^\n]+") do
    if l:sub(1, 1) == "{" then line = l end
  end
  local ok, rep = pcall(json.decode, line or "")
  return ok and type(rep) == "table" and rep.totals and rep or nil
end

return M
