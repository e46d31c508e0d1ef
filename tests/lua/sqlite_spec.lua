-- kreach.core.sqlite: values round-trip exactly (64-bit integers, infinities, strings with
-- NULs, NULL), SQL errors come back as nil, message, misuse raises, transactions, iterators, and
-- a file that is not a database is refused on first use and left byte-for-byte as it was.
local sqlite = require "kreach.core.sqlite"

local support = require "support"
local tmpdir, slurp = support.tmpdir, support.slurp

describe("kreach.core.sqlite", function()
  local db
  before_each(function()
    db = assert(sqlite.open(":memory:"))
    assert(db:script("CREATE TABLE t(i INTEGER, r REAL, s TEXT, x)"))
  end)
  after_each(function() db:close() end)

  it("names its library version", function()
    assert.matches("^3%.%d+%.%d+", sqlite.version)
  end)

  it("round-trips 64-bit integers as Lua integers", function()
    local vals = { 0, 1, -1, 6400000000, 1 << 62, math.maxinteger, math.mininteger, -(1 << 63) }
    for _, v in ipairs(vals) do assert.equals(1, db:exec("INSERT INTO t(i, x) VALUES (?, ?)", v, v)) end
    local rows = assert(db:query("SELECT i, x FROM t ORDER BY rowid"))
    assert.equals(#vals, #rows)
    for k, v in ipairs(vals) do
      assert.equals("integer", math.type(rows[k].i))
      assert.equals(v, rows[k].i)
      assert.equals(v, rows[k].x)
    end
  end)

  it("round-trips floats, infinities included, as floats", function()
    local vals = { 0.1, -2.5e-300, 1 / 3, math.huge, -math.huge, 2.0 ^ 70 }
    for _, v in ipairs(vals) do db:exec("INSERT INTO t(r, x) VALUES (?, ?)", v, v) end
    local rows = db:query("SELECT r, x FROM t ORDER BY rowid")
    for k, v in ipairs(vals) do
      assert.equals("float", math.type(rows[k].r))
      assert.equals(v, rows[k].r)
      assert.equals(v, rows[k].x)
    end
    -- SQLite stores NaN as NULL
    db:exec("INSERT INTO t(r) VALUES (?)", 0 / 0)
    assert.is_nil(db:query("SELECT r FROM t ORDER BY rowid DESC LIMIT 1")[1].r)
  end)

  it("keeps strings whole, NULs included, and booleans as 0/1", function()
    local s = "a\0b\0\255c" .. ("x"):rep(100000)
    db:exec("INSERT INTO t(s, x, i) VALUES (?, ?, ?)", s, "", true)
    db:exec("INSERT INTO t(i) VALUES (?)", false)
    local rows = db:query("SELECT s, x, i, length(CAST(s AS BLOB)) AS n FROM t ORDER BY rowid")
    assert.equals(s, rows[1].s)
    assert.equals(#s, rows[1].n)
    assert.equals("", rows[1].x)
    assert.equals(1, rows[1].i)
    assert.equals(0, rows[2].i)
  end)

  it("reads NULL as an absent key and binds nil as NULL", function()
    db:exec("INSERT INTO t(i, s) VALUES (?, ?)", nil, "kept")
    local r = db:query("SELECT i, r, s, x FROM t")[1]
    assert.is_nil(r.i); assert.is_nil(r.r); assert.is_nil(r.x)
    assert.equals("kept", r.s)
    assert.equals(1, #db:query("SELECT 1 AS one FROM t WHERE i IS ?", nil))
  end)

  it("returns nil, message and code for an SQL error", function()
    local n, msg, code = db:exec("INSERT INTO nope VALUES (1)")
    assert.is_nil(n)
    assert.matches("no such table: nope", msg)
    assert.equals(1, code) -- SQLITE_ERROR
    local rows, qmsg = db:query("SELEC 1")
    assert.is_nil(rows)
    assert.matches("syntax error", qmsg)
    assert(db:script("CREATE TABLE u(k INTEGER PRIMARY KEY, v NOT NULL)"))
    db:exec("INSERT INTO u VALUES (1, 1)")
    local _, cmsg, ccode = db:exec("INSERT INTO u VALUES (1, 2)")
    assert.matches("UNIQUE constraint failed", cmsg)
    assert.equals(1555, ccode) -- SQLITE_CONSTRAINT_PRIMARYKEY, an extended code
    assert.matches("UNIQUE constraint failed", db:errmsg())
    local ok, smsg = db:script("CREATE TABLE v(a); INSERT INTO nope VALUES (1)")
    assert.is_nil(ok)
    assert.matches("no such table", smsg)
  end)

  it("raises on misuse", function()
    assert.has_error(function() db:exec("INSERT INTO t(x) VALUES (?)", {}) end,
      "bad argument #2 to 'exec' (number, string, boolean or nil expected, got table)")
    assert.has_error(function() db:query("SELECT ?", print) end)
    assert.has_error(function() db:exec("SELECT ?, ?", 1) end, "the statement has 2 parameters, 1 value given")
    assert.has_error(function() db:exec("SELECT 1", 1) end)
    assert.has_error(function() db:exec("SELECT 1; SELECT 2") end, "exec takes one statement (db:script runs several)")
    assert.has_error(function() db:exec(nil) end)
    assert.has_error(function() sqlite.open(":memory:", { readonly = 1 }) end)
    assert.has_error(function() sqlite.open(":memory:", { bogus = true }) end)
    -- a failed bind leaves the cached statement usable
    assert.equals(1, db:exec("INSERT INTO t(x) VALUES (?)", 7))
    assert.equals(7, db:query("SELECT x FROM t")[1].x)
    db:close()
    db:close() -- idempotent
    assert.has_error(function() db:query("SELECT 1") end)
    assert.has_error(function() db:last_insert_rowid() end)
    assert.matches("closed", tostring(db))
  end)

  it("counts changes and gives the last rowid", function()
    db:exec("INSERT INTO t(i) VALUES (1)")
    db:exec("INSERT INTO t(i) VALUES (2)")
    assert.equals(2, db:last_insert_rowid())
    assert.equals(2, db:exec("UPDATE t SET s = 'x'"))
    assert.equals(2, db:changes())
    assert.equals(0, db:exec("CREATE TABLE w(a)")) -- not a change count of the UPDATE before
    assert.equals(0, db:exec("SELECT * FROM t"))
    assert.equals(0, db:exec("-- nothing but a comment"))
    assert.same({}, db:query("  "))
  end)

  it("commits and rolls back transactions", function()
    assert(db:exec("BEGIN"))
    db:exec("INSERT INTO t(i) VALUES (1)")
    assert(db:exec("COMMIT"))
    assert(db:exec("BEGIN"))
    db:exec("INSERT INTO t(i) VALUES (2)")
    assert.equals(2, #db:query("SELECT * FROM t"))
    assert(db:exec("ROLLBACK"))
    assert.same({ { i = 1 } }, db:query("SELECT i FROM t"))
    local _, msg = db:exec("COMMIT")
    assert.matches("no transaction is active", msg)
  end)

  it("iterates rows, lets the loop body use the database, and closes on break", function()
    for k = 1, 100 do db:exec("INSERT INTO t(i) VALUES (?)", k) end
    local sum, n = 0, 0
    for r in db:rows("SELECT i FROM t WHERE i > ? ORDER BY i", 50) do
      sum = sum + r.i
      n = n + #db:query("SELECT i FROM t WHERE i = ?", r.i) -- another statement meanwhile
    end
    assert.equals(50, n)
    assert.equals((51 + 100) * 50 // 2, sum)
    for r in db:rows("SELECT i FROM t ORDER BY i") do
      if r.i == 3 then break end
    end
    -- the broken-off statement was finalised: a write works (no statement keeps a read open)
    assert.equals(100, db:exec("UPDATE t SET i = i + 1"))
    assert.has_error(function() for _ in db:rows("SELECT * FROM nope") do end end, "no such table: nope")
    -- an error in mid-iteration raises
    assert.has_error(function()
      for _ in db:rows("SELECT CASE WHEN i > 5 THEN abs(-9223372036854775807 - 1) ELSE i END FROM t") do end
    end, "integer overflow")
    -- closing the database under a live iterator
    local it = db:rows("SELECT i FROM t")
    assert.is_table(it())
    db:close()
    assert.has_error(function() it() end, "database closed during rows()")
  end)

  it("refuses a file that is not a database and leaves it as it was", function()
    local d = tmpdir()
    local path = d .. "/hello.db"
    local f = assert(io.open(path, "wb"))
    f:write("hello")
    f:close()
    local before = require("lfs").attributes(path)
    local h = assert(sqlite.open(path, { create = true }))
    local rows, msg, code = h:query("SELECT * FROM sqlite_schema")
    assert.is_nil(rows)
    assert.matches("file is not a database", msg)
    assert.equals(26, code) -- SQLITE_NOTADB
    local n, wmsg = h:exec("CREATE TABLE x(a)")
    assert.is_nil(n)
    assert.matches("file is not a database", wmsg)
    h:close()
    assert.equals("hello", slurp(path))
    assert.equals(before.modification, require("lfs").attributes(path).modification)
    for _, side in ipairs{ "-journal", "-wal", "-shm" } do assert.is_nil(io.open(path .. side)) end
    os.remove(path)
    assert(require("lfs").rmdir(d))
  end)

  it("opens read-only, and refuses a missing file without create", function()
    local d = tmpdir()
    local path = d .. "/a.db"
    local h, err = sqlite.open(path, { create = false })
    assert.is_nil(h)
    assert.matches("unable to open database file", err)
    assert.matches(path, err, 1, true)
    assert.is_nil(io.open(path))
    h = assert(sqlite.open(path))
    assert(h:script("CREATE TABLE a(x); INSERT INTO a VALUES (1)"))
    h:close()
    local ro = assert(sqlite.open(path, { readonly = true, busy_timeout_ms = 100 }))
    assert.same({ { x = 1 } }, ro:query("SELECT x FROM a"))
    local n, msg = ro:exec("INSERT INTO a VALUES (2)")
    assert.is_nil(n)
    assert.matches("readonly database", msg)
    do local c <close> = ro end
    assert.has_error(function() ro:query("SELECT 1") end) -- __close closed it
    os.remove(path)
    assert(require("lfs").rmdir(d))
  end)

  it("caches statements without limits on how many SQL texts are used", function()
    for k = 1, 300 do
      assert.equals(k, db:query(("SELECT %d AS v"):format(k))[1].v)
    end
    assert.equals(1, db:exec("INSERT INTO t(i) VALUES (?)", 1))
  end)
end)
