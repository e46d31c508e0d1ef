-- kreach.results.store.refs: the problems and candidates tables of the results database (each
-- problem file and candidate source an evaluation refers to, stored once by name and hash, or by
-- hash), their CREATE statements and their methods, installed on the store by
-- kreach.results.store.
local common = require "kreach.results.store.common"

local enc, need = common.enc, common.need
local exec, query = common.exec, common.query

local M = { SQL = [[
CREATE TABLE problems(id INTEGER PRIMARY KEY, suite TEXT, problem_id INTEGER, name TEXT NOT NULL,
  path TEXT, file_hash TEXT NOT NULL, UNIQUE(name, file_hash));
CREATE TABLE candidates(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, path TEXT, name TEXT,
  source TEXT NOT NULL, origin TEXT);
]] }
local T = {}
M.methods = T

-- An id the caller would like a new row to have (p.id, c.id: kreach results import keeps an
-- imported row's), when no row of the table has it yet; else nil (SQLite gives one).
local function free_id(self, tbl, id)
  if math.type(id) ~= "integer" then return nil end
  if #query(self, ("SELECT 1 FROM %s WHERE id = ?"):format(tbl), id) > 0 then return nil end
  return id
end

function T:problem_ref(p)
  need(p, "name", "string", "problem_ref")
  need(p, "file_hash", "string", "problem_ref")
  exec(self, [[INSERT INTO problems(id, suite, problem_id, name, path, file_hash) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT(name, file_hash) DO NOTHING]], free_id(self, "problems", p.id), p.suite, p.problem_id,
    p.name, p.path, p.file_hash)
  return query(self, "SELECT id FROM problems WHERE name = ? AND file_hash = ?", p.name, p.file_hash)[1].id
end

-- c.source may be empty for an imported candidate whose source the results file did not hold
-- (KernelBench's eval_results.json has none)
function T:candidate_ref(c)
  need(c, "hash", "string", "candidate_ref")
  if type(c.source) ~= "string" or (c.source == "" and not c.imported) then need(c, "source", "string", "candidate_ref") end
  exec(self, [[INSERT INTO candidates(id, hash, path, name, source, origin) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT(hash) DO NOTHING]], free_id(self, "candidates", c.id), c.hash, c.path, c.name, c.source,
    enc(c.origin))
  return query(self, "SELECT id FROM candidates WHERE hash = ?", c.hash)[1].id
end

return M
