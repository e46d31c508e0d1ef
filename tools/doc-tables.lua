-- tools/doc-tables.lua: the tables in docs/ that come from stored data, kept equal to the files
-- the paper pipeline (experiments/paper/run.lua) writes. A doc marks such a table with
--
--   <!-- table: experiments/paper/tables/dlrm-projection.md -->
--   ...the table, as that file has it (its first heading left out)...
--   <!-- end table -->
--
-- usage: kreach tools/doc-tables.lua [--check] FILE.md|DIR...   (a DIR: its *.md files)
--   without --check, each block's body is replaced by the named file's (the file rewritten only
--   when it changes); with --check, nothing is written and every block that differs is named,
--   with its file and line (exit 1). Paths in markers are from the repository root.
local lfs = require "lfs"
local root = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/.."

local function read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("a")
  f:close()
  return s
end

-- body(path) -> the table file's text without its first "# " heading (the doc has its own), or nil, err
local function body(path)
  local s, err = read(root .. "/" .. path)
  if not s then return nil, err end
  s = s:gsub("^# [^\n]*\n\n?", "", 1)
  return s
end

local check, files = false, {}
for _, a in ipairs(arg) do
  if a == "--check" then check = true
  elseif a:sub(1, 1) == "-" then io.stderr:write("doc-tables: unknown option ", a, "\n"); os.exit(2)
  elseif lfs.attributes(a, "mode") == "directory" then
    local names = {}
    for f in lfs.dir(a) do if f:match("%.md$") then names[#names + 1] = a .. "/" .. f end end
    table.sort(names)
    for _, f in ipairs(names) do files[#files + 1] = f end
  else files[#files + 1] = a end
end
if #files == 0 then io.stderr:write("usage: kreach tools/doc-tables.lua [--check] FILE.md...\n"); os.exit(2) end

local bad, blocks = 0, 0
for _, file in ipairs(files) do
  local text, err = read(file)
  if not text then io.stderr:write("doc-tables: ", err, "\n"); os.exit(2) end
  local out, pos, changed = {}, 1, false
  while true do
    local s, e, name = text:find("<!%-%- table: ([^%s]+) %-%->\n", pos)
    if not s then break end
    local at = select(2, text:sub(1, s):gsub("\n", "")) + 1
    local es, ee = text:find("<!%-%- end table %-%->", e + 1)
    if not es then
      io.stderr:write(("%s:%d: the table block of %s has no <!-- end table -->\n"):format(file, at, name)); os.exit(2)
    end
    local want, why = body(name)
    if not want then
      io.stderr:write(("%s:%d: %s: %s\n"):format(file, at, name, why)); os.exit(2)
    end
    blocks = blocks + 1
    if text:sub(e + 1, es - 1) ~= want then
      bad, changed = bad + 1, true
      if check then io.stderr:write(("%s:%d: the table differs from %s (kreach tools/doc-tables.lua %s)\n"):format(file, at, name, file)) end
    end
    out[#out + 1] = text:sub(pos, e)
    out[#out + 1] = want
    pos = es
  end
  out[#out + 1] = text:sub(pos)
  if not check and changed then
    local new = table.concat(out)
    if new ~= text then
      local f = assert(io.open(file, "wb"))
      f:write(new)
      f:close()
      print("updated " .. file)
    end
  end
end
if check then
  if bad > 0 then os.exit(1) end
  print(("%d table blocks, all equal to their files"):format(blocks))
end
