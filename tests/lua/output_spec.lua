-- kreach.atomic: files written whole or not at all (a temporary beside the target, renamed on
-- commit, removed on abort), and protected paths (a database and its side files) refused.
local output = require "kreach.atomic"
local fs = require "kreach.core.fs"
local lfs = require "lfs"
local support = require "support"

local function listing(dir)
  local names = {}
  for f in lfs.dir(dir) do if f ~= "." and f ~= ".." then names[#names + 1] = f end end
  table.sort(names)
  return table.concat(names, " ")
end

describe("kreach.atomic", function()
  local d
  before_each(function() d = support.tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. d .. "'") end)

  it("shows nothing until the commit, and replaces the file whole", function()
    local path = d .. "/out.csv"
    support.spit(path, "old\n")
    local out = assert(output.open(path))
    assert.matches("^" .. d:gsub("%p", "%%%0") .. "/%.out%.csv%.", out.temp)
    out:write("a,b\n"):write("1,2\n")
    assert.equals("old\n", support.slurp(path))
    assert.is_true(out:commit())
    assert.equals("a,b\n1,2\n", support.slurp(path))
    assert.equals("out.csv", listing(d))
  end)

  it("leaves the old file when aborted (or collected)", function()
    local path = d .. "/out.csv"
    support.spit(path, "old\n")
    local out = assert(output.open(path))
    out:write("half")
    out:abort()
    assert.equals("old\n", support.slurp(path))
    assert.equals("out.csv", listing(d))
    do
      local w = assert(output.open(path))
      w:write("half")
    end
    collectgarbage()
    collectgarbage()
    assert.equals("out.csv", listing(d))
  end)

  it("refuses a database, its side files and their other names (status 2)", function()
    local db = d .. "/r.db"
    support.spit(db, "SQLite format 3\0")
    assert(lfs.link("r.db", d .. "/link", true))
    assert(lfs.link(db, d .. "/hard"))
    local protect = output.database_files(db)
    local rdb = assert(fs.resolve(db))
    assert.same({ rdb, rdb .. "-wal", rdb .. "-shm", rdb .. "-journal" }, protect)
    for _, p in ipairs{ db, db .. "-wal", db .. "-shm", d .. "/./r.db", d .. "/link", d .. "/hard" } do
      local out, err, status = output.open(p, { protect = protect })
      assert.is_nil(out, p)
      assert.matches("^refusing to write ", err)
      assert.equals(2, status)
    end
    assert.equals("hard link r.db", listing(d))
    -- a database named through a link: the side files beside the link's name count too
    local via = output.database_files(d .. "/link")
    assert.is_true(via[1] == rdb and via[#via] == assert(fs.resolve(d)) .. "/link-journal")
    assert.is_not_nil(output.open(d .. "/other.csv", { protect = protect }))
  end)

  it("writes special files directly, and refuses a directory", function()
    local out = assert(output.open("/dev/null"))
    out:write("x")
    assert.is_true(out:commit())
    local none, err, status = output.open(d)
    assert.is_nil(none)
    assert.matches("is a directory", err)
    assert.equals(2, status)
  end)
end)

describe("kreach.atomic.tmpdir and remove_tree", function()
  it("make a new private directory and remove it with what is below it, not what links point to", function()
    local keep = assert(output.tmpdir())
    local f = assert(io.open(keep .. "/kept", "w")); f:write("x"); f:close()
    local d = assert(output.tmpdir())
    assert.are_not.equal(keep, d)
    assert.equals("rwx------", lfs.attributes(d, "permissions"))
    assert(lfs.mkdir(d .. "/sub"))
    f = assert(io.open(d .. "/sub/file", "w")); f:write("y"); f:close()
    assert(lfs.link(keep, d .. "/sub/link", true))
    output.remove_tree(d)
    assert.is_nil(lfs.attributes(d))
    assert.equals("x", io.open(keep .. "/kept"):read("a"))
    output.remove_tree(keep)
    assert.is_nil(lfs.attributes(keep))
  end)
end)
