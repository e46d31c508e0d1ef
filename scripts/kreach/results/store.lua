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
local lfs = require "lfs"
local core = require "kreach.core"
local sqlite = require "kreach.core.sqlite"
local fs = require "kreach.core.fs"
local util = require "kreach.core.util"
local errors = require "kreach.errors"
local evaluation = require "kreach.results.evaluation"

local M = { SCHEMA_VERSION = 3, DEFAULT_PATH = "results.db" }


-- ---- JSON: kreach.json, with non-finite numbers as bare tokens (the store reads them back) ----
local codec = require "kreach.json"
local json = {
  encode = function(v) return codec.encode(v, { nonfinite = "token" }) end,
  decode = codec.decode,
}
M.json = json

local function enc(v) if v == nil then return nil end return json.encode(v) end

-- ---- damaged columns ----
-- A stored column that cannot be read as what it holds (JSON text that does not decode, a text
-- in a REAL column: someone edited the file with the sqlite3 shell) does not make the rest of
-- the database unreadable: the row is read without that field, and the damage is noted on the
-- store (self.damaged: { what =, id =, column =, why = }, one entry each) and reported through
-- self.warn(message), which writes "kreach: warning: <message>" to standard error unless the
-- caller set its own (kreach results collects them and exits 1 after writing what it read).
local function default_warn(msg) io.stderr:write("kreach: warning: ", msg, "\n") end

local function damage(self, what, id, column, why)
  local d = { what = what, id = id, column = column, why = tostring(why) }
  d.message = ("%s: %s %s: column '%s' cannot be read (%s); left out"):format(self.path, what,
    tostring(id), column, d.why)
  self.damaged[#self.damaged + 1] = d
  local warn = self.warn
  if warn == nil then warn = default_warn end
  if warn then warn(d.message) end
end

-- dec(self, row, what, column[, id]): the JSON column of a row decoded in place (nil stays nil;
-- text that does not decode is left out, and noted as `what id`, id the row's own by default).
local function dec(self, r, what, column, id)
  local v = r[column]
  if v == nil then return end
  if type(v) == "string" then
    local ok, x = pcall(json.decode, v)
    if ok then r[column] = x; return end
    v = x
  else
    v = ("a %s, not JSON text"):format(type(v))
  end
  r[column] = nil
  damage(self, what, id or r.id, column, v)
end

-- ---- helpers ----

local function now() return os.date("!%Y-%m-%dT%H:%M:%SZ") end
M.now = now -- ISO-8601 UTC, to the second

local function pid() return util.pid() end
local function hostname() return util.hostname() end

-- CUDA versions as the integers CUDA reports (13000 for 13.0); kreach.versions() gives "13.0".
local function cuda_int(v)
  if v == nil or v == false then return nil end
  if math.type(v) == "integer" then return v end
  local a, b = tostring(v):match("^(%d+)%.(%d+)")
  if a then return tonumber(a) * 1000 + tonumber(b) * 10 end
  return math.tointeger(tonumber(v))
end

local function need(t, field, kind, what)
  local v = t[field]
  if type(v) ~= kind or (kind == "string" and v == "") then
    error(("%s: '%s' must be a%s %s (got %s)"):format(what, field, kind == "integer" and "n" or "",
      kind, v == nil and "nil" or type(v)), 3)
  end
  return v
end

local function need_id(v, what)
  if math.type(v) ~= "integer" then
    error(("%s: an integer id expected, got %s"):format(what, v == nil and "nil" or math.type(v) or type(v)), 3)
  end
  return v
end

-- ---- the schema ----

-- The requests `kreach generate` made and their replies (issue 19): part of a new database's
-- schema, and MIGRATIONS[3]'s for an older one (hence IF NOT EXISTS, which SQLite leaves out of
-- the definition it keeps).
local GENERATIONS_SQL = [[
CREATE TABLE IF NOT EXISTS generations(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, created_at TEXT,
  model TEXT, provider TEXT, config_hash TEXT, suite TEXT, problem_id INTEGER, problem_name TEXT,
  sample INTEGER, turn INTEGER, format TEXT, prompt TEXT NOT NULL, request TEXT, response TEXT,
  status TEXT NOT NULL, error TEXT, reply TEXT, finish TEXT, request_id TEXT, input_tokens INTEGER,
  output_tokens INTEGER, cost_usd REAL, latency_s REAL, retries INTEGER, attempts INTEGER,
  candidate_file TEXT, candidate_hash TEXT);
CREATE INDEX IF NOT EXISTS generations_problem ON generations(suite, problem_id);
]]

local SCHEMA = [[
CREATE TABLE kreach_meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE runs(id INTEGER PRIMARY KEY, started_at TEXT, finished_at TEXT, status TEXT NOT NULL,
  command TEXT, config TEXT, config_hash TEXT NOT NULL, device TEXT, driver_version INTEGER,
  runtime_version INTEGER, nvrtc_version TEXT, kreach_version TEXT, kreach_revision TEXT,
  hostname TEXT, pid INTEGER);
CREATE TABLE problems(id INTEGER PRIMARY KEY, suite TEXT, problem_id INTEGER, name TEXT NOT NULL,
  path TEXT, file_hash TEXT NOT NULL, UNIQUE(name, file_hash));
CREATE TABLE candidates(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, path TEXT, name TEXT,
  source TEXT NOT NULL, origin TEXT);
]] .. evaluation.create_sql() .. [[
CREATE INDEX evaluations_eval_key ON evaluations(eval_key);
CREATE INDEX evaluations_run_id ON evaluations(run_id);
CREATE TABLE calibrations(id INTEGER PRIMARY KEY, device_uuid TEXT NOT NULL, device_name TEXT,
  measured_at TEXT, driver_version INTEGER, copy_bytes_per_s REAL, flops_per_s TEXT, details TEXT);
CREATE TABLE profiles(id INTEGER PRIMARY KEY, created_at TEXT, source TEXT NOT NULL, command TEXT,
  workload TEXT, knobs TEXT, device TEXT, wall_s REAL, window_start_ns INTEGER,
  window_end_ns INTEGER, dropped INTEGER, meta TEXT);
CREATE TABLE profile_kernels(profile_id INTEGER NOT NULL REFERENCES profiles(id), name TEXT NOT NULL,
  mangled TEXT, start_ns INTEGER, end_ns INTEGER, device INTEGER, stream INTEGER, grid TEXT,
  block TEXT, registers INTEGER, shared_bytes INTEGER, correlation INTEGER);
CREATE TABLE profile_memops(profile_id INTEGER NOT NULL REFERENCES profiles(id), kind TEXT,
  start_ns INTEGER, end_ns INTEGER, bytes INTEGER, copy_kind TEXT, device INTEGER, stream INTEGER);
CREATE TABLE profile_ranges(profile_id INTEGER NOT NULL REFERENCES profiles(id), name TEXT,
  start_ns INTEGER, end_ns INTEGER);
CREATE INDEX profile_kernels_profile ON profile_kernels(profile_id);
CREATE INDEX profile_memops_profile ON profile_memops(profile_id);
CREATE INDEX profile_ranges_profile ON profile_ranges(profile_id);
]] .. GENERATIONS_SQL

-- Migrations: MIGRATIONS[v] takes a database of version v - 1 to version v, inside the write
-- transaction of the first writer that opens it (a reader reads an older database as it is:
-- the columns it lacks read as absent).
--   2: PyTorch's times and the speedups against them (issue 17): the evaluations columns that
--      kreach.results.evaluation lists and version 1 had not.
--   3: the requests `kreach generate` made and their replies (issue 19): the generations table
--      (GENERATIONS_SQL, the schema's own definition).
M.MIGRATIONS = {
  [3] = function(exec_sql)
    for stmt in GENERATIONS_SQL:gmatch("[^;]+") do
      if stmt:match("%S") then exec_sql(stmt) end
    end
  end,
  [2] = function(exec_sql, query_sql)
    local have = {}
    for _, r in ipairs(query_sql("PRAGMA table_info(evaluations)")) do have[r.name] = true end
    for _, f in ipairs(evaluation.FIELDS) do
      if f.column and not have[f.name] then
        exec_sql(("ALTER TABLE evaluations ADD COLUMN %s %s"):format(f.name, f.column))
      end
    end
  end,
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
        if not have[c] and not (tbl.name == "evaluations" and v < 2 and V2_COLUMNS[c]) then
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

-- A failing statement raises "<path>: <sqlite's message>" as a kreach.errors database error
-- (exit status 3: the database cannot be used), never with a position.
local function exec(self, sql, ...)
  local n, err = self.sql:exec(sql, ...)
  if not n then errors.database("%s: %s", self.path, err) end
  return n
end

local function query(self, sql, ...)
  local rows, err = self.sql:query(sql, ...)
  if not rows then errors.database("%s: %s", self.path, err) end
  return rows
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

-- ---- runs ----

local function decode_run(self, r)
  if not r then return nil end
  for _, c in ipairs{ "command", "config", "device" } do dec(self, r, "run", c) end
  return r
end

-- begin_run{command=, config=, config_hash=, device=, versions = {driver=, runtime=, nvrtc=},
--           kreach_version=, kreach_revision=} -> run id
function Store:begin_run(r)
  need(r, "config_hash", "string", "begin_run")
  local v = r.versions or {}
  local kv, krev = core.version:match("^(%S+)%s*%(?([^)]*)%)?")
  exec(self, [[INSERT INTO runs(started_at, status, command, config, config_hash, device,
      driver_version, runtime_version, nvrtc_version, kreach_version, kreach_revision, hostname, pid)
      VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)]],
    now(), enc(r.command), enc(r.config), r.config_hash, enc(r.device), cuda_int(v.driver),
    cuda_int(v.runtime), v.nvrtc and tostring(v.nvrtc) or nil, r.kreach_version or kv,
    r.kreach_revision or (krev ~= "" and krev or nil), hostname(), pid())
  return self.sql:last_insert_rowid()
end

local RUN_END = { finished = true, failed = true }

function Store:finish_run(run_id, status)
  need_id(run_id, "finish_run")
  if not RUN_END[status] then
    error(("finish_run: status must be 'finished' or 'failed' (got %s)"):format(tostring(status)), 2)
  end
  if exec(self, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", status, now(), run_id) == 0 then
    error(("finish_run: no run %d in %s"):format(run_id, self.path), 2)
  end
end

function Store:get_run(run_id)
  need_id(run_id, "get_run")
  return decode_run(self, query(self, "SELECT * FROM runs WHERE id = ?", run_id)[1])
end

-- latest_run{config_hash=, status=} -> the newest matching run, or nil
function Store:latest_run(q)
  need(q, "config_hash", "string", "latest_run")
  local rows
  if q.status then
    rows = query(self, "SELECT * FROM runs WHERE config_hash = ? AND status = ? ORDER BY id DESC LIMIT 1",
      q.config_hash, q.status)
  else
    rows = query(self, "SELECT * FROM runs WHERE config_hash = ? ORDER BY id DESC LIMIT 1", q.config_hash)
  end
  return decode_run(self, rows[1])
end

-- runs() -> every run, in id order
function Store:runs()
  local rows = query(self, "SELECT * FROM runs ORDER BY id")
  for _, r in ipairs(rows) do decode_run(self, r) end
  return rows
end

-- reopen_run(id): a resumed run is 'running' again, under this process
function Store:reopen_run(run_id)
  need_id(run_id, "reopen_run")
  if exec(self, "UPDATE runs SET status = 'running', finished_at = NULL, pid = ?, hostname = ? WHERE id = ?",
      pid(), hostname(), run_id) == 0 then
    error(("reopen_run: no run %d in %s"):format(run_id, self.path), 2)
  end
end

-- ---- problems and candidates ----

function Store:problem_ref(p)
  need(p, "name", "string", "problem_ref")
  need(p, "file_hash", "string", "problem_ref")
  exec(self, [[INSERT INTO problems(suite, problem_id, name, path, file_hash) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT(name, file_hash) DO NOTHING]], p.suite, p.problem_id, p.name, p.path, p.file_hash)
  return query(self, "SELECT id FROM problems WHERE name = ? AND file_hash = ?", p.name, p.file_hash)[1].id
end

function Store:candidate_ref(c)
  need(c, "hash", "string", "candidate_ref")
  need(c, "source", "string", "candidate_ref")
  exec(self, [[INSERT INTO candidates(hash, path, name, source, origin) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT(hash) DO NOTHING]], c.hash, c.path, c.name, c.source, enc(c.origin))
  return query(self, "SELECT id FROM candidates WHERE hash = ?", c.hash)[1].id
end

-- ---- evaluations ----

-- record_evaluation(e) -> id: the problem and candidate rows and the evaluation (a record of
-- kreach.results.evaluation: its columns are that module's), in one transaction, committed before it
-- returns (inside a caller's transaction it joins that one). e.problem and e.candidate (nil for
-- a baseline timed alone) are the rows it refers to.
function Store:record_evaluation(e)
  need_id(e.run_id, "record_evaluation: run_id")
  if type(e.problem) ~= "table" then error("record_evaluation: 'problem' must be a table", 2) end
  if e.candidate ~= nil and type(e.candidate) ~= "table" then
    error("record_evaluation: 'candidate' must be a table or nil", 2)
  end
  need(e, "eval_key", "string", "record_evaluation")
  need(e, "dtype", "string", "record_evaluation")
  need(e, "verdict", "string", "record_evaluation")
  return self:transaction(function()
    local row = setmetatable({ problem_ref = self:problem_ref(e.problem),
                               candidate_ref = e.candidate and self:candidate_ref(e.candidate) or nil },
                             { __index = e })
    if row.finished_at == nil then row.finished_at = now() end
    local sql, values, n = evaluation.insert_sql(row)
    exec(self, sql, table.unpack(values, 1, n))
    return self.sql:last_insert_rowid()
  end)
end

local EVAL_SELECT = evaluation.select_sql()

-- What each kind of field reads as from SQLite (a NULL is nil, and always fine).
local KIND_OK = {
  integer = function(v) return math.type(v) == "integer" end,
  real = function(v) return type(v) == "number" end,
  bool = function(v) return type(v) == "number" end,
  text = function(v) return type(v) == "string" end,
  json = function(v) return type(v) == "string" end,
}

-- An evaluation row as kreach.results.evaluation decodes it; a field that does not read as its kind
-- (JSON that does not decode, a text where a number belongs) is left out, and noted.
local function decode_eval(self, r)
  if not r then return nil end
  for _, f in ipairs(evaluation.FIELDS) do
    local v = r[f.name]
    if v ~= nil and not KIND_OK[f.kind](v) then
      r[f.name] = nil
      damage(self, "evaluation", r.id, f.name, ("a %s where %s %s belongs"):format(math.type(v) or type(v),
        f.kind == "integer" and "an" or "a", f.kind == "json" and "JSON text" or f.kind))
    end
  end
  return evaluation.decode(r, function(name, why) damage(self, "evaluation", r.id, name, why) end)
end

-- find_evaluation(eval_key) -> the newest evaluation with this key, or nil
function Store:find_evaluation(key)
  if type(key) ~= "string" then error("find_evaluation: eval_key must be a string", 2) end
  return decode_eval(self, query(self, EVAL_SELECT .. " WHERE e.eval_key = ? ORDER BY e.id DESC LIMIT 1", key)[1])
end

-- evaluations{run_id=, eval_keys={...}} -> decoded rows in id order
function Store:evaluations(q)
  q = q or {}
  local where, args = {}, {}
  if q.run_id ~= nil then
    need_id(q.run_id, "evaluations: run_id")
    where[#where + 1] = "e.run_id = ?"
    args[#args + 1] = q.run_id
  end
  if q.eval_keys ~= nil then
    if type(q.eval_keys) ~= "table" then error("evaluations: eval_keys must be a list", 2) end
    where[#where + 1] = "e.eval_key IN (SELECT value FROM json_each(?))"
    args[#args + 1] = json.encode(#q.eval_keys > 0 and q.eval_keys or {})
  end
  local sql = EVAL_SELECT .. (#where > 0 and (" WHERE " .. table.concat(where, " AND ")) or "") .. " ORDER BY e.id"
  local rows = query(self, sql, table.unpack(args, 1, #args))
  for _, r in ipairs(rows) do decode_eval(self, r) end
  return rows
end

-- ---- calibrations ----

function Store:save_calibration(c)
  need(c, "device_uuid", "string", "save_calibration")
  exec(self, [[INSERT INTO calibrations(device_uuid, device_name, measured_at, driver_version,
      copy_bytes_per_s, flops_per_s, details) VALUES (?, ?, ?, ?, ?, ?, ?)]],
    c.device_uuid, c.device_name, c.measured_at or now(), cuda_int(c.driver_version),
    c.copy_bytes_per_s, enc(c.flops_per_s), enc(c.details))
  return self.sql:last_insert_rowid()
end

function Store:calibration(uuid)
  if type(uuid) ~= "string" then error("calibration: a device uuid string expected", 2) end
  local r = query(self, "SELECT * FROM calibrations WHERE device_uuid = ? ORDER BY id DESC LIMIT 1", uuid)[1]
  if r then dec(self, r, "calibration", "flops_per_s"); dec(self, r, "calibration", "details") end
  return r
end

-- ---- profiles ----

local function decode_profile(self, r)
  for _, c in ipairs{ "command", "knobs", "device", "meta" } do dec(self, r, "profile", c) end
  -- the window as kreach.profile.trace has it: {start_ns, end_ns}
  if r.window_start_ns or r.window_end_ns then r.window = { r.window_start_ns, r.window_end_ns } end
  return r
end

-- save_profile(trace) -> id: the profile and all its kernels, memory operations and ranges, in
-- one transaction. trace.window is {start_ns, end_ns} ({start_ns =, end_ns =} is read too).
function Store:save_profile(t)
  need(t, "source", "string", "save_profile")
  local w = t.window or {}
  return self:transaction(function()
    exec(self, [[INSERT INTO profiles(created_at, source, command, workload, knobs, device, wall_s,
        window_start_ns, window_end_ns, dropped, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)]],
      t.created_at or now(), t.source, enc(t.command), t.workload, enc(t.knobs), enc(t.device), t.wall_s,
      w.start_ns or w[1], w.end_ns or w[2], t.dropped, enc(t.meta))
    local id = self.sql:last_insert_rowid()
    local db = self.sql
    local function put(sql, ...)
      local ok, err = db:exec(sql, ...)
      if not ok then error(("%s: %s"):format(self.path, err), 0) end
    end
    for i, k in ipairs(t.kernels or {}) do
      if type(k.name) ~= "string" then error(("save_profile: kernel %d has no name"):format(i), 0) end
      put([[INSERT INTO profile_kernels(profile_id, name, mangled, start_ns, end_ns, device, stream,
          grid, block, registers, shared_bytes, correlation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)]],
        id, k.name, k.mangled, k.start_ns, k.end_ns, k.device, k.stream, enc(k.grid), enc(k.block),
        k.registers, k.shared_bytes, k.correlation)
    end
    for _, m in ipairs(t.memops or {}) do
      put([[INSERT INTO profile_memops(profile_id, kind, start_ns, end_ns, bytes, copy_kind, device, stream)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)]], id, m.kind, m.start_ns, m.end_ns, m.bytes, m.copy_kind, m.device, m.stream)
    end
    for _, r in ipairs(t.ranges or {}) do
      put("INSERT INTO profile_ranges(profile_id, name, start_ns, end_ns) VALUES (?, ?, ?, ?)",
        id, r.name, r.start_ns, r.end_ns)
    end
    return id
  end)
end

-- load_profile(id) -> the trace as saved (plus id and created_at), or nil
function Store:load_profile(id)
  need_id(id, "load_profile")
  local r = query(self, "SELECT * FROM profiles WHERE id = ?", id)[1]
  if not r then return nil end
  decode_profile(self, r)
  local t = { id = r.id, created_at = r.created_at, source = r.source, command = r.command,
              workload = r.workload, knobs = r.knobs, device = r.device, wall_s = r.wall_s,
              window = r.window, dropped = r.dropped, meta = r.meta }
  t.kernels = query(self, [[SELECT name, mangled, start_ns, end_ns, device, stream, grid, block, registers,
      shared_bytes, correlation FROM profile_kernels WHERE profile_id = ? ORDER BY rowid]], id)
  local what = ("profile %d kernel"):format(id)
  for i, k in ipairs(t.kernels) do
    dec(self, k, what, "grid", i)
    dec(self, k, what, "block", i)
  end
  t.memops = query(self, [[SELECT kind, start_ns, end_ns, bytes, copy_kind, device, stream
      FROM profile_memops WHERE profile_id = ? ORDER BY rowid]], id)
  t.ranges = query(self, "SELECT name, start_ns, end_ns FROM profile_ranges WHERE profile_id = ? ORDER BY rowid", id)
  return t
end

-- profiles() -> the profile rows (decoded, with n_kernels), in id order
function Store:profiles()
  local rows = query(self, [[SELECT p.*, (SELECT count(*) FROM profile_kernels k WHERE k.profile_id = p.id)
      AS n_kernels FROM profiles p ORDER BY p.id]])
  for _, r in ipairs(rows) do decode_profile(self, r) end
  return rows
end


-- ---- generations (kreach generate) ----

local GEN_COLUMNS = { "key", "created_at", "model", "provider", "config_hash", "suite", "problem_id", "problem_name",
                      "sample", "turn", "format", "prompt", "request", "response", "status", "error", "reply",
                      "finish", "request_id", "input_tokens", "output_tokens", "cost_usd", "latency_s", "retries",
                      "attempts", "candidate_file", "candidate_hash" }

-- save_generation(g) -> id: a request and its outcome, replacing an earlier one with the same
-- key (--refresh). g.request is a table (JSON-encoded here) that must not hold the API key.
function Store:save_generation(g)
  need(g, "key", "string", "save_generation")
  need(g, "prompt", "string", "save_generation")
  need(g, "status", "string", "save_generation")
  local vals = {}
  for i, c in ipairs(GEN_COLUMNS) do
    local v = g[c]
    if c == "request" then v = enc(v) end
    if c == "created_at" then v = v or now() end
    vals[i] = v
  end
  local marks = {}
  for i = 1, #GEN_COLUMNS do marks[i] = "?" end
  return self:transaction(function()
    exec(self, "DELETE FROM generations WHERE key = ?", g.key)
    exec(self, ("INSERT INTO generations(%s) VALUES (%s)"):format(table.concat(GEN_COLUMNS, ", "), table.concat(marks, ", ")),
      table.unpack(vals, 1, #GEN_COLUMNS))
    return self.sql:last_insert_rowid()
  end)
end

-- find_generation(key) -> the stored generation with this key (request decoded), or nil
function Store:find_generation(key)
  if type(key) ~= "string" then error("find_generation: key must be a string", 2) end
  local r = query(self, "SELECT * FROM generations WHERE key = ?", key)[1]
  if r then dec(self, r, "generation", "request") end
  return r
end

-- generation_list() -> what `kreach results generations` lists: each stored generation's
-- columns without the texts (no prompt, request, response or reply), in id order; {} for a
-- database of a version before the generations table (2). Read-only.
local GEN_LIST_COLUMNS = { "id", "key", "created_at", "model", "provider", "suite", "problem_id", "problem_name",
                           "sample", "turn", "format", "status", "error", "finish", "input_tokens", "output_tokens",
                           "cost_usd", "latency_s", "retries", "attempts", "candidate_file", "candidate_hash" }
function Store:generation_list()
  if not query(self, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'generations'")[1] then return {} end
  return query(self, ("SELECT %s FROM generations ORDER BY id"):format(table.concat(GEN_LIST_COLUMNS, ", ")))
end

-- generations{model =} -> the stored generations, in id order (request decoded)
function Store:generations(q)
  q = q or {}
  local rows
  if q.model then rows = query(self, "SELECT * FROM generations WHERE model = ? ORDER BY id", q.model)
  else rows = query(self, "SELECT * FROM generations ORDER BY id") end
  for _, r in ipairs(rows) do dec(self, r, "generation", "request") end
  return rows
end

return M
