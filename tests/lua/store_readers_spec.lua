-- Readers of the results database (kreach results, kreach profile report, store.read) open it
-- read-only and leave nothing beside it: a database in a read-only directory can be read; a
-- reader of another user leaves no -wal or -shm that would lock the owner out; a killed
-- writer's -wal is read through (and left as it was); a -wal without its -shm is refused; a
-- writer that changes the file under an immutable read makes store.read read again. Acting as
-- another user needs root (setpriv); without root the read-only directory is tested as
-- ourselves and the other-user case is left pending.
local store = require "kreach.results.store"
local lfs = require "lfs"
local kreach = require "kreach"
local support = require "support"

local BIN = kreach.executable()
local ROOT = io.popen("id -u"):read("l") == "0"
local OWNER, READER = 64001, 64002 -- uids nobody is likely to have; only used under root

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- runs `kreach args...` as uid (nil: ourselves); returns ok, output
local function as(uid, args)
  local cmd = q(BIN) .. " " .. args .. " 2>&1"
  if uid then
    cmd = ("setpriv --reuid=%d --regid=%d --clear-groups "):format(uid, uid) .. cmd
  end
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok = p:close()
  return ok == true, out
end

local RECORD = [[
local s = require("kreach.results.store")
local db = assert(s.open(arg[1]))
local run = db:begin_run{ command = { "kreach" }, config_hash = "h" }
db:record_evaluation{ run_id = run, problem = { name = "p" .. run, file_hash = "a" }, eval_key = "k" .. run,
                      dtype = "f32", verdict = "correct" }
if arg[2] == "kill" then os.execute("kill -9 " .. require("kreach.core.util").pid()) end
db:close()
print("recorded run", run)
]]

local function record(uid, path, how)
  return as(uid, "-e " .. q(RECORD) .. " " .. q(path) .. (how and (" " .. how) or ""))
end

local function listing(dir)
  local names = {}
  for f in lfs.dir(dir) do if f ~= "." and f ~= ".." then names[#names + 1] = f end end
  table.sort(names)
  return table.concat(names, " ")
end

local dirs = {}
local function tmpdir(mode)
  local d = support.tmpdir()
  dirs[#dirs + 1] = d
  if mode then assert(os.execute(("chmod %s %s"):format(mode, q(d)))) end
  return d
end

describe("readers of the results database", function()
  teardown(function()
    for _, d in ipairs(dirs) do os.execute("chmod -R u+w " .. q(d) .. "; rm -rf " .. q(d)) end
  end)

  it("read a database in a read-only directory and leave nothing beside it", function()
    local d = tmpdir(ROOT and "0755" or nil)
    local path = d .. "/r.db"
    assert.is_true(record(nil, path))
    local before = support.slurp(path)
    assert(os.execute("chmod 0555 " .. q(d)))
    local reader = ROOT and READER or nil
    local ok, out = as(reader, "results list --db " .. q(path))
    assert.is_true(ok, out)
    assert.matches("p1", out)
    ok, out = as(reader, "results export --format jsonl --db " .. q(path))
    assert.is_true(ok, out)
    assert.matches('"problem_name":"p1"', out)
    assert.equals("r.db", listing(d))
    assert.is_true(support.slurp(path) == before, "the database's bytes changed")
    -- and the owner writes afterwards
    assert(os.execute("chmod 0755 " .. q(d)))
    assert.is_true(record(nil, path))
  end)

  it("leave no side files that lock the owner out when another user reads", function()
    if not ROOT then pending("needs root to act as two other users"); return end
    local d = tmpdir("1777") -- a directory both may write in, as /tmp
    local path = d .. "/r.db"
    local ok, out = record(OWNER, path)
    assert.is_true(ok, out)
    ok, out = as(READER, "results list --db " .. q(path))
    assert.is_true(ok, out)
    assert.matches("p1", out)
    assert.equals("r.db", listing(d))
    ok, out = record(OWNER, path)
    assert.is_true(ok, out)
    assert.matches("recorded run\t2", out)
  end)

  it("read through a killed writer's -wal and -shm and leave them as they were", function()
    local d = tmpdir(ROOT and "0755" or nil)
    local path = d .. "/r.db"
    assert.is_true(record(nil, path))
    local ok = record(nil, path, "kill") -- run 2 committed, in the -wal only
    assert.is_false(ok)
    assert.equals("r.db r.db-shm r.db-wal", listing(d))
    local wal = support.slurp(path .. "-wal")
    assert(os.execute("chmod 0555 " .. q(d)))
    local out
    ok, out = as(ROOT and READER or nil, "results list --db " .. q(path))
    assert.is_true(ok, out)
    assert.matches("p1", out)
    assert.matches("p2", out)
    assert.equals("r.db r.db-shm r.db-wal", listing(d))
    assert.is_true(support.slurp(path .. "-wal") == wal, "the -wal changed")
    assert(os.execute("chmod 0755 " .. q(d)))
    ok, out = record(nil, path)
    assert.is_true(ok, out)
    assert.matches("recorded run\t3", out)
  end)

  it("refuse a -wal without its -shm rather than make one", function()
    local d = tmpdir()
    local path = d .. "/r.db"
    assert.is_true(record(nil, path))
    assert.is_false(record(nil, path, "kill"))
    assert(os.remove(path .. "-shm"))
    local db, err = store.open(path, { readonly = true })
    assert.is_nil(db)
    assert.matches("has no .*%-shm beside it", err)
    assert.equals("r.db r.db-wal", listing(d))
  end)

  it("read again when a writer changes the file under an immutable read", function()
    local d = tmpdir()
    local path = d .. "/r.db"
    assert.is_true(record(nil, path))
    local calls = 0
    local ok, n = store.read(path, function(db)
      calls = calls + 1
      if calls == 1 then
        assert.is_not_nil(db.stamp) -- no -wal: an immutable connection
        assert.is_false(db:stale())
        assert.is_true(record(nil, path)) -- a writer comes and goes meanwhile
        assert.is_true(db:stale())
      end
      return #db:evaluations()
    end)
    assert.is_true(ok)
    assert.equals(2, calls)
    assert.equals(2, n)
    assert.equals("r.db", listing(d))
    local none, err = store.read(d .. "/missing.db", function() error("not called") end)
    assert.is_nil(none)
    assert.matches("no such results database", err)
  end)
end)
