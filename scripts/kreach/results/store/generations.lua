-- kreach.results.store.generations: the generations table of the results database (every request
-- kreach generate made and its reply, keyed so that an identical request is answered from here),
-- its CREATE statement, the migration that added it (version 3), and its methods, installed on
-- the store by kreach.results.store.
local common = require "kreach.results.store.common"

local enc, dec, now, need = common.enc, common.dec, common.now, common.need
local exec, query = common.exec, common.query

local M = {}
local T = {}
M.methods = T

-- The requests `kreach generate` made and their replies (issue 19): part of a new database's
-- schema, and MIGRATIONS[3]'s for an older one (hence IF NOT EXISTS, which SQLite leaves out of
-- the definition it keeps).
M.SQL = [[
CREATE TABLE IF NOT EXISTS generations(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, created_at TEXT,
  model TEXT, provider TEXT, config_hash TEXT, suite TEXT, problem_id INTEGER, problem_name TEXT,
  sample INTEGER, turn INTEGER, format TEXT, prompt TEXT NOT NULL, request TEXT, response TEXT,
  status TEXT NOT NULL, error TEXT, reply TEXT, finish TEXT, request_id TEXT, input_tokens INTEGER,
  output_tokens INTEGER, cost_usd REAL, latency_s REAL, retries INTEGER, attempts INTEGER,
  candidate_file TEXT, candidate_hash TEXT);
CREATE INDEX IF NOT EXISTS generations_problem ON generations(suite, problem_id);
]]

-- MIGRATION(exec_sql): version 2 to 3, the generations table (M.SQL, the schema's own definition).
function M.MIGRATION(exec_sql)
  for stmt in M.SQL:gmatch("[^;]+") do
    if stmt:match("%S") then exec_sql(stmt) end
  end
end

local GEN_COLUMNS = { "key", "created_at", "model", "provider", "config_hash", "suite", "problem_id", "problem_name",
                      "sample", "turn", "format", "prompt", "request", "response", "status", "error", "reply",
                      "finish", "request_id", "input_tokens", "output_tokens", "cost_usd", "latency_s", "retries",
                      "attempts", "candidate_file", "candidate_hash" }

-- save_generation(g) -> id: a request and its outcome, replacing an earlier one with the same
-- key (--refresh). g.request is a table (JSON-encoded here) that must not hold the API key.
function T:save_generation(g)
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
function T:find_generation(key)
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
function T:generation_list()
  if not query(self, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'generations'")[1] then return {} end
  return query(self, ("SELECT %s FROM generations ORDER BY id"):format(table.concat(GEN_LIST_COLUMNS, ", ")))
end

-- generations{model =} -> the stored generations, in id order (request decoded)
function T:generations(q)
  q = q or {}
  local rows
  if q.model then rows = query(self, "SELECT * FROM generations WHERE model = ? ORDER BY id", q.model)
  else rows = query(self, "SELECT * FROM generations ORDER BY id") end
  for _, r in ipairs(rows) do dec(self, r, "generation", "request") end
  return rows
end


return M
