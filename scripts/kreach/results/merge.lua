-- kreach.results.merge: shards of one study combined into a new results database (`kreach
-- results merge A.db B.db ... -o OUT.db`, docs/results.md, "Merging shards").
--
-- Every run of every input is kept (renumbered in the output; a run that two shards both hold,
-- the same in every column but its id, is kept once), and each evaluation points at its run's
-- new id. An evaluation key (eval_key: the problem, the candidate and the configuration) that an
-- earlier input holds is left out of a later one: the overlap is counted once; evaluations of
-- one key within one input are all kept (a re-evaluation). A key whose problem has another hash
-- in another input (the shards were not of the same problem files) is refused, naming the key.
-- The problems and candidates are stored once each (by name and hash, by hash); generations
-- once each (by their key); calibrations and profiles are copied, identical ones once.
--
-- The inputs are opened read-only and never written. The output is a fresh file: it is built
-- beside its path under a temporary name in one transaction, and renamed into place when
-- everything is in; an error leaves no output at all. An output that exists, or that names an
-- input (or its -wal, -shm), is refused before anything is read.
local lfs = require "lfs"
local errors = require "kreach.errors"
local atomic = require "kreach.atomic"
local json = require "kreach.json"
local util = require "kreach.core.util"
local store = require "kreach.results.store"

local M = {}

local function same_file(a, b)
  local x, y = lfs.attributes(a), lfs.attributes(b)
  return x and y and x.dev == y.dev and x.ino == y.ino
end

-- check(inputs, out): usage errors before anything is read
function M.check(inputs, out)
  if #inputs == 0 then errors.usage("merge: name the databases to merge") end
  local seen = {}
  for _, p in ipairs(inputs) do
    for _, f in ipairs(atomic.database_files(out)) do
      for _, q in ipairs(atomic.database_files(p)) do
        if f == q or same_file(f, q) then
          errors.usage("refusing to write %s: it is the input %s (merge writes a new database: choose another -o)", out, p)
        end
      end
    end
    local r = atomic.database_files(p)[1] or p
    if seen[r] then errors.usage("%s is named twice", p) end
    seen[r] = true
  end
  if lfs.attributes(out) then
    errors.usage("refusing to write %s: it exists (merge writes a new database: remove it or choose another -o)", out)
  end
end

local function q(db, sql, ...)
  local rows, err = db.sql:query(sql, ...)
  if not rows then errors.database("%s: %s", db.path, err) end
  return rows
end

local function x(db, sql, ...)
  local n, err = db.sql:exec(sql, ...)
  if not n then errors.database("%s: %s", db.path, err) end
  return n
end

-- The tables of an input that are there (an older schema version lacks some).
local function tables_of(db)
  local t = {}
  for _, r in ipairs(q(db, "SELECT name FROM sqlite_schema WHERE type = 'table'")) do t[r.name] = true end
  return t
end

-- The output's columns of a table, in order (its schema is this kreach's).
local columns_cache = {}
local function columns(out, tbl)
  if not columns_cache[tbl] then
    local c = {}
    for _, r in ipairs(q(out, ("PRAGMA table_info(%s)"):format(tbl))) do c[#c + 1] = r.name end
    columns_cache[tbl] = c
  end
  return columns_cache[tbl]
end

-- insert(out, tbl, row, set, conflict) -> the new row's id and the number of rows inserted (0
-- where `conflict` left it out): row's columns but id (those the input lacks are NULL), `set`
-- overriding some
local function insert(out, tbl, row, set, conflict)
  local names, marks, values = {}, {}, {}
  for _, c in ipairs(columns(out, tbl)) do
    if c ~= "id" then
      local n = #names + 1
      local v = row[c]
      if set and set[c] ~= nil then v = set[c] end
      names[n], marks[n], values[n] = c, "?", v
    end
  end
  local changed = x(out, ("INSERT INTO %s(%s) VALUES (%s)%s"):format(tbl, table.concat(names, ", "), table.concat(marks, ", "),
    conflict or ""), table.unpack(values, 1, #names))
  return out.sql:last_insert_rowid(), changed
end

-- The identity of a row but its id (and the columns named in `but`): its columns as JSON.
local function identity(row, but)
  local t = {}
  for k, v in pairs(row) do
    if k ~= "id" and not (but and but[k]) then t[k] = v end
  end
  return json.encode(t)
end

-- merge_into(out, db, st): one input (db, read-only) into the output store; st holds what the
-- earlier inputs left: keys (eval_key -> { hash =, input =, problem = }), runs (identity -> id)
local function merge_into(out, db, st)
  local have = tables_of(db)
  local n = { runs = 0, evaluations = 0, duplicates = 0, runs_shared = 0, generations = 0, generations_shared = 0 }
  local runmap = {}
  for _, r in ipairs(q(db, "SELECT * FROM runs ORDER BY id")) do
    local key = identity(r)
    if st.runs[key] then
      runmap[r.id] = st.runs[key]
      n.runs_shared = n.runs_shared + 1
    else
      runmap[r.id] = insert(out, "runs", r)
      st.runs[key] = runmap[r.id]
      n.runs = n.runs + 1
    end
  end
  local problems, pmap = {}, {}
  for _, p in ipairs(q(db, "SELECT * FROM problems")) do
    problems[p.id] = p
    pmap[p.id] = out:problem_ref{ suite = p.suite, problem_id = p.problem_id, name = p.name, path = p.path,
                                   file_hash = p.file_hash }
  end
  local cmap = {}
  for _, c in ipairs(q(db, "SELECT * FROM candidates")) do
    insert(out, "candidates", c, nil, " ON CONFLICT(hash) DO NOTHING")
    cmap[c.id] = q(out, "SELECT id FROM candidates WHERE hash = ?", c.hash)[1].id
  end
  for _, e in ipairs(q(db, "SELECT * FROM evaluations ORDER BY id")) do
    local p = problems[e.problem_ref]
    local hash = p and p.file_hash or "?"
    local k = st.keys[e.eval_key]
    if k and k.hash ~= hash then
      errors.load("evaluation key %s: problem %s has hash %s in %s but problem %s has hash %s in %s: "
        .. "the shards are not of the same problem files (not one study); nothing was written",
        e.eval_key, k.problem, k.hash, k.input, p and p.name or "?", hash, db.path)
    end
    if k and k.input ~= db.path then
      n.duplicates = n.duplicates + 1
    else
      if not k then st.keys[e.eval_key] = { hash = hash, input = db.path, problem = p and p.name or "?" } end
      local own = e.measured_here
      if own == nil and e.harness == nil then own = 1 end -- a row of an older schema: kreach's own
      insert(out, "evaluations", e, { run_id = runmap[e.run_id], problem_ref = pmap[e.problem_ref],
        candidate_ref = e.candidate_ref and cmap[e.candidate_ref] or nil, measured_here = own })
      n.evaluations = n.evaluations + 1
    end
  end
  if have.generations then
    for _, g in ipairs(q(db, "SELECT * FROM generations ORDER BY id")) do
      local _, added = insert(out, "generations", g, nil, " ON CONFLICT(key) DO NOTHING")
      if added > 0 then n.generations = n.generations + 1 else n.generations_shared = n.generations_shared + 1 end
    end
  end
  for _, tbl in ipairs{ "calibrations", "profiles" } do
    if have[tbl] then
      for _, r in ipairs(q(db, ("SELECT * FROM %s ORDER BY id"):format(tbl))) do
        local key = tbl .. identity(r)
        if not st.rows[key] then
          local id = insert(out, tbl, r)
          st.rows[key] = true
          if tbl == "profiles" then
            for _, child in ipairs{ "profile_kernels", "profile_memops", "profile_ranges" } do
              for _, c in ipairs(q(db, ("SELECT * FROM %s WHERE profile_id = ?"):format(child), r.id)) do
                insert(out, child, c, { profile_id = id })
              end
            end
          end
        end
      end
    end
  end
  return n
end

local function remove_db(path)
  for _, s in ipairs{ "", "-wal", "-shm", "-journal" } do os.remove(path .. s) end
end

-- merge(inputs, out) -> { inputs = { {path =, runs =, runs_shared =, evaluations =, duplicates =, generations =,
-- generations_shared =} }, runs =, evaluations =, duplicates =, generations = }: the inputs merged into the
-- new database `out`.
function M.merge(inputs, out)
  M.check(inputs, out)
  local tmp = ("%s.merging-%d"):format(out, util.pid())
  remove_db(tmp)
  local o, err = store.open(tmp)
  if not o then errors.database("%s", err) end
  o.path = out -- errors name the output as the user named it
  local st = { keys = {}, runs = {}, rows = {} }
  local res = { inputs = {}, runs = 0, evaluations = 0, duplicates = 0, generations = 0 }
  local ok, e = pcall(o.transaction, o, function()
    for i, p in ipairs(inputs) do
      local rok, rerr = store.read(p, function(db)
        db.warn = false
        return merge_into(o, db, st)
      end)
      if not rok then errors.database("%s", rerr) end
      res.inputs[i] = rerr
      res.inputs[i].path = p
    end
  end)
  o:close()
  if not ok then remove_db(tmp); error(e, 0) end
  for _, n in ipairs(res.inputs) do
    res.runs = res.runs + n.runs
    res.evaluations = res.evaluations + n.evaluations
    res.duplicates = res.duplicates + n.duplicates
    res.generations = res.generations + n.generations
  end
  -- the last close checkpointed the log and removed it: the file holds everything
  local rok, rerr = os.rename(tmp, out)
  if not rok then remove_db(tmp); errors.file(out, tostring(rerr), errors.STATUS.failed) end
  return res
end

-- report(res, output, write): what `kreach results merge` prints, a line per input and the total
-- (generations, kreach generate's requests, where there are any)
function M.report(res, output, write)
  local function gens(g, shared)
    if g == 0 and (shared or 0) == 0 then return "" end
    return (", %d generation%s%s"):format(g, g == 1 and "" or "s",
      (shared or 0) > 0 and (" (%d already in an earlier input)"):format(shared) or "")
  end
  for _, n in ipairs(res.inputs) do
    write(("%s: %d run%s, %d evaluation%s (%d already in an earlier input, left out%s)%s\n"):format(n.path,
      n.runs, n.runs == 1 and "" or "s", n.evaluations, n.evaluations == 1 and "" or "s", n.duplicates,
      n.runs_shared > 0 and (", %d run%s shared"):format(n.runs_shared, n.runs_shared == 1 and "" or "s") or "",
      gens(n.generations, n.generations_shared)))
  end
  write(("merged %d database%s into %s: %d runs, %d evaluations, %d duplicate%s left out%s\n"):format(#res.inputs,
    #res.inputs == 1 and "" or "s", output, res.runs, res.evaluations, res.duplicates,
    res.duplicates == 1 and "" or "s", gens(res.generations)))
end

return M
