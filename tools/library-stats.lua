-- tools/library-stats.lua: the shape of the Lua library, in numbers, for issue 35's
-- before/after table: lines per folder (stage) and per module, the longest functions, the
-- longest require chain, the places that test a candidate's kind by its file name, and the
-- places that branch on the timing mode.
--
--   build/kreach tools/library-stats.lua [scripts-dir] [--json]
--
-- Run it on two trees (a `git worktree` of the old commit, and this one) to compare them. A
-- function's length is counted from its `function` line to the `end` at the same indentation
-- (the library's style: every function closes at the indentation it opened at); one-line
-- functions are not counted.
local lfs = require "lfs"
local json = require "kreach.json"

local root, as_json
for _, a in ipairs(arg) do
  if a == "--json" then as_json = true else root = a end
end
root = root or ((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../scripts")

local files = {}
local function walk(dir)
  for f in lfs.dir(dir) do
    if f ~= "." and f ~= ".." then
      local p = dir .. "/" .. f
      if lfs.attributes(p, "mode") == "directory" then walk(p)
      elseif f:match("%.lua$") then files[#files + 1] = p end
    end
  end
end
walk(root .. "/kreach")
table.sort(files)
if #files == 0 then io.stderr:write("tools/library-stats.lua: no Lua files under ", root, "/kreach\n"); os.exit(2) end

local function module_name(path)
  local rel = path:sub(#root + 2):gsub("%.lua$", ""):gsub("/init$", "")
  return (rel:gsub("/", "."))
end

-- the folder a module belongs to: "(top)" for scripts/kreach/*.lua
local function folder(path)
  local rel = path:sub(#root + #"/kreach/" + 1)
  return rel:match("^([^/]+)/") or "(top)"
end

local modules, folders, funcs, graph = {}, {}, {}, {}
local kind_tests, mode_branches = {}, {}
for _, path in ipairs(files) do
  local lines = {}
  for l in io.lines(path) do lines[#lines + 1] = l end
  local name = module_name(path)
  local rel = path:sub(#root + 2)
  modules[#modules + 1] = { module = name, file = rel, lines = #lines }
  local fo = folder(path)
  folders[fo] = folders[fo] or { folder = fo, files = 0, lines = 0 }
  folders[fo].files = folders[fo].files + 1
  folders[fo].lines = folders[fo].lines + #lines
  graph[name] = {}
  for i, l in ipairs(lines) do
    local code = l:gsub("%-%-.*$", "")
    -- functions
    local ind, fname = l:match("^(%s*)local%s+function%s+([%w_.:]+)")
    if not ind then ind, fname = l:match("^(%s*)function%s+([%w_.:]+)") end
    if not ind then ind, fname = l:match("^(%s*)([%w_.]+)%s*=%s*function%s*%(") end
    if not ind then
      ind = l:match("^(%s*).-%f[%w_]function%s*%(")
      fname = "(anonymous)"
    end
    if ind and not code:match("%f[%w_]end%f[^%w_][%s%),;]*$") then
      local close = "^" .. ind .. "end%f[^%w_]"
      for j = i + 1, #lines do
        if lines[j]:match(close) then
          funcs[#funcs + 1] = { file = rel, line = i, name = fname, lines = j - i + 1 }
          break
        end
      end
    end
    -- requires
    for dep in code:gmatch("require%s*%(?%s*[\"'](kreach[%w_.]*)[\"']") do
      if not dep:match("^kreach%.core") and dep ~= "kreach" then graph[name][dep] = true end
    end
    -- a candidate's kind from its file name (kinds.lua, which maps a name to a kind, and
    -- candidate/init.lua, the stage's entry point, are the places meant to)
    if rel ~= "kreach/kinds.lua" and rel ~= "kreach/candidate/init.lua"
       and (code:find("is_python%(") or code:find("kinds%.kind%(") or code:find("kind_of_file%(") or code:find("%%%.py%$")) then
      kind_tests[#kind_tests + 1] = ("%s:%d"):format(rel, i)
    end
    -- a branch on the timing mode: a comparison with a mode's name, or a lookup by the mode
    local function is_mode(w) return w == "cold" or w == "hot" or w == "graph" end
    local branch = false
    for w in code:gmatch("[=~]=%s*[\"']([%w_]+)[\"']") do if is_mode(w) then branch = true end end
    for w in code:gmatch("[\"']([%w_]+)[\"']%s*[=~]=") do if is_mode(w) then branch = true end end
    if branch then mode_branches[#mode_branches + 1] = ("%s:%d"):format(rel, i) end
  end
end

-- the longest require chain (the graph is acyclic: tests/layering.lua)
local memo = {}
local function chain(m, seen)
  if memo[m] then return memo[m] end
  seen = seen or {}
  if seen[m] then return { m } end
  seen[m] = true
  local best = { m }
  for d in pairs(graph[m] or {}) do
    if graph[d] then
      local c = chain(d, seen)
      if #c + 1 > #best then best = { m, table.unpack(c) } end
    end
  end
  seen[m] = nil
  memo[m] = best
  return best
end
local longest = {}
for m in pairs(graph) do
  local c = chain(m)
  if #c > #longest or (#c == #longest and c[1] < longest[1]) then longest = c end
end

table.sort(funcs, function(a, b) return a.lines > b.lines end)
table.sort(modules, function(a, b) return a.lines > b.lines end)
local fl = {}
for _, f in pairs(folders) do fl[#fl + 1] = f end
table.sort(fl, function(a, b) return a.folder < b.folder end)
local total = 0
for _, m in ipairs(modules) do total = total + m.lines end
local over_120 = {}
for _, f in ipairs(funcs) do if f.lines > 120 then over_120[#over_120 + 1] = f end end
local over_800 = {}
for _, m in ipairs(modules) do if m.lines > 800 then over_800[#over_800 + 1] = m end end

local r = {
  files = #files, lines = total, folders = fl, largest = { table.unpack(modules, 1, 8) },
  longest_functions = { table.unpack(funcs, 1, 8) }, functions_over_120 = over_120, files_over_800 = over_800,
  longest_require_chain = longest, kind_tests = kind_tests, mode_branches = mode_branches,
}
if as_json then print(json.encode(r)); os.exit(0) end

print(("%d Lua files, %d lines"):format(r.files, r.lines))
print("by folder:")
for _, f in ipairs(fl) do print(("  %-12s %3d files %6d lines"):format(f.folder, f.files, f.lines)) end
print("largest files:")
for _, m in ipairs(r.largest) do print(("  %5d  %s"):format(m.lines, m.file)) end
print("longest functions:")
for _, f in ipairs(r.longest_functions) do print(("  %5d  %s:%d %s"):format(f.lines, f.file, f.line, f.name)) end
print(("files over 800 lines: %d; functions over 120 lines: %d"):format(#over_800, #over_120))
print(("longest require chain (%d modules): %s"):format(#longest, table.concat(longest, " -> ")))
print(("places that test a candidate's kind by its name: %d"):format(#kind_tests))
for _, p in ipairs(kind_tests) do print("  " .. p) end
print(("places that branch on the timing mode: %d"):format(#mode_branches))
for _, p in ipairs(mode_branches) do print("  " .. p) end
