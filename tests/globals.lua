-- No Lua file of kreach reads or writes a global that Lua, busted or the file's host does not
-- define: a misspelt or moved local (a spec's cases moved to another file and read as an
-- undeclared global) is found here, on a machine without a GPU, instead of when the code runs.
-- Each file is listed by luac5.4 (-l -p: its bytecode, not run) and every GETTABUP/SETTABUP of
-- _ENV is a global access.
-- usage: kreach tests/globals.lua DIR...   (exit 1 with every access listed as file:line,
--   exit 2 when luac5.4 is missing). A file that does not compile is reported too, except the
--   deliberately broken candidates, which live under tests/candidates (not searched).
local lfs = require "lfs"

-- Lua 5.4's own globals, busted's (the specs), and `arg` (scripts run by kreach)
local ALLOWED = {}
for name in ([[_G _VERSION assert collectgarbage coroutine debug dofile error getmetatable io ipairs load
  loadfile math next os package pairs pcall print rawequal rawget rawlen rawset require select
  setmetatable string table tonumber tostring type utf8 warn xpcall arg
  describe it pending before_each after_each setup teardown lazy_setup lazy_teardown
  strict_setup strict_teardown finally insulate expose randomize spy stub mock]]):gmatch("%S+") do
  ALLOWED[name] = true
end

local roots = {}
for i = 1, #arg do roots[#roots + 1] = (arg[i]:gsub("/+$", "")) end
if #roots == 0 then io.stderr:write("usage: kreach tests/globals.lua DIR...\n"); os.exit(2) end

local LUAC = os.getenv("LUAC") or "luac5.4"
do
  local f = io.popen(LUAC .. " -v 2>&1")
  local v = f:read("a")
  f:close()
  if not v:match("^Lua 5%.4") then
    io.stderr:write(("globals: %s is not Lua 5.4's compiler (%s); install the lua5.4 package (tools/install-deps)\n"):format(
      LUAC, (v:gsub("%s+$", ""))))
    os.exit(2)
  end
end

local files = {}
local function walk(dir)
  for f in lfs.dir(dir) do
    if f ~= "." and f ~= ".." then
      local p = dir .. "/" .. f
      local mode = lfs.attributes(p, "mode")
      if mode == "directory" then
        if not ("/" .. p):match("/tests/candidates$") and f ~= "lua-deps" then walk(p) end
      elseif f:match("%.lua$") then
        files[#files + 1] = p
      end
    end
  end
end
for _, r in ipairs(roots) do
  local mode = lfs.attributes(r, "mode")
  if mode == "directory" then walk(r)
  elseif mode == "file" then files[#files + 1] = r
  else io.stderr:write(("globals: %s: no such file or directory\n"):format(r)); os.exit(2) end
end
table.sort(files)

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local found = {}
for _, path in ipairs(files) do
  local f = io.popen(("%s -l -p %s 2>&1"):format(LUAC, quote(path)))
  local out = f:read("a")
  local ok = f:close()
  if not ok then
    found[#found + 1] = ("%s: does not compile: %s"):format(path, (out:gsub("^[^:]*: ", ""):gsub("%s+$", "")))
  else
    local seen = {}
    for line, op, name in out:gmatch("%[(%d+)%]%s+([GS]ETTABUP)[^\n]-; _ENV \"([%w_]+)\"") do
      if not ALLOWED[name] and not seen[line .. name] then
        seen[line .. name] = true
        found[#found + 1] = ("%s:%s: %s the global '%s'"):format(path, line,
          op == "SETTABUP" and "sets" or "reads", name)
      end
    end
  end
end

if #found > 0 then
  for _, l in ipairs(found) do io.stderr:write(l, "\n") end
  io.stderr:write(("globals: %d finding%s in %d files\n"):format(#found, #found == 1 and "" or "s", #files))
  os.exit(1)
end
print(("globals ok: %d files"):format(#files))
