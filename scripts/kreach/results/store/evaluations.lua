-- kreach.results.store.evaluations: the evaluations table of the results database (one row per
-- judged candidate or timed baseline; its columns are kreach.results.evaluation's FIELDS), its
-- CREATE statement and indexes, the migration that added PyTorch's columns (version 2), and its
-- methods, installed on the store by kreach.results.store.
local evaluation = require "kreach.results.evaluation"
local common = require "kreach.results.store.common"

local json, now, need, need_id = common.json, common.now, common.need, common.need_id
local damage, exec, query = common.damage, common.exec, common.query

local M = { SQL = evaluation.create_sql() .. [[
CREATE INDEX evaluations_eval_key ON evaluations(eval_key);
CREATE INDEX evaluations_run_id ON evaluations(run_id);
]] }
local T = {}
M.methods = T

-- MIGRATION(exec_sql, query_sql): version 1 to 2, PyTorch's times and the speedups against them
-- (issue 17): the evaluations columns that kreach.results.evaluation lists and version 1 had not.
function M.MIGRATION(exec_sql, query_sql)
  local have = {}
  for _, r in ipairs(query_sql("PRAGMA table_info(evaluations)")) do have[r.name] = true end
  for _, f in ipairs(evaluation.FIELDS) do
    if f.column and not have[f.name] then
      exec_sql(("ALTER TABLE evaluations ADD COLUMN %s %s"):format(f.name, f.column))
    end
  end
end

-- MIGRATION_4(exec_sql, query_sql): version 3 to 4, where an evaluation came from (issue 36):
-- the columns model, harness, measured_here, source_file and source_hash; every row stored
-- before was kreach's own (measured_here = 1), its model its candidate's origin's, if any.
function M.MIGRATION_4(exec_sql, query_sql)
  M.MIGRATION(exec_sql, query_sql)
  exec_sql("UPDATE evaluations SET measured_here = 1 WHERE measured_here IS NULL AND harness IS NULL")
  exec_sql([[UPDATE evaluations SET model = (SELECT json_extract(c.origin, '$.model') FROM candidates c
      WHERE c.id = evaluations.candidate_ref AND json_valid(c.origin)
        AND json_type(c.origin, '$.model') = 'text') WHERE model IS NULL]])
end

-- record_evaluation(e) -> id: the problem and candidate rows and the evaluation (a record of
-- kreach.results.evaluation: its columns are that module's), in one transaction, committed before it
-- returns (inside a caller's transaction it joins that one). e.problem and e.candidate (nil for
-- a baseline timed alone) are the rows it refers to.
function T:record_evaluation(e)
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
    -- kreach's own, unless an import says where it came from; the model its candidate's origin's
    if row.measured_here == nil then row.measured_here = row.harness == nil end
    local origin = e.origin or (e.candidate and e.candidate.origin)
    if row.model == nil and type(origin) == "table" and type(origin.model) == "string" then
      row.model = origin.model
    end
    local sql, values, n = evaluation.insert_sql(row)
    exec(self, sql, table.unpack(values, 1, n))
    return self.sql:last_insert_rowid()
  end)
end

-- import_evaluation(e) -> id: as record_evaluation, for a row kreach.results.import read from
-- another harness's results or from a kreach export: its id (e.id), its problem's and its
-- candidate's (e.problem.id, e.candidate.id) are kept where this database has no row with
-- that id yet, else new ones are given. e.harness names where it came from; measured_here is
-- false.
function T:import_evaluation(e)
  need_id(e.run_id, "import_evaluation: run_id")
  need(e, "eval_key", "string", "import_evaluation")
  need(e, "dtype", "string", "import_evaluation")
  need(e, "verdict", "string", "import_evaluation")
  need(e, "harness", "string", "import_evaluation")
  return self:transaction(function()
    local keep = e.id ~= nil and #query(self, "SELECT 1 FROM evaluations WHERE id = ?", e.id) == 0
    local row = setmetatable({ problem_ref = self:problem_ref(e.problem),
                               candidate_ref = e.candidate and self:candidate_ref(e.candidate) or nil,
                               measured_here = false, id = keep and e.id or nil },
                             { __index = e })
    local sql, values, n = evaluation.insert_sql(row, keep)
    exec(self, sql, table.unpack(values, 1, n))
    return self.sql:last_insert_rowid()
  end)
end

-- count_evaluations(eval_key) -> the number of evaluations stored with this key
function T:count_evaluations(key)
  return query(self, "SELECT count(*) AS n FROM evaluations WHERE eval_key = ?", key)[1].n
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
function T:find_evaluation(key)
  if type(key) ~= "string" then error("find_evaluation: eval_key must be a string", 2) end
  return decode_eval(self, query(self, EVAL_SELECT .. " WHERE e.eval_key = ? ORDER BY e.id DESC LIMIT 1", key)[1])
end

-- evaluations{run_id=, eval_keys={...}} -> decoded rows in id order
function T:evaluations(q)
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

-- verdicts() -> the evaluation kreach eval stored for each candidate, by candidate hash (a
-- correct one wins over the others): what kreach generate sends back and counts
function T:verdicts()
  local v = {}
  for _, e in ipairs(self:evaluations{}) do
    if e.candidate_hash and e.verdict and (not v[e.candidate_hash] or e.verdict == "correct") then v[e.candidate_hash] = e end
  end
  return v
end

return M
