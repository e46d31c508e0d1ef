-- kreach.results.store.profiles: the profiles table of the results database and the tables of a
-- profile's records (profile_kernels, profile_memops, profile_ranges): their CREATE statements
-- and indexes and their methods (kreach profile saves and reads traces through them), installed
-- on the store by kreach.results.store.
local common = require "kreach.results.store.common"

local enc, dec, now, need, need_id = common.enc, common.dec, common.now, common.need, common.need_id
local exec, query = common.exec, common.query

local M = { SQL = [[
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
]] }
local T = {}
M.methods = T

local function decode_profile(self, r)
  for _, c in ipairs{ "command", "knobs", "device", "meta" } do dec(self, r, "profile", c) end
  -- the window as kreach.profile.trace has it: {start_ns, end_ns}
  if r.window_start_ns or r.window_end_ns then r.window = { r.window_start_ns, r.window_end_ns } end
  return r
end

-- save_profile(trace) -> id: the profile and all its kernels, memory operations and ranges, in
-- one transaction. trace.window is {start_ns, end_ns} ({start_ns =, end_ns =} is read too).
function T:save_profile(t)
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
function T:load_profile(id)
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
function T:profiles()
  local rows = query(self, [[SELECT p.*, (SELECT count(*) FROM profile_kernels k WHERE k.profile_id = p.id)
      AS n_kernels FROM profiles p ORDER BY p.id]])
  for _, r in ipairs(rows) do decode_profile(self, r) end
  return rows
end

return M
