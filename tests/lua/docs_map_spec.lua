-- docs/scripting.md's map of the library ("Where things live") names real files: every module a
-- stage's row lists is a file of that folder, and every file of a stage's folder is in its row,
-- so the map cannot fall behind a move or a split.
local lfs = require "lfs"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
local src = here .. "/../.."
local scripts = src .. "/scripts/kreach"

local function slurp(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- the map's rows: { folder = "problem", names = { define = true, ... } }
local function rows()
  local doc = slurp(src .. "/docs/scripting.md")
  local section = assert(doc:match("\n## Where things live\n(.-)\n## "), "docs/scripting.md has no 'Where things live' section")
  local out = {}
  for line in section:gmatch("[^\n]+") do
    local folder, cell = line:match("^| %w+ | `(%w+)/`: ([^|]+) |")
    if folder then
      local names = {}
      for n in cell:gmatch("`([%w_/]+)`") do names[n] = true end
      out[#out + 1] = { folder = folder, names = names }
    end
  end
  return out
end

describe("docs/scripting.md's map of the library", function()
  local map = rows()

  it("has a row for each of the five stages", function()
    local folders = {}
    for _, r in ipairs(map) do folders[#folders + 1] = r.folder end
    assert.same({ "problem", "candidate", "judge", "run", "results" }, folders)
  end)

  for _, r in ipairs(map) do
    it(("names only files of %s/, and every one of them"):format(r.folder), function()
      local dir = scripts .. "/" .. r.folder
      for n in pairs(r.names) do
        local path = dir .. "/" .. n:gsub("/$", "")
        local mode = lfs.attributes(path .. ".lua", "mode") or lfs.attributes(path, "mode")
        assert.is_truthy(mode, ("the map names %s/%s, which is not there"):format(r.folder, n))
      end
      for f in lfs.dir(dir) do
        local n = f:match("^(.*)%.lua$") or (lfs.attributes(dir .. "/" .. f, "mode") == "directory" and f ~= "." and f ~= ".." and f .. "/")
        if n then
          -- (x.lua beside x/ is the folder's entry: `x/` in the map covers both)
          assert.is_truthy(r.names[n] or r.names[(n:gsub("/$", ""))] or r.names[n .. "/"],
            ("%s/%s is not in the map's row for %s/"):format(r.folder, f, r.folder))
        end
      end
    end)
  end
end)
