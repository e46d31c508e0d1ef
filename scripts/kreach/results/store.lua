-- kreach.results.store: the results database. One SQLite file (default results.db) in WAL mode with
-- synchronous=FULL, so every committed transaction survives a kill of the process (and a power
-- cut): an evaluation is one transaction, committed before record_evaluation returns.
--
-- Opening never writes to a file that is not ours: the header is read first, then the file is
-- inspected through a read-only connection (quick_check, its tables, kreach_meta's schema
-- version), and only a missing file, an empty one or an SQLite database without any table gets
-- the schema. Open errors come back as nil, message; a failing statement afterwards raises
-- "<path>: <sqlite's message>" (the store is not usable then, unlike a candidate's failure).
-- docs/results.md describes the tables.
--
-- The stage results/ owns what a run leaves behind: the store (this module: opening, reading,
-- transactions, migration, the inspection of a file that may not be ours), one file per table
-- (results/store/<table>.lua: its CREATE statement, its migration, its methods, installed on the
-- store here so that callers call store:record_evaluation(...), store:generations(...)), the
-- evaluation records (kreach.results.evaluation), their export and the text tables
-- (kreach.results.report; kreach.results.bench: what `kreach bench` prints), and the summaries (kreach.results.summary: kreach generate's, pass@k
-- included). It requires base modules (kreach.json, kreach.errors, kreach.stats, kreach.text ...)
-- and kreach.core.*; never judge/ or candidate/, nothing in cmd/.
local lfs = require "lfs"
local core = require "kreach.core"
local sqlite = require "kreach.core.sqlite"
local fs = require "kreach.core.fs"
local errors = require "kreach.errors"
local common = require "kreach.results.store.common"
local runs = require "kreach.results.store.runs"
local refs = require "kreach.results.store.refs"
local evaluations = require "kreach.results.store.evaluations"
local calibrations = require "kreach.results.store.calibrations"
local profiles = require "kreach.results.store.profiles"
local generations = require "kreach.results.store.generations"

local M = { SCHEMA_VERSION = 4, DEFAULT_PATH = "results.db" }

M.json = common.json -- kreach.json, with non-finite numbers as bare tokens (the store reads them back)
local now = common.now
M.now = now -- ISO-8601 UTC, to the second
local exec, query = common.exec, common.query

-- ---- the schema ----

-- The tables, in the order of the schema (and of their methods' installation).
local TABLES = { runs, refs, evaluations, calibrations, profiles, generations }

local SCHEMA = "CREATE TABLE kreach_meta(key TEXT PRIMARY KEY, value TEXT);\n"
for _, t in ipairs(TABLES) do SCHEMA = SCHEMA .. t.SQL end

-- Migrations: MIGRATIONS[v] takes a database of version v - 1 to version v, inside the write
-- transaction of the first writer that opens it (a reader reads an older database as it is:
-- the columns it lacks read as absent).
--   2: PyTorch's times and the speedups against them (issue 17): the evaluations columns that
--      kreach.results.evaluation lists and version 1 had not (kreach.results.store.evaluations).
--   3: the requests `kreach generate` made and their replies (issue 19): the generations table
--      (kreach.results.store.generations, the schema's own definition).
--   4: where an evaluation came from (issue 36): its model, the harness that measured an
--      imported row, measured_here, the imported file and its hash
--      (kreach.results.store.evaluations' MIGRATION_4).
M.MIGRATIONS = {
  [4] = evaluations.MIGRATION_4,
  [3] = generations.MIGRATION,
  [2] = evaluations.MIGRATION,
}

local SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26

local function not_ours(path, why) return ("%s: not a kreach results database (%s)"):format(path, why) end
local function corrupt(path, why) return ("%s: the results database is corrupt: %s"):format(path, why) end

-- Classifies an SQL failure met while inspecting a file.
local function inspect_error(path, msg, code)
  code = code or 0
  if code & 0xff == SQLITE_NOTADB then return not_ours(path, msg) end
  if code & 0xff == SQLITE_CORRUPT then return corrupt(path, msg) end
  return ("%s: %s"):format(path, msg)
end

-- The schema version recorded in kreach_meta, or nil and why the database is not ours.
local function check_meta(db, path)
  local rows, msg, code = db:query("SELECT value FROM kreach_meta WHERE key = 'schema_version'")
  if not rows then return nil, inspect_error(path, msg, code) end
  local v = rows[1] and math.tointeger(tonumber(rows[1].value))
  if not v then return nil, not_ours(path, "kreach_meta has no schema_version") end
  if v > M.SCHEMA_VERSION then
    return nil, ("%s: the results database has schema version %d, newer than this kreach's (%d): "
      .. "use a newer kreach"):format(path, v, M.SCHEMA_VERSION)
  elseif v < 1 then
    return nil, ("%s: the results database has schema version %d, which no kreach wrote"):format(path, v)
  end
  return v
end

-- The columns each table of this kreach's schema has (read once from an in-memory database made
-- with the schema), and what older versions lacked: version 1 the evaluations columns that
-- MIGRATIONS[2] adds, versions 1 and 2 the generations table.
local expected_columns
local ADDED_IN = { generations = 3 }
local V2_COLUMNS = { pytorch_ms = true, pytorch_compiled_ms = true, speedup_pytorch = true,
                     speedup_pytorch_lo = true, speedup_pytorch_hi = true, speedup_compiled = true,
                     speedup_compiled_lo = true, speedup_compiled_hi = true, baseline_vs_pytorch = true }
local V4_COLUMNS = { model = true, harness = true, measured_here = true, source_file = true, source_hash = true }

local function schema_columns()
  if expected_columns then return expected_columns end
  local mem = assert(sqlite.open(":memory:"))
  assert(mem:script(SCHEMA))
  local t = {}
  for _, o in ipairs(assert(mem:query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"))) do
    t[#t + 1] = { name = o.name, columns = {} }
    for _, c in ipairs(assert(mem:query(("PRAGMA table_info(%s)"):format(o.name)))) do
      table.insert(t[#t].columns, c.name)
    end
  end
  mem:close()
  expected_columns = t
  return t
end

-- nil, or why a database that says it is of schema version v is not: a table or a column that
-- version has is missing (made by hand, or altered with the sqlite3 shell). Extra tables and
-- columns are let be.
local function check_columns(db, path, v)
  for _, tbl in ipairs(schema_columns()) do
    if v >= (ADDED_IN[tbl.name] or 1) then
      local rows, msg, code = db:query(("PRAGMA table_info(%s)"):format(tbl.name))
      if not rows then return inspect_error(path, msg, code) end
      if #rows == 0 then
        return not_ours(path, ("schema version %d, but it has no table %s"):format(v, tbl.name))
      end
      local have, missing = {}, {}
      for _, r in ipairs(rows) do have[r.name] = true end
      for _, c in ipairs(tbl.columns) do
        if not have[c] and not (tbl.name == "evaluations" and ((v < 2 and V2_COLUMNS[c]) or (v < 4 and V4_COLUMNS[c]))) then
          missing[#missing + 1] = c
        end
      end
      if #missing > 0 then
        return not_ours(path, ("schema version %d, but its table %s has no column%s %s"):format(v, tbl.name,
          #missing > 1 and "s" or "", table.concat(missing, ", ")))
      end
    end
  end
  return nil
end

-- What is in an SQLite database: "ours", "empty" (no schema objects at all), or nil and the
-- reason to refuse it. Reads only.
local function inspect(db, path)
  local rows, msg, code = db:query("PRAGMA quick_check")
  if not rows then return nil, inspect_error(path, msg, code) end
  if not (#rows == 1 and rows[1].quick_check == "ok") then
    local what = {}
    for i, r in ipairs(rows) do
      if i > 5 then what[#what + 1] = ("(%d more)"):format(#rows - 5); break end
      what[#what + 1] = r.quick_check
    end
    return nil, corrupt(path, table.concat(what, "; "))
  end
  local objs
  objs, msg, code = db:query("SELECT type, name FROM sqlite_schema ORDER BY name")
  if not objs then return nil, inspect_error(path, msg, code) end
  if #objs == 0 then return "empty" end
  local tables, meta = {}, false
  for _, o in ipairs(objs) do
    if o.type == "table" then
      if o.name == "kreach_meta" then meta = true end
      tables[#tables + 1] = o.name
    end
  end
  if not meta then
    if #tables == 0 then
      for _, o in ipairs(objs) do tables[#tables + 1] = o.name end
    end
    if #tables > 12 then
      local n = #tables
      for i = n, 11, -1 do tables[i] = nil end
      tables[11] = ("... (%d in all)"):format(n)
    end
    return nil, not_ours(path, ("it has tables %s and no kreach_meta"):format(table.concat(tables, ", ")))
  end
  local v, err = check_meta(db, path)
  if not v then return nil, err end
  err = check_columns(db, path, v)
  if err then return nil, err end
  return "ours"
end

local Store = {}
Store.__index = Store

-- each table's methods (results/store/<table>.lua)
for _, t in ipairs(TABLES) do
  for name, fn in pairs(t.methods) do Store[name] = fn end
end

local OPEN_OPTIONS = { create = true, readonly = true, busy_timeout_ms = true }

-- open(path, {create = true, readonly = false, busy_timeout_ms = 5000}) -> store | nil, message
function M.open(path, opts)
  path = path or M.DEFAULT_PATH
  opts = opts or {}
  if type(path) ~= "string" then error("store.open: path must be a string", 2) end
  for k in pairs(opts) do
    if not OPEN_OPTIONS[k] then error(("store.open: unknown option '%s'"):format(tostring(k)), 2) end
  end
  local readonly = opts.readonly == true
  local create = opts.create ~= false and not readonly
  local busy = opts.busy_timeout_ms or 5000

  local fresh = false
  local attr = lfs.attributes(path)
  if not attr then
    if not create then return nil, ("%s: no such results database"):format(path) end
    fresh = true
  elseif attr.mode ~= "file" then
    return nil, not_ours(path, ("it is a %s"):format(attr.mode))
  elseif attr.size == 0 then
    if not create then return nil, ("%s: the results database is empty (nothing was recorded yet)"):format(path) end
    fresh = true
  else
    local f, err = io.open(path, "rb")
    if not f then return nil, err end
    local head = f:read(16)
    f:close()
    if head ~= "SQLite format 3\0" then return nil, not_ours(path, "file is not a database") end
    -- Inspect through a read-only connection: nothing of a file we refuse is ever written. With
    -- no -wal or -journal file beside it, the file holds everything committed, and an immutable
    -- connection reads it without making the -wal and -shm files a WAL database otherwise gets.
    -- A reader keeps that connection: it leaves nothing beside the file (a -wal and -shm made
    -- by a reader of another user would lock the owner out; a read-only directory could not
    -- take them at all), and stale() says when a writer changed the file under it. With a -wal
    -- there (a writer has it open, or was killed), the reader shares the writer's -wal and
    -- -shm; a -wal without its -shm is refused rather than given a -shm of the reader's.
    local stamp = readonly and fs.stat(path) or nil
    local side = lfs.attributes(path .. "-wal") or lfs.attributes(path .. "-journal")
    if readonly and lfs.attributes(path .. "-wal") and not lfs.attributes(path .. "-shm") then
      -- a writer makes its -wal an instant before its -shm: look again before refusing
      local t0 = core.now()
      while not lfs.attributes(path .. "-shm") and core.now() - t0 < 0.2 do end
      if not lfs.attributes(path .. "-shm") then
        return nil, ("%s: its write-ahead log %s-wal has no %s-shm beside it, and a reader does not "
          .. "make one: open it once with write access (kreach eval or kreach bench on it) to "
          .. "fold the log into the database, or copy the -shm with it"):format(path, path, path)
      end
    end
    local ro, oerr = sqlite.open(path, { readonly = true, create = false, busy_timeout_ms = busy,
                                         immutable = not side })
    if not ro then return nil, oerr end
    local what, why = inspect(ro, path)
    if not what then ro:close(); return nil, why end
    if readonly then
      if what == "empty" then
        ro:close()
        return nil, ("%s: the results database is empty (nothing was recorded yet)"):format(path)
      end
      return setmetatable({ path = path, sql = ro, readonly = true, depth = 0,
                            stamp = not side and stamp or nil, damaged = {} }, Store)
    end
    ro:close()
    fresh = what == "empty"
  end

  local db, err = sqlite.open(path, { create = create, busy_timeout_ms = busy })
  if not db then return nil, err end
  local function bail(msg) db:close(); return nil, msg end
  local rows, msg, code = db:query("PRAGMA journal_mode=WAL")
  if not rows then return bail(inspect_error(path, msg, code)) end
  if not rows[1] or rows[1].journal_mode ~= "wal" then
    return bail(("%s: cannot use write-ahead logging (journal mode %s)"):format(path,
      tostring(rows[1] and rows[1].journal_mode)))
  end
  for _, p in ipairs{ "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON" } do
    local ok, perr = db:exec(p)
    if not ok then return bail(("%s: %s"):format(path, perr)) end
  end
  local self = setmetatable({ path = path, sql = db, readonly = false, depth = 0, damaged = {} }, Store)
  if fresh then
    -- another process may be creating it too: decide inside the write transaction
    local ok, cerr = pcall(self.transaction, self, function()
      local what, why = inspect(db, path)
      if not what then errors.database(why) end
      if what == "ours" then return end
      local sok, serr = db:script(SCHEMA)
      if not sok then errors.database("%s: %s", path, serr) end
      for k, v in pairs{ schema_version = tostring(M.SCHEMA_VERSION), created_at = now(),
                         created_by = "kreach " .. core.version } do
        exec(self, "INSERT INTO kreach_meta(key, value) VALUES (?, ?)", k, v)
      end
    end)
    if not ok then return bail(tostring(cerr)) end
  else
    local ok, merr = pcall(self.migrate, self)
    if not ok then return bail(tostring(merr)) end
  end
  return self
end

-- migrate(): brings an older database to this kreach's schema version (M.MIGRATIONS), in one
-- write transaction; nothing when it is current.
function Store:migrate()
  self:transaction(function()
    local rows = query(self, "SELECT value FROM kreach_meta WHERE key = 'schema_version'")
    local v = math.tointeger(tonumber(rows[1] and rows[1].value))
    if not v or v >= M.SCHEMA_VERSION then return end
    for to = v + 1, M.SCHEMA_VERSION do
      M.MIGRATIONS[to](function(sql, ...) return exec(self, sql, ...) end,
                       function(sql, ...) return query(self, sql, ...) end)
    end
    exec(self, "UPDATE kreach_meta SET value = ? WHERE key = 'schema_version'", tostring(M.SCHEMA_VERSION))
    exec(self, "INSERT OR REPLACE INTO kreach_meta(key, value) VALUES (?, ?)", "migrated_at", now())
  end)
end

-- transaction(fn) -> what fn returns. BEGIN IMMEDIATE, fn(self), COMMIT; on an error,
-- ROLLBACK and raise it again. Nested calls use savepoints.
function Store:transaction(fn)
  local depth = self.depth
  local sp = "kreach_sp" .. depth
  exec(self, depth == 0 and "BEGIN IMMEDIATE" or ("SAVEPOINT " .. sp))
  self.depth = depth + 1
  local res = table.pack(pcall(fn, self))
  self.depth = depth
  if res[1] then
    local ok, err = self.sql:exec(depth == 0 and "COMMIT" or ("RELEASE " .. sp))
    if ok then return table.unpack(res, 2, res.n) end
    res[2] = errors.new("database", ("%s: %s"):format(self.path, err))
  end
  if depth == 0 then
    self.sql:exec("ROLLBACK") -- fails harmlessly when SQLite has rolled back already
  else
    self.sql:exec("ROLLBACK TO " .. sp)
    self.sql:exec("RELEASE " .. sp)
  end
  error(res[2], 0)
end

function Store:close()
  self.sql:close()
end

-- stale() -> true when this is a reader's immutable connection (no -wal was there when it
-- opened) and the file may have changed since: a -wal appeared (a writer opened it) or the
-- file's size, inode or times changed (a writer checkpointed into it). What was read may then
-- mix two states; M.read reads again.
function Store:stale()
  local s = self.stamp
  if not s then return false end
  if lfs.attributes(self.path .. "-wal") then return true end
  local now = fs.stat(self.path)
  return not now or now.size ~= s.size or now.ino ~= s.ino or now.dev ~= s.dev
    or now.mtime_ns ~= s.mtime_ns or now.ctime_ns ~= s.ctime_ns
end

-- read(path, fn, {busy_timeout_ms =}) -> true, what fn(store) returns | nil, message.
-- For readers (kreach results, kreach profile report): opens the database read-only, runs
-- fn, closes it. When the connection was immutable and a writer changed the file meanwhile
-- (stale()), fn runs again on a new connection, which then shares the writer's -wal (at most
-- three tries). An error raised by fn is raised again, after the close.
function M.read(path, fn, opts)
  opts = opts or {}
  for attempt = 1, 3 do
    local db, err = M.open(path, { readonly = true, busy_timeout_ms = opts.busy_timeout_ms })
    if not db then return nil, err end
    local res = table.pack(pcall(fn, db))
    local stale = db:stale()
    db:close()
    if not stale or attempt == 3 then
      if not res[1] then error(res[2], 0) end
      return true, table.unpack(res, 2, res.n)
    end
  end
end

return M
