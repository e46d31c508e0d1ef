-- experiments/bench/tables.lua: the stored benchmark outputs of experiments/bench/data as Markdown
-- tables, one per file, for the docs (copied in by tools/doc-tables.lua, checked by ctest
-- kreach.bench.tables and kreach.docs.tables). A data file is what a benchmark printed: its
-- first line a "# " comment naming the command and the machine, then its lines, of which the
-- `result NAME VALUE UNIT WHAT...` ones (experiments/bench/common.lua's result) make the table.
-- usage: kreach experiments/bench/tables.lua [--data DIR] (--out DIR | --check DIR)
local lfs = require "lfs"

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local data, out, check = here .. "/data", nil, nil
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--data" then i = i + 1; data = arg[i]
  elseif a == "--out" then i = i + 1; out = arg[i]
  elseif a == "--check" then i = i + 1; check = arg[i]
  else io.stderr:write("experiments/bench/tables.lua: unknown option ", tostring(a), "\n"); os.exit(2) end
  i = i + 1
end
if (out == nil) == (check == nil) then
  io.stderr:write("usage: kreach experiments/bench/tables.lua [--data DIR] (--out DIR | --check DIR)\n")
  os.exit(2)
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function cell(s) return (tostring(s):gsub("|", "\\|")) end

-- table_of(name, text) -> the Markdown of one data file, or nil and why
local function table_of(name, text)
  local head = text:match("^# ([^\n]+)")
  if not head then return nil, ("%s/%s:1: no \"# \" line naming the command and the machine"):format(data, name) end
  local rows, n = {}, 0
  for line in text:gmatch("[^\n]*") do
    n = n + 1
    if line:match("^result ") then
      local key, value, unit, what = line:match("^result (%S+) (%S+) (%S+) (.+)$")
      if not key or not tonumber(value) then
        return nil, ("%s/%s:%d: a result line is `result NAME VALUE UNIT WHAT`: %s"):format(data, name, n, line)
      end
      rows[#rows + 1] = ("| %s | %s | %s | %s |"):format(cell(key), value, cell(unit), cell(what))
    end
  end
  if #rows == 0 then return nil, ("%s/%s: no result line"):format(data, name) end
  return table.concat({ "# " .. name, "", head, "", "| result | value | unit | what |", "| --- | ---: | --- | --- |",
                        table.concat(rows, "\n"), "", ("Source: `experiments/bench/data/%s`."):format(name), "" }, "\n")
end

local names = {}
for f in lfs.dir(data) do if f:match("%.txt$") then names[#names + 1] = f end end
table.sort(names)
local made = {}
for _, f in ipairs(names) do
  local md, why = table_of(f, read(data .. "/" .. f))
  if not md then io.stderr:write("experiments/bench/tables.lua: ", why, "\n"); os.exit(3) end
  made[#made + 1] = { f:gsub("%.txt$", ".md"), md }
end

if out then
  lfs.mkdir(out)
  for _, m in ipairs(made) do
    local fh = assert(io.open(out .. "/" .. m[1], "wb"))
    fh:write(m[2])
    fh:close()
  end
  print(("wrote %d tables to %s"):format(#made, out))
else
  local bad, want = 0, {}
  for _, m in ipairs(made) do
    want[m[1]] = true
    local f = io.open(check .. "/" .. m[1], "rb")
    local have = f and f:read("a")
    if f then f:close() end
    if have ~= m[2] then print(("%s: differs from what the data make now (or is missing)"):format(m[1])); bad = bad + 1 end
  end
  for f in lfs.dir(check) do
    if f:match("%.md$") and not want[f] then print(("%s: in %s, made from no data file"):format(f, check)); bad = bad + 1 end
  end
  if bad > 0 then
    print(("regenerate: kreach experiments/bench/tables.lua --out %s"):format(check))
    os.exit(1)
  end
  print(("%d tables as committed in %s"):format(#made, check))
end
