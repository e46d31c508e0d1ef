-- kreach.kinds: the closed lists several stages share, each written once (issue 35): the
-- dtypes a problem runs at, the timing modes (docs/timing.md) and the kinds of candidate file
-- (docs/candidates.md). It requires nothing, so that the CLI's option lists, the problem
-- language and the judge can all take their lists from here without pulling in each other's
-- dependencies (tests/lua/lists_spec.lua checks that no other file spells them out again).
local M = {}

-- the dtypes a problem runs at, in the order the CLI lists them (the first is the default)
M.DTYPES = { "f32", "bf16", "f16" }

-- the timing modes, in the order the CLI lists them (the first is kreach.judge.timing's default)
M.MODES = { "cold", "hot", "graph" }

-- the kinds of candidate file, each known by its file name's extension: a kreach candidate
-- (a Lua file returning a table) and a KernelBench-format one (a Python module, run in the
-- Python worker)
M.CANDIDATE_KINDS = { "lua", "python" }
local EXTENSION = { lua = "lua", python = "py" }

-- set(list) -> { [item] = true } for a list above
function M.set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

-- words(list) -> "a, b or c"
function M.words(list)
  if #list == 1 then return list[1] end
  return table.concat(list, ", ", 1, #list - 1) .. " or " .. list[#list]
end

-- kind_of_file(path) -> the kind its extension names ("lua", "python"), or nil for another name
function M.kind_of_file(path)
  for _, k in ipairs(M.CANDIDATE_KINDS) do
    local ext = "." .. EXTENSION[k]
    if path:sub(-#ext) == ext then return k end
  end
  return nil
end

-- kind(path) -> the kind of a candidate path: "python" for a .py file, else "lua" (a file of
-- any other name is read as a Lua candidate)
function M.kind(path)
  return M.kind_of_file(path) or "lua"
end

return M
