-- kreach.results.store.runs: the runs table of the results database (one row per kreach eval,
-- bench or campaign run: its command, configuration and hash, device and versions, status), its
-- CREATE statement and its methods, installed on the store by kreach.results.store.
local core = require "kreach.core"
local common = require "kreach.results.store.common"

local enc, dec, now, need, need_id = common.enc, common.dec, common.now, common.need, common.need_id
local cuda_int, pid, hostname = common.cuda_int, common.pid, common.hostname
local exec, query = common.exec, common.query

local M = { SQL = [[
CREATE TABLE runs(id INTEGER PRIMARY KEY, started_at TEXT, finished_at TEXT, status TEXT NOT NULL,
  command TEXT, config TEXT, config_hash TEXT NOT NULL, device TEXT, driver_version INTEGER,
  runtime_version INTEGER, nvrtc_version TEXT, kreach_version TEXT, kreach_revision TEXT,
  hostname TEXT, pid INTEGER);
]] }
local T = {}
M.methods = T

local function decode_run(self, r)
  if not r then return nil end
  for _, c in ipairs{ "command", "config", "device" } do dec(self, r, "run", c) end
  return r
end

-- begin_run{command=, config=, config_hash=, device=, versions = {driver=, runtime=, nvrtc=},
--           kreach_version=, kreach_revision=} -> run id
function T:begin_run(r)
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

function T:finish_run(run_id, status)
  need_id(run_id, "finish_run")
  if not RUN_END[status] then
    error(("finish_run: status must be 'finished' or 'failed' (got %s)"):format(tostring(status)), 2)
  end
  if exec(self, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", status, now(), run_id) == 0 then
    error(("finish_run: no run %d in %s"):format(run_id, self.path), 2)
  end
end

function T:get_run(run_id)
  need_id(run_id, "get_run")
  return decode_run(self, query(self, "SELECT * FROM runs WHERE id = ?", run_id)[1])
end

-- latest_run{config_hash=, status=} -> the newest matching run, or nil
function T:latest_run(q)
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
function T:runs()
  local rows = query(self, "SELECT * FROM runs ORDER BY id")
  for _, r in ipairs(rows) do decode_run(self, r) end
  return rows
end

-- reopen_run(id): a resumed run is 'running' again, under this process
function T:reopen_run(run_id)
  need_id(run_id, "reopen_run")
  if exec(self, "UPDATE runs SET status = 'running', finished_at = NULL, pid = ?, hostname = ? WHERE id = ?",
      pid(), hostname(), run_id) == 0 then
    error(("reopen_run: no run %d in %s"):format(run_id, self.path), 2)
  end
end

-- import_run{id =, command =, config =, config_hash =, device =} -> run id: the run an import's rows point
-- at (kreach.results.import): status 'imported', started and finished now; the id asked for
-- when no run has it yet. Its config says what was imported (the file, its hash, the harness).
function T:import_run(r)
  need(r, "config_hash", "string", "import_run")
  local id = r.id
  if math.type(id) ~= "integer" or #query(self, "SELECT 1 FROM runs WHERE id = ?", id) > 0 then id = nil end
  local kv, krev = core.version:match("^(%S+)%s*%(?([^)]*)%)?")
  local t = now()
  exec(self, [[INSERT INTO runs(id, started_at, finished_at, status, command, config, config_hash, device,
      kreach_version, kreach_revision, hostname, pid) VALUES (?, ?, ?, 'imported', ?, ?, ?, ?, ?, ?, ?, ?)]],
    id, t, t, enc(r.command), enc(r.config), r.config_hash, enc(r.device), kv, krev ~= "" and krev or nil,
    hostname(), pid())
  return self.sql:last_insert_rowid()
end

-- run_counts() -> run id -> the number of evaluations it recorded
function T:run_counts()
  local counts = {}
  for _, r in ipairs(query(self, "SELECT run_id, count(*) AS n FROM evaluations GROUP BY run_id")) do
    counts[r.run_id] = r.n
  end
  return counts
end

return M
