-- The layering of the Lua library (docs/scripting.md, "The library's layers"), checked on the
-- source files: kreach.core.* (C) <- internal modules <- the kreach facade (scripts/kreach/
-- init.lua) and the commands (scripts/kreach/cmd/*.lua).
--   1. every `require` is at the top of its file: not indented, and before the file's first
--      function (a require whose name is computed, as cli.lua's loading of a command by its
--      name, must say why on its line with the comment `-- require: <why>`);
--   2. no internal module requires the facade ("kreach");
--   3. there is no cycle among the modules' requires;
--   4. the stages keep their borders (STAGE_RULES below; docs/scripting.md, "Where things
--      live"): the judge runs in the worker, so run/ (the parent) takes only its options;
--      results/ reads what the judge wrote, never the judge or the candidate; and a command is
--      the top of the tree, so nothing outside cmd/ requires one.
-- usage: kreach tests/layering.lua [scripts-dir]   (exit 1 with every violation listed)
local lfs = require "lfs"

local root = arg[1] or ((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../scripts")

local files = {}
local function walk(dir)
  for f in lfs.dir(dir) do
    if f ~= "." and f ~= ".." then
      local p = dir .. "/" .. f
      local mode = lfs.attributes(p, "mode")
      if mode == "directory" then walk(p)
      elseif f:match("%.lua$") then files[#files + 1] = p end
    end
  end
end
walk(root .. "/kreach")
table.sort(files)
assert(#files > 20, "no Lua modules under " .. root .. "/kreach")

-- scripts/kreach/a/b.lua -> kreach.a.b; .../init.lua -> its directory's name
local function module_name(path)
  local rel = path:sub(#root + 2):gsub("%.lua$", ""):gsub("/init$", "")
  return (rel:gsub("/", "."))
end

local problems = {}
local function problem(path, line, fmt, ...)
  problems[#problems + 1] = ("%s:%d: %s"):format(path:sub(#root + 2), line, fmt:format(...))
end

-- The stages' borders: { from, to, except, why }. A require from a module matching `from` of
-- one matching `to` (and not `except`) is a violation.
local STAGE_RULES = {
  { from = "^kreach%.run%.", to = "^kreach%.judge%.", except = "^kreach%.judge%.policy$",
    why = "run/ may require only the options of judge/ (kreach.judge.policy), never its code: the judge runs in the worker" },
  { from = "^kreach%.results%.", to = "^kreach%.judge[%.]?", why = "results/ never requires judge/" },
  { from = "^kreach%.results%.", to = "^kreach%.candidate[%.]?", why = "results/ never requires candidate/" },
  { from = "^kreach%.problem", to = "^kreach%.candidate[%.]?", why = "problem/ comes before every other stage" },
  { from = "^kreach%.problem", to = "^kreach%.judge%.", why = "problem/ comes before every other stage" },
  { from = "^kreach%.problem", to = "^kreach%.run%.", why = "problem/ comes before every other stage" },
  { from = "^kreach%.problem", to = "^kreach%.results%.", why = "problem/ comes before every other stage" },
  { from = "^kreach%.candidate", to = "^kreach%.judge%.", why = "candidate/ is judged, it does not judge" },
  -- (the seal's paths and limits are what a candidate's #includes and heap are checked against)
  { from = "^kreach%.candidate", to = "^kreach%.run%.", except = "^kreach%.run%.seal$", why = "candidate/ does not run evaluations" },
  { from = "^kreach%.candidate", to = "^kreach%.results%.", why = "candidate/ does not read results" },
  { from = "^kreach%.judge%.", to = "^kreach%.run%.", why = "judge/ runs inside the worker that run/ starts, never the reverse" },
  { from = "^kreach%.judge%.", to = "^kreach%.results%.", why = "judge/ returns results; results/ stores them" },
  -- report/ draws what results/ and profile/ hold (docs/report.md): it reads, it never judges or runs
  { from = "^kreach%.report[%.]?", to = "^kreach%.judge[%.]?", why = "report/ reads results; it never requires judge/" },
  { from = "^kreach%.report[%.]?", to = "^kreach%.candidate[%.]?", why = "report/ reads results; it never requires candidate/" },
  { from = "^kreach%.report[%.]?", to = "^kreach%.run[%.]?", why = "report/ reads results; it never requires run/" },
  { from = "^kreach", to = "^kreach%.cmd%.", why = "nothing outside cmd/ requires a command" },
}
local function stage_rule(name, dep)
  for _, r in ipairs(STAGE_RULES) do
    local from_ok = name:match(r.from) and not (r.to:find("cmd", 1, true) and name:match("^kreach%.cmd%."))
    if from_ok and dep:match(r.to) and not (r.except and dep:match(r.except)) then return r end
  end
end

local graph, names = {}, {}
for _, path in ipairs(files) do
  local name = module_name(path)
  names[name] = path
  graph[name] = {}
  local internal = name ~= "kreach" and not name:match("^kreach%.cmd%.")
  local seen_function = false
  local n = 0
  local in_long = false
  for line in io.lines(path) do
    n = n + 1
    local code = line
    -- long strings and comments ([[ ... ]]) hold no code
    if in_long then
      local e = code:find("]]", 1, true)
      if not e then goto continue end
      code = code:sub(e + 2)
      in_long = false
    end
    code = code:gsub("%-%-%[%[.*", function(s) if not s:find("]]", 1, true) then in_long = true end return "" end)
    local ls = code:find("%[%[")
    if ls and not code:find("]]", ls, true) then in_long = true; code = code:sub(1, ls - 1) end
    code = code:gsub("%-%-.*$", "")
    code = code:gsub('"[^"]*"', function(s) return s end)
    if code:find("%f[%w_]function%f[^%w_]") then seen_function = true end
    for pos in code:gmatch("()%f[%w_]require%f[^%w_]") do
      local before = pos > 1 and code:sub(1, pos - 1):match("([%.:])%s*$")
      if before then goto next_call end -- a field named require (device.require)
      local rest = code:sub(pos + 7)
      local dep, after = rest:match("^%s*%(?%s*[\"']([^\"']*)[\"']%s*(.?.?)")
      local lazy = line:find("%-%- require:")
      if not dep or after == ".." then
        if not lazy and not rest:match("^%s*,") then -- pcall(require, "x") names it later
          problem(path, n, "a require with a computed name needs a '-- require: <why>' comment")
        end
      else
        if dep:match("^kreach") then
          if not dep:match("^kreach%.core") then graph[name][dep] = n end
          local rule = stage_rule(name, dep)
          if rule then problem(path, n, "%s requires %s: %s", name, dep, rule.why) end
          if dep == "kreach" and internal then
            problem(path, n, "the internal module %s requires the facade \"kreach\" (require what it needs from kreach.core.* and the internal modules)", name)
          end
        end
        if not lazy then
          if line:match("^%s") then
            problem(path, n, "require \"%s\" inside a block: every require is at the top of the file", dep)
          elseif seen_function then
            problem(path, n, "require \"%s\" after the file's first function: every require is at the top of the file", dep)
          end
        end
      end
      ::next_call::
    end
    ::continue::
  end
end

-- cycles: a depth-first search reporting each back edge's cycle once
local state, stack, cycles, reported = {}, {}, {}, {}
local function visit(m)
  state[m] = "open"
  stack[#stack + 1] = m
  local deps = {}
  for d in pairs(graph[m] or {}) do deps[#deps + 1] = d end
  table.sort(deps)
  for _, d in ipairs(deps) do
    if graph[d] then
      if state[d] == "open" then
        local cyc = {}
        for i = #stack, 1, -1 do
          table.insert(cyc, 1, stack[i])
          if stack[i] == d then break end
        end
        cyc[#cyc + 1] = d
        local key = table.concat(cyc, " -> ")
        if not reported[key] then
          reported[key] = true
          cycles[#cycles + 1] = key
        end
      elseif not state[d] then
        visit(d)
      end
    end
  end
  stack[#stack] = nil
  state[m] = "done"
end
local mods = {}
for m in pairs(graph) do mods[#mods + 1] = m end
table.sort(mods)
for _, m in ipairs(mods) do if not state[m] then visit(m) end end
for _, c in ipairs(cycles) do problems[#problems + 1] = "require cycle: " .. c end

local edges = 0
for _, deps in pairs(graph) do for _ in pairs(deps) do edges = edges + 1 end end
print(("%d modules, %d requires between them"):format(#mods, edges))
if #problems > 0 then
  for _, p in ipairs(problems) do print(p) end
  print(("%d problem%s"):format(#problems, #problems == 1 and "" or "s"))
  os.exit(1)
end
print(("layering ok: every require at the top, no internal module requires the facade, no cycle, the %d stage rules kept"):format(#STAGE_RULES))
