-- kreach results import and merge with known answers (issue 36): KernelBench's eval_results.json
-- in both layouts (metadata per problem and per sample) and its baseline times, imported and
-- checked row by row; kreach's JSON lines through export -> import -> export; two shards with an
-- overlap merged (the overlap once, the runs kept) and shards of other problem files refused;
-- malformed files refused with the file and the entry named, and the database as it was.
local store = require "kreach.results.store"
local import = require "kreach.results.import"
local merge = require "kreach.results.merge"
local report = require "kreach.results.report"
local json = require "kreach.json"
local util = require "kreach.core.util"
local lfs = require "lfs"
local support = require "support"

local tmpdir, rm_tmpdirs = support.tmpdirs()
local slurp, spit = support.slurp, support.spit

-- KernelBench's dict layout: problem 19 (two samples, one correct with its timing and hardware,
-- one that did not compile) and problem 2 (one sample whose output was wrong)
local DICT = [[
{"19": {"0": {"compiled": true, "correctness": true, "runtime": 0.5,
              "runtime_stats": {"mean": 0.5, "std": 0.01, "min": 0.48, "max": 0.53, "num_trials": 100,
                                "hardware": "NVIDIA H100", "device": "cuda:0"},
              "metadata": {"hardware": "NVIDIA H100", "device": "0"}},
        "3": {"compiled": false, "correctness": false, "runtime": -1.0, "runtime_stats": {},
              "metadata": {"hardware": "NVIDIA H100", "compilation_error": "nvcc: error: expected ';'"}}},
 "2": {"1": {"compiled": true, "correctness": false, "runtime": -1.0, "runtime_stats": {},
             "metadata": {"correctness_issue": "Output mismatch", "max_difference": ["0.5"]}}}}
]]

-- the list layout (kreach's own export writes it): problem 19 with a runtime error and a
-- correct sample, problem 1 with a sample without a sample_id (the first in the list: 0)
local LIST = [[
{"19": [{"sample_id": 4, "compiled": true, "correctness": false, "runtime": -1.0, "runtime_stats": {},
         "metadata": {"runtime_error": "CUDA error: illegal memory access"}},
        {"sample_id": 5, "compiled": true, "correctness": true, "runtime": 0.25,
         "runtime_stats": {"mean": 0.25, "std": 0.0, "min": 0.25, "max": 0.25, "num_trials": 10}, "metadata": {}}],
 "1": [{"compiled": true, "correctness": true, "runtime": 2.0, "metadata": {"precision": "bf16"}}]}
]]

local TIMES = [[
{"level1": {"19_ReLU.py": {"mean": 1.5, "std": 0.1, "min": 1.4, "max": 1.7, "num_trials": 100},
            "1_Square_matrix_multiplication_.py": {"mean": 3.0, "std": 0.1, "min": 2.9, "max": 3.1, "num_trials": 100}},
 "level2": {"19_ReLU.py": {"mean": 99.0}}}
]]

local function count(path, tbl)
  local db = assert(store.open(path, { readonly = true }))
  local n = db.sql:query(("SELECT count(*) AS n FROM %s"):format(tbl))[1].n
  db:close()
  return n
end

local function export(path, format)
  local out = {}
  local ok, data = store.read(path, function(db) return report.fetch(db) end)
  assert(ok, data)
  report.write(format or "jsonl", data, function(...) for _, s in ipairs{ ... } do out[#out + 1] = s end end)
  return table.concat(out)
end

local function rows_of(path)
  local _, rows = store.read(path, function(db) return db:evaluations{} end)
  return rows
end

local function run_import(path, files, opts)
  local db = assert(store.open(path))
  local ok, res = pcall(import.import, db, files, opts or {})
  db:close()
  if not ok then return nil, tostring(res), res end
  return res
end

-- a small database of kreach's own: two runs, three evaluations (one a baseline timed alone)
local function own_db(path, spec)
  local db = assert(store.open(path))
  for _, r in ipairs(spec) do
    local run = db:begin_run{ command = { "kreach", "eval", r.name }, config_hash = "h-" .. r.name, device = { name = "NVIDIA H200" } }
    for _, k in ipairs(r.keys) do
      db:record_evaluation{ run_id = run, problem = { suite = "kernelbench-l1", problem_id = 19, name = "19_ReLU",
                                                      file_hash = r.hash or "a" },
        candidate = { hash = "c" .. k, name = "cand" .. k, source = "-- source " .. k, origin = { model = "m1", sample = 1 } },
        eval_key = "k" .. k, dtype = "f32", verdict = "correct", baseline_ms = 0.5, candidate_ms = 0.25, speedup = 2.0,
        speedup_lo = 1.9, speedup_hi = 2.1, throttled = false, check_result = { max_rel = 0 / 0, trials = {} },
        timing = { candidate = { summary = { n = 4, median = 0.25, mean = 0.25, min = 0.2, max = 0.3 },
                                 samples = { 0.2, 0.25, 0.25, 0.3 } } } }
    end
    if r.baseline then
      db:record_evaluation{ run_id = run, problem = { suite = "kernelbench-l1", problem_id = 2, name = "2_Matmul", file_hash = "b" },
        eval_key = "base-" .. r.name, dtype = "bf16", verdict = "baseline", baseline_ms = 1.25, reason = "a \"quoted\",\nline" }
    end
    db:finish_run(run, "finished")
  end
  db:close()
end

describe("kreach results import", function()
  teardown(rm_tmpdirs)

  it("reads KernelBench's dict layout, with its baseline times, row by row", function()
    local d = tmpdir()
    spit(d .. "/eval_results.json", DICT)
    spit(d .. "/times.json", TIMES)
    local res = assert(run_import(d .. "/r.db", { d .. "/eval_results.json" },
      { model = "gpt-x", baseline_times = d .. "/times.json" }))
    assert.equals(1, #res)
    assert.equals("kernelbench", res[1].format)
    assert.equals(3, res[1].evaluations)
    local rows = rows_of(d .. "/r.db")
    assert.equals(3, #rows)
    local hash = util.hash(DICT)
    -- in problem order, then sample order: 2/1, 19/0, 19/3
    local want = {
      { problem_id = 2, problem_name = "2_Standard_matrix_multiplication_", sample = 1, verdict = "incorrect",
        reason = "Output mismatch" },
      { problem_id = 19, problem_name = "19_ReLU", sample = 0, verdict = "correct", candidate_ms = 0.5, pytorch_ms = 1.5,
        speedup_pytorch = 3.0 },
      { problem_id = 19, problem_name = "19_ReLU", sample = 3, verdict = "compile_error",
        reason = "nvcc: error: expected ';'", pytorch_ms = 1.5 },
    }
    for i, w in ipairs(want) do
      local r = rows[i]
      assert.equals(w.problem_id, r.problem_id)
      assert.equals(w.problem_name, r.problem_name)
      assert.equals("kernelbench-l1", r.suite)
      assert.equals(w.verdict, r.verdict)
      assert.equals(w.reason, r.reason)
      assert.equals(w.candidate_ms, r.candidate_ms)
      assert.equals(w.pytorch_ms, r.pytorch_ms)
      assert.equals(w.speedup_pytorch, r.speedup_pytorch)
      assert.is_nil(r.speedup) -- never a speedup against kreach's baseline: none was timed
      assert.is_nil(r.baseline_ms)
      assert.equals("f32", r.dtype)
      assert.equals("gpt-x", r.model)
      assert.equals("kernelbench", r.harness)
      assert.is_false(r.measured_here)
      assert.equals(d .. "/eval_results.json", r.source_file)
      assert.equals(hash, r.source_hash)
      assert.equals(w.sample, r.origin.sample)
      assert.equals(("gpt-x sample %d"):format(w.sample), r.candidate_name)
      assert.equals(1, r.run_id)
    end
    -- the sample's metadata and timing statistics are kept as they were
    assert.same({ hardware = "NVIDIA H100", device = "0" }, rows[2].check_result.kernelbench.metadata)
    assert.equals(100, rows[2].timing.candidate.summary.n)
    assert.equals(0.01, rows[2].timing.runtime_stats.std)
    assert.same({ "0.5" }, rows[1].check_result.kernelbench.metadata.max_difference)
    local _, runs = store.read(d .. "/r.db", function(db) return db:runs() end)
    assert.equals(1, #runs)
    assert.equals("imported", runs[1].status)
    assert.equals("NVIDIA H100", runs[1].device.name)
    assert.equals(hash, runs[1].config.import.hash)
    assert.equals("kernelbench", runs[1].config.import.harness)
    -- KernelBench's export of the imported rows says what the file said
    local kb = json.decode(export(d .. "/r.db", "kernelbench"))
    assert.equals(0.5, kb["19"][1].runtime)
    assert.is_true(kb["19"][1].correctness)
    assert.equals(3.0, kb["19"][1].metadata.speedup)
    assert.is_false(kb["19"][2].compiled)
    assert.equals(3, kb["19"][2].sample_id)
    assert.equals(1, kb["2"][1].sample_id)
  end)

  it("reads the list layout (kreach's own export's), sample ids from the samples or their place", function()
    local d = tmpdir()
    spit(d .. "/list.json", LIST)
    spit(d .. "/times.json", TIMES)
    assert(run_import(d .. "/r.db", { d .. "/list.json" }, { baseline_times = d .. "/times.json" }))
    local rows = rows_of(d .. "/r.db")
    assert.equals(3, #rows)
    assert.same({ 1, 0, "correct", "bf16", 2.0, 3.0, 1.5 }, { rows[1].problem_id, rows[1].origin.sample, rows[1].verdict,
      rows[1].dtype, rows[1].candidate_ms, rows[1].pytorch_ms, rows[1].speedup_pytorch })
    assert.same({ 19, 4, "runtime_error", "CUDA error: illegal memory access" },
      { rows[2].problem_id, rows[2].origin.sample, rows[2].verdict, rows[2].reason })
    assert.same({ 19, 5, "correct", 0.25, 6.0 }, { rows[3].problem_id, rows[3].origin.sample, rows[3].verdict,
      rows[3].candidate_ms, rows[3].speedup_pytorch })
    assert.is_nil(rows[1].model) -- no --model: none
    assert.equals("kernelbench sample 0", rows[1].candidate_name)
  end)

  it("reads what kreach results export --format kernelbench wrote", function()
    local d = tmpdir()
    spit(d .. "/in.json", DICT)
    assert(run_import(d .. "/a.db", { d .. "/in.json" }, { model = "gpt-x" }))
    spit(d .. "/out.json", export(d .. "/a.db", "kernelbench"))
    assert(run_import(d .. "/b.db", { d .. "/out.json" }, { model = "gpt-x" }))
    local a, b = rows_of(d .. "/a.db"), rows_of(d .. "/b.db")
    assert.equals(#a, #b)
    for i = 1, #a do
      for _, k in ipairs{ "problem_id", "verdict", "reason", "candidate_ms", "dtype", "model" } do
        assert.equals(a[i][k], b[i][k], k)
      end
      assert.equals(a[i].origin.sample, b[i].origin.sample)
    end
    -- the timing statistics KernelBench gave come back out, std included (kreach took no
    -- samples of an imported row, so its std is the file's)
    local out = json.decode(slurp(d .. "/out.json"))
    local stds = {}
    for _, samples in pairs(out) do
      for _, smp in pairs(samples) do
        if type(smp.runtime_stats) == "table" and smp.runtime_stats.std ~= json.null then stds[#stds + 1] = smp.runtime_stats.std end
      end
    end
    table.sort(stds)
    assert.same({ 0.01 }, stds)
  end)

  it("reads kreach's JSON lines back: export, import, export is the same but for the provenance the import adds", function()
    local d = tmpdir()
    own_db(d .. "/own.db", { { name = "A", keys = { 1, 2 }, baseline = true }, { name = "B", keys = { 3 } } })
    local e1 = export(d .. "/own.db")
    spit(d .. "/e1.jsonl", e1)
    assert(run_import(d .. "/i1.db", { d .. "/e1.jsonl" }))
    local e2 = export(d .. "/i1.db")
    spit(d .. "/e2.jsonl", e2)
    assert(run_import(d .. "/i2.db", { d .. "/e2.jsonl" }))
    local e3 = export(d .. "/i2.db")
    -- a second round trip changes nothing, byte for byte
    assert.equals(e2, e3)
    -- the first: every key of every line the same (ids, run ids, refs, NaN, quotes, line
    -- breaks, the candidate's source), but those saying where the row came from
    local l1, l2 = {}, {}
    for l in e1:gmatch("[^\n]+") do l1[#l1 + 1] = l end
    for l in e2:gmatch("[^\n]+") do l2[#l2 + 1] = l end
    assert.equals(4, #l1)
    assert.equals(#l1, #l2)
    local h1 = util.hash(e1)
    for i = 1, #l1 do
      local a, b = json.decode(l1[i]), json.decode(l2[i])
      assert.is_true(a.measured_here)
      assert.is_nil(a.harness)
      assert.is_false(b.measured_here)
      assert.equals("kreach", b.harness)
      assert.equals(d .. "/e1.jsonl", b.source_file)
      assert.equals(h1, b.source_hash)
      a.measured_here, b.measured_here, b.harness, b.source_file, b.source_hash = nil, nil, nil, nil, nil
      assert.equals(json.encode(a), json.encode(b))
    end
    assert.matches('"model":"m1"', l1[1], 1, true)
    assert.matches('"run_id":2', l2[4], 1, true)
    local _, runs = store.read(d .. "/i1.db", function(db) return db:runs() end)
    assert.same({ 1, 2 }, { runs[1].id, runs[2].id })
    assert.equals("imported", runs[2].status)
  end)

  it("gives imported rows new ids where the database has them already", function()
    local d = tmpdir()
    own_db(d .. "/own.db", { { name = "A", keys = { 1 } } })
    spit(d .. "/e1.jsonl", export(d .. "/own.db"))
    assert(run_import(d .. "/own.db", { d .. "/e1.jsonl" }))
    local rows = rows_of(d .. "/own.db")
    assert.equals(2, #rows)
    assert.same({ 1, 1, true }, { rows[1].id, rows[1].run_id, rows[1].measured_here })
    assert.same({ 2, 2, false, "kreach" }, { rows[2].id, rows[2].run_id, rows[2].measured_here, rows[2].harness })
    assert.equals(rows[1].candidate_ref, rows[2].candidate_ref) -- the same candidate, stored once
  end)

  describe("refuses malformed files, naming the file and the entry, and writes nothing", function()
    local BAD = {
      { "not JSON", "{", "^F: not JSON" },
      { "a list at the top", "[1, 2]", "^F: KernelBench's eval_results.json is an object" },
      { "correctness a string", [[{"19": {"3": {"compiled": true, "correctness": "yes", "runtime": 1.0}}}]],
        '^F: problem "19", sample "3": correctness must be a boolean %(got a string%)$' },
      { "compiled missing (list)", [[{"19": [{"correctness": true, "runtime": 1.0}]}]],
        '^F: problem "19", entry 1: compiled must be a boolean %(got nothing%)$' },
      { "runtime a string", [[{"19": [{"sample_id": 2, "compiled": true, "correctness": true, "runtime": "fast"}]}]],
        '^F: problem "19", sample "2": runtime must be a number of milliseconds, %-1 when not measured %(got a string%)$' },
      { "runtime_stats.mean a string", [[{"19": {"0": {"compiled": true, "correctness": true, "runtime": 1.0, "runtime_stats": {"mean": "1"}}}}]],
        '^F: problem "19", sample "0": runtime_stats%.mean must be a number %(got a string%)$' },
      { "metadata a list", [[{"19": {"0": {"compiled": true, "correctness": true, "runtime": 1.0, "metadata": "x"}}}]],
        '^F: problem "19", sample "0": metadata must be an object %(got a string%)$' },
      { "a sample key that is not an id", [[{"19": {"first": {"compiled": true, "correctness": true}}}]],
        '^F: problem "19", sample "first": a sample\'s key is its id, an integer$' },
      { "a problem key that is not an id", [[{"relu": []}]],
        '^F: problem "relu": a problem\'s key is its id in the suite, an integer$' },
      { "a problem the suite lacks", [[{"999": []}]],
        '^F: problem "999": the suite kernelbench%-l1 has no problem 999 %(%-%-suite names the suite%)$' },
      { "samples a number", [[{"19": 5}]],
        '^F: problem "19": the samples are an object {"<sample_id>": sample} or a list %[sample, %.%.%.%], got an integer$' },
      { "a JSON line without its verdict", '{"eval_key":"k","dtype":"f32","problem_name":"19_ReLU","verdict":"correct"}\n{"eval_key":"k2","dtype":"f32","problem_name":"19_ReLU"}\n',
        '^F: line 2: verdict must be a non%-empty string %(got nothing%)$' },
      { "a JSON line with a text speedup", '{"eval_key":"k","dtype":"f32","problem_name":"19_ReLU","verdict":"correct","speedup":"2x"}\n',
        '^F: line 1: speedup must be a number %(got a string%)$' },
    }
    for _, case in ipairs(BAD) do
      it(case[1], function()
        local d = tmpdir()
        own_db(d .. "/r.db", { { name = "A", keys = { 1 } } })
        local before = export(d .. "/r.db")
        spit(d .. "/good.json", DICT)
        local f = d .. "/bad.json"
        spit(f, case[2])
        -- a good file first: it is not imported either
        local res, msg, e = run_import(d .. "/r.db", { d .. "/good.json", f })
        assert.is_nil(res)
        assert.equals(3, e.status)
        local quoted = f:gsub("%p", "%%%0")
        local want = "^" .. quoted .. case[3]:sub(3)
        assert.matches(want, msg)
        assert.equals(before, export(d .. "/r.db"))
        assert.equals(1, count(d .. "/r.db", "runs"))
      end)
    end

    it("bad baseline times", function()
      local d = tmpdir()
      spit(d .. "/good.json", DICT)
      spit(d .. "/times.json", [[{"level1": {"19_ReLU.py": {"mean": -1}}}]])
      local res, msg = run_import(d .. "/r.db", { d .. "/good.json" }, { baseline_times = d .. "/times.json" })
      assert.is_nil(res)
      assert.equals(d .. '/times.json: level1, "19_ReLU.py": mean must be a positive number of milliseconds (got an integer)', msg)
      assert.equals(0, count(d .. "/r.db", "evaluations"))
    end)

    it("a file imported before, after another file of the same import was written: that one is undone", function()
      local d = tmpdir()
      spit(d .. "/a.json", DICT)
      spit(d .. "/b.json", LIST)
      assert(run_import(d .. "/r.db", { d .. "/a.json" }))
      local before = export(d .. "/r.db")
      local res, msg, e = run_import(d .. "/r.db", { d .. "/b.json", d .. "/a.json" })
      assert.is_nil(res)
      assert.equals(2, e.status)
      assert.matches("/a%.json was imported already %(run 1 of .*r%.db holds it; its hash is %x+%)$", msg)
      assert.equals(before, export(d .. "/r.db"))
      assert.equals(1, count(d .. "/r.db", "runs"))
    end)
  end)
end)

describe("schema version 4", function()
  teardown(rm_tmpdirs)

  it("migrates a version 3 database: its rows are kreach's own, their model their candidate's origin's", function()
    local d = tmpdir()
    own_db(d .. "/r.db", { { name = "A", keys = { 1 }, baseline = true } })
    local raw = assert(require("kreach.core.sqlite").open(d .. "/r.db"))
    for _, c in ipairs{ "model", "harness", "measured_here", "source_file", "source_hash" } do
      assert(raw:exec("ALTER TABLE evaluations DROP COLUMN " .. c))
    end
    assert.equals(1, raw:exec("UPDATE kreach_meta SET value = '3' WHERE key = 'schema_version'"))
    raw:close()
    -- a reader reads it as it is
    local rows = rows_of(d .. "/r.db")
    assert.same({ 2, nil, nil }, { #rows, rows[1].model, rows[1].measured_here })
    local db = assert(store.open(d .. "/r.db"))
    assert.equals("4", db.sql:query("SELECT value FROM kreach_meta WHERE key = 'schema_version'")[1].value)
    db:close()
    rows = rows_of(d .. "/r.db")
    assert.same({ "m1", true }, { rows[1].model, rows[1].measured_here })
    assert.same({ nil, true }, { rows[2].model, rows[2].measured_here }) -- the baseline: no candidate, no model
    assert.is_nil(rows[1].harness)
  end)
end)

describe("kreach results merge", function()
  teardown(rm_tmpdirs)

  it("combines two shards with an overlap: the overlap once, every run kept, evaluations at their runs", function()
    local d = tmpdir()
    own_db(d .. "/a.db", { { name = "A", keys = { 1, 2, 3 } }, { name = "A2", keys = { 4 } } })
    own_db(d .. "/b.db", { { name = "B", keys = { 3, 5 }, baseline = true } })
    local res = merge.merge({ d .. "/a.db", d .. "/b.db" }, d .. "/m.db")
    assert.same({ 3, 6, 1 }, { res.runs, res.evaluations, res.duplicates })
    assert.same({ 2, 4, 0 }, { res.inputs[1].runs, res.inputs[1].evaluations, res.inputs[1].duplicates })
    assert.same({ 1, 2, 1 }, { res.inputs[2].runs, res.inputs[2].evaluations, res.inputs[2].duplicates })
    local rows = rows_of(d .. "/m.db")
    local got = {}
    for i, r in ipairs(rows) do got[i] = r.eval_key .. "@" .. r.run_id end
    assert.same({ "k1@1", "k2@1", "k3@1", "k4@2", "k5@3", "base-B@3" }, got)
    local _, runs = store.read(d .. "/m.db", function(db) return db:runs() end)
    local cmds = {}
    for i, r in ipairs(runs) do cmds[i] = r.id .. ":" .. r.command[3] end
    assert.same({ "1:A", "2:A2", "3:B" }, cmds)
    assert.equals(5, count(d .. "/m.db", "candidates"))
    assert.equals(2, count(d .. "/m.db", "problems"))
    -- the candidates' sources came along
    assert.equals("-- source 5", rows[5].candidate_source)
    -- nothing left beside the output
    assert.is_nil(lfs.attributes(d .. "/m.db-wal"))
    -- merging the merge with a shard again adds nothing
    local again = merge.merge({ d .. "/m.db", d .. "/b.db" }, d .. "/m2.db")
    assert.same({ 0, 0 }, { again.inputs[2].evaluations, again.inputs[2].runs })
    assert.equals(1, again.inputs[2].runs_shared)
    assert.equals(3, again.inputs[2].duplicates) -- k3, k5, base-B: all in m.db already
  end)

  it("refuses one key under two problem hashes, naming the key, and writes nothing", function()
    local d = tmpdir()
    own_db(d .. "/a.db", { { name = "A", keys = { 1, 2 } } })
    own_db(d .. "/b.db", { { name = "B", keys = { 2 }, hash = "other" } })
    local ok, e = pcall(merge.merge, { d .. "/a.db", d .. "/b.db" }, d .. "/m.db")
    assert.is_false(ok)
    assert.equals(3, e.status)
    assert.equals(("evaluation key k2: problem 19_ReLU has hash a in %s/a.db but problem 19_ReLU has hash other in %s/b.db: "
      .. "the shards are not of the same problem files (not one study); nothing was written"):format(d, d), tostring(e))
    for f in lfs.dir(d) do assert.is_nil(f:match("^m%.db"), f) end
  end)

  it("never writes over an input, nor over any file", function()
    local d = tmpdir()
    own_db(d .. "/a.db", { { name = "A", keys = { 1 } } })
    own_db(d .. "/b.db", { { name = "B", keys = { 2 } } })
    local before = slurp(d .. "/a.db")
    for _, out in ipairs{ d .. "/a.db", d .. "/./a.db", d .. "/a.db-wal" } do
      local ok, e = pcall(merge.merge, { d .. "/a.db", d .. "/b.db" }, out)
      assert.is_false(ok)
      assert.equals(2, e.status)
      assert.matches("^refusing to write .*: it is the input .*/a%.db %(merge writes a new database: choose another %-o%)$", tostring(e))
    end
    spit(d .. "/x.db", "keep me")
    local ok, e = pcall(merge.merge, { d .. "/a.db", d .. "/b.db" }, d .. "/x.db")
    assert.is_false(ok)
    assert.matches("x%.db: it exists %(merge writes a new database", tostring(e))
    assert.equals("keep me", slurp(d .. "/x.db"))
    assert.equals(before, slurp(d .. "/a.db"))
  end)

  it("merges imported rows and kreach's own, keeping where each came from", function()
    local d = tmpdir()
    own_db(d .. "/a.db", { { name = "A", keys = { 1 } } })
    spit(d .. "/kb.json", DICT)
    assert(run_import(d .. "/b.db", { d .. "/kb.json" }, { model = "gpt-x" }))
    merge.merge({ d .. "/a.db", d .. "/b.db" }, d .. "/m.db")
    local rows = rows_of(d .. "/m.db")
    assert.equals(4, #rows)
    assert.same({ true, "m1" }, { rows[1].measured_here, rows[1].model })
    for i = 2, 4 do
      assert.same({ false, "kernelbench", "gpt-x" }, { rows[i].measured_here, rows[i].harness, rows[i].model })
    end
  end)
end)
