-- Bad input gets a clear error naming the file (and the row, the entry), and loses no recorded
-- data: a results database with a column damaged by hand, or a table without a column its
-- schema version has; a candidate's name with terminal controls in `results list`; a
-- manifest.json that is not a list of entries with whole problem ids; a --worker-memory that
-- does not fit in 64 bits. No GPU.
local store = require "kreach.results.store"
local results = require "kreach.results.report"
local sqlite = require "kreach.core.sqlite"
local eval = require "kreach.run.evaluate"
local seal = require "kreach.run.seal"
local support = require "support"

local tmpdir, rm_tmpdirs = support.tmpdirs()

local P19 = { suite = "kernelbench-level1", problem_id = 19, name = "19_ReLU", file_hash = "a" }

-- A database with one run and two evaluations (1: a candidate with timing and a check, 2: a
-- baseline); returns its path.
local function small_db(cand_name, reason)
  local path = tmpdir() .. "/r.db"
  local db = assert(store.open(path))
  local run = db:begin_run{ command = { "kreach", "eval" }, config_hash = "h", device = { name = "GPU" } }
  db:record_evaluation{ run_id = run, problem = P19, eval_key = "k1", dtype = "f32", verdict = "correct",
                        candidate = { hash = "c1", name = cand_name or "relu_v1", source = "x" },
                        reason = reason, speedup = 2.0, throttled = false,
                        check_result = { trials = { { kernelbench = { pass = true } } } },
                        timing = { candidate = { summary = { median = 0.25 }, samples = { 0.25 } } } }
  db:record_evaluation{ run_id = run, problem = P19, eval_key = "k2", dtype = "f32", verdict = "baseline",
                        baseline_ms = 0.5 }
  db:finish_run(run, "finished")
  db:close()
  return path
end

local function sql(path, stmt)
  local raw = assert(sqlite.open(path))
  assert(raw:exec(stmt))
  raw:close()
end

local function read_all(path)
  local msgs = {}
  local ok, data, damaged = store.read(path, function(db)
    db.warn = function(m) msgs[#msgs + 1] = m end
    return results.fetch(db), db.damaged
  end)
  assert.is_true(ok, tostring(data))
  return data, damaged, msgs
end

describe("a results database damaged by hand", function()
  teardown(rm_tmpdirs)

  it("reads every row of a database with a JSON column that does not decode, that field left out and named", function()
    local path = small_db()
    sql(path, "UPDATE evaluations SET timing = '{not json' WHERE id = 1")
    local data, damaged, msgs = read_all(path)
    assert.equals(2, #data.rows)
    local r = data.rows[1]
    assert.is_nil(r.timing)
    -- the rest of the row, decoded as usual: the other JSON column, the boolean, the derived field
    assert.equals("correct", r.verdict)
    assert.equals(2.0, r.speedup)
    assert.is_false(r.throttled)
    assert.equals("pass", r.kernelbench)
    assert.equals("table", type(r.check_result))
    assert.equals(1, #damaged)
    assert.same({ "evaluation", 1, "timing" }, { damaged[1].what, damaged[1].id, damaged[1].column })
    assert.equals(path .. ": evaluation 1: column 'timing' cannot be read (json: expected a key at byte 2); left out", msgs[1])
    -- every exporter writes it
    for _, fmt in ipairs(results.FORMATS) do
      local out = {}
      results.write(fmt, data, function(...) for _, s in ipairs{ ... } do out[#out + 1] = s end end)
      assert.truthy(#table.concat(out) > 0)
    end
  end)

  it("leaves out a number column holding text and a run's JSON column that does not decode", function()
    local path = small_db()
    sql(path, "UPDATE evaluations SET speedup = 'fast', sizes = '[1,' WHERE id = 1")
    sql(path, "UPDATE runs SET command = 'kreach eval' WHERE id = 1")
    local data, damaged = read_all(path)
    assert.is_nil(data.rows[1].speedup)
    assert.is_nil(data.rows[1].sizes)
    assert.is_nil(data.runs[1].command)
    assert.equals("GPU", data.runs[1].device.name)
    local cols = {}
    for _, d in ipairs(damaged) do cols[#cols + 1] = d.what .. "." .. d.column end
    table.sort(cols)
    assert.same({ "evaluation.sizes", "evaluation.speedup", "run.command" }, cols)
    local out = {}
    results.list(data.rows, function(s) out[#out + 1] = s end)
    assert.matches("correct", table.concat(out))
  end)

  it("warns on standard error by default, where the caller set no warn", function()
    local path = small_db()
    sql(path, "UPDATE evaluations SET check_result = 'x' WHERE id = 1")
    local db = assert(store.open(path, { readonly = true }))
    local seen
    db.warn = function(m) seen = m end
    assert.equals("correct", db:find_evaluation("k1").verdict)
    db:close()
    assert.matches("evaluation 1: column 'check_result' cannot be read", seen, 1, true)
  end)

  it("refuses a database whose tables lack a column of its schema version, naming the table and column", function()
    local path = small_db()
    sql(path, "ALTER TABLE evaluations DROP COLUMN verdict")
    for _, ro in ipairs{ true, false } do
      local db, err = store.open(path, { readonly = ro })
      assert.is_nil(db)
      assert.equals(path .. ": not a kreach results database (schema version 4, but its table evaluations has no column verdict)", err)
    end
    local path2 = small_db()
    sql(path2, "DROP TABLE candidates")
    local db, err = store.open(path2, { readonly = true })
    assert.is_nil(db)
    assert.equals(path2 .. ": not a kreach results database (schema version 4, but it has no table candidates)", err)
  end)
end)

describe("results list in a terminal", function()
  teardown(rm_tmpdirs)

  it("shows a candidate's name and a reason with ESC and CR made visible", function()
    local path = small_db("x\27[2K\rok", "bad\27]0;t\7")
    local data = read_all(path)
    local out = {}
    results.list(data.rows, function(s) out[#out + 1] = s end)
    local s = table.concat(out)
    assert.is_nil(s:find("[\27\r\7]"), s)
    assert.truthy(s:find("x\\x1b[2K\\x0dok", 1, true), s)
  end)
end)

describe("a manifest.json that cannot be followed", function()
  teardown(rm_tmpdirs)

  local function manifest(body)
    local d = tmpdir()
    support.spit(d .. "/a.lua", "return {}")
    support.spit(d .. "/b.lua", "return {}")
    support.spit(d .. "/manifest.json", body)
    local files, errs = eval.candidate_files({ d })
    return files, errs, d .. "/manifest.json"
  end

  it("names the manifest and the entry of a problem that is not a whole number", function()
    for _, c in ipairs{ { "26.5", "26.5" }, { "1e300", "1e+300" }, { "NaN", "nan" }, { '"twenty-six"', '"twenty-six"' },
                        { "-3", "-3" }, { "[19]", "a JSON list" }, { "true", "true" } } do
      local files, errs, mpath = manifest(('[{"file": "a.lua", "problem": 19}, {"file": "b.lua", "problem": %s}]'):format(c[1]))
      assert.equals(1, #files, c[1])
      assert.equals(19, files[1].problem)
      assert.equals(1, #errs, c[1])
      assert.truthy(errs[1]:find(mpath .. ': entry 2: "problem" must be a problem id, a whole number such as 19, not ', 1, true), errs[1])
      assert.truthy(errs[1]:find(c[2], 1, true), errs[1])
    end
    -- a whole number written as a string or a float is one
    local files, errs = manifest('[{"file": "a.lua", "problem": "19"}, {"file": "b.lua", "problem": 26.0}]')
    assert.same({}, errs)
    assert.same({ 19, 26 }, { files[1].problem, files[2].problem })
    assert.equals("integer", math.type(files[2].problem))
  end)

  it("plans nothing from a bad problem and raises no error (no %d on a float)", function()
    local d = tmpdir()
    support.spit(d .. "/a.lua", "return {}")
    support.spit(d .. "/manifest.json", '[{"file": "a.lua", "problem": 1e300}]')
    local items, skipped = eval.plan("kernelbench-l1-repr", { d })
    assert.equals(0, #items)
    assert.equals(1, #skipped)
    assert.truthy(skipped[1].why:find("manifest.json: entry 1:", 1, true))
  end)

  it("says a manifest that is an object, empty, or null is not a list", function()
    for _, c in ipairs{ { '{"file": "a.lua", "problem": 19}', 'a JSON object, not a list [{"file": ...}, ...]' }, { "[]", "an empty list" },
                        { "{}", "an empty list" }, { "null", "a JSON null, not a list" }, { "19", "a JSON number, not a list" } } do
      local files, errs, mpath = manifest(c[1])
      assert.equals(0, #files)
      assert.equals(mpath .. ": not a JSON list of candidates (" .. c[2] .. ")", errs[1])
    end
  end)

  it("names a null entry instead of stopping there", function()
    local files, errs, mpath = manifest('[{"file": "a.lua", "problem": 19}, null, {"file": "b.lua", "problem": 20}]')
    assert.equals(2, #files)
    assert.equals(20, files[2].problem)
    assert.same({ mpath .. ': entry 2 is null, not an object {"file": ...}' }, errs)
  end)
end)

describe("--worker-memory", function()
  it("refuses a size that does not fit in 64 bits, naming it", function()
    for _, s in ipairs{ "99999999T", "8388608T", "9223372036854775808", "1e30" } do
      local b, err = seal.parse_size(s)
      assert.is_nil(b, s)
      assert.truthy(err:find(s, 1, true), err)
    end
    assert.equals(8388607 * 1024 ^ 4 // 1, seal.parse_size("8388607T"))
    assert.equals("integer", math.type(seal.parse_size("8388607T")))
    assert.equals(8 * 1024 ^ 3 // 1, seal.parse_size("8G"))
  end)
end)
