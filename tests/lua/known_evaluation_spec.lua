-- Known answers for the record a user reads and its exports: kreach.results.evaluation.new/finish
-- build a record from a timing result (the shape kreach.judge.measure.time returns) whose every
-- figure is a distinct number, and each field must hold the one figure it is documented to
-- come from (the speedup's interval ends included); then the record's CSV, JSON lines and
-- KernelBench sample, written out by hand here, and the same record stored in a results
-- database and exported again.
local evaluation = require "kreach.results.evaluation"
local results = require "kreach.results.report"
local store = require "kreach.results.store"
local verdict = require "kreach.verdict"
local cjson = require "cjson"
local support = require "support"

-- a timing result: every figure distinct (binary fractions, exact in text)
local function timing_result()
  return {
    baseline = { summary = { median = 2.5, n = 10 }, sol = { fraction = 0.125 } },
    candidate = { summary = { n = 4, median = 1.25, mean = 1.5, min = 0.75, max = 2.75 }, samples = { 0.75, 1, 1.5, 2.75 },
                  sol = { fraction = 0.375 }, method = { method = "kreach worker: events", other_streams = 3 } },
    speedup = { ratio = 2.0625, lo = 1.75, hi = 2.25, baseline = "baseline", candidate = "candidate" },
    pytorch = { summary = { median = 5.25 } },
    pytorch_compiled = { summary = { median = 4.5 } },
    ratios = {
      speedup_pytorch = { ratio = 4.125, lo = 3.5, hi = 4.25 },
      speedup_compiled = { ratio = 3.625, lo = 3.25, hi = 3.875 },
      baseline_vs_pytorch = { ratio = 0.5, lo = 0.4375, hi = 0.5625 },
    },
    throttled = true,
    warnings = { "first warning", "second warning" },
  }
end

-- the check's trials: KernelBench's allclose passes the first and last, fails the second
local CHECK = { trials = { { kernelbench = { pass = true } }, { kernelbench = { pass = false } }, { kernelbench = { pass = true } } } }

local ITEM = { eval_key = "k1", suite = "kernelbench-l1", problem_id = 19, problem_name = "19_ReLU",
               problem_path = "problems/kernelbench/level1/019_ReLU.lua", problem_hash = "ph",
               candidate_path = "cands/relu_fast.lua", candidate_hash = "ch", origin = { model = "m", sample = 6 },
               candidate_source = "return {}" }

local function record()
  local rec = evaluation.new(ITEM, { dtype = "f32", sizes = { batch_size = 4 } })
  return evaluation.finish(rec, { verdict = verdict.new("incorrect", "wrong_values", "found while timing"),
                                  check = CHECK, timing = timing_result(), wall_s = 7.5 })
end

-- every field taken from the timing result (evaluation.FIELDS' `from`), and its figure
local MEASURED = {
  baseline_ms = 2.5, candidate_ms = 1.25,
  speedup = 2.0625, speedup_lo = 1.75, speedup_hi = 2.25,
  pytorch_ms = 5.25, pytorch_compiled_ms = 4.5,
  speedup_pytorch = 4.125, speedup_pytorch_lo = 3.5, speedup_pytorch_hi = 4.25,
  speedup_compiled = 3.625, speedup_compiled_lo = 3.25, speedup_compiled_hi = 3.875,
  baseline_vs_pytorch = 0.5,
  sol_fraction = 0.375, -- the candidate's: the kernel under test
  throttled = true,
}

describe("the evaluation record, known answers", function()
  it("has a known answer for every field a timing result gives", function()
    for _, f in ipairs(evaluation.FIELDS) do
      if f.from then assert.is_true(MEASURED[f.name] ~= nil, "no known answer for the measured field " .. f.name) end
    end
  end)

  it("takes each measured field from its own figure of the timing result", function()
    local rec = record()
    for name, want in pairs(MEASURED) do assert.equals(want, rec[name], name) end
  end)

  it("takes the rest from the item, the configuration, the verdict and the check", function()
    local rec = record()
    assert.same({ "incorrect", "wrong_values", "found while timing" }, { rec.verdict, rec.reason, rec.detail })
    assert.same({ "k1", "kernelbench-l1", 19, "19_ReLU", "problems/kernelbench/level1/019_ReLU.lua" },
      { rec.eval_key, rec.suite, rec.problem_id, rec.problem_name, rec.path })
    assert.same({ "cands/relu_fast.lua", "relu_fast.lua", "ch" }, { rec.candidate_path, rec.candidate_name, rec.candidate_hash })
    assert.same({ model = "m", sample = 6 }, rec.origin)
    assert.same({ "f32", { batch_size = 4 } }, { rec.dtype, rec.sizes })
    assert.equals(7.5, rec.wall_s)
    -- KernelBench's verdict over all the trials: one failed, so fail
    assert.equals("fail", rec.kernelbench)
    assert.same({ "kernelbench-l1", 19, "19_ReLU", "problems/kernelbench/level1/019_ReLU.lua", "ph" },
      { rec.problem.suite, rec.problem.problem_id, rec.problem.name, rec.problem.path, rec.problem.file_hash })
    assert.same({ "ch", "cands/relu_fast.lua", "relu_fast.lua", "return {}" },
      { rec.candidate.hash, rec.candidate.path, rec.candidate.name, rec.candidate.source })
    -- derived from the timing result: how the candidate was timed, and its warnings
    assert.same({ "kreach worker: events", 3 }, { rec.time_method, rec.other_stream_calls })
    assert.same({ "first warning", "second warning" }, rec.timing_warnings)
    assert.matches("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$", rec.started_at)
    assert.matches("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$", rec.finished_at)
  end)

  it("takes the baseline's speed of light for a baseline timed alone, and no speedup", function()
    local t = timing_result()
    t.candidate, t.speedup, t.ratios = nil, nil, nil
    local rec = evaluation.finish(evaluation.new({ eval_key = "b", problem_id = 19 }, { dtype = "f32" }),
                                  { verdict = verdict.baseline(), timing = t, wall_s = 1 })
    assert.same({ 2.5, 0.125 }, { rec.baseline_ms, rec.sol_fraction })
    assert.is_nil(rec.candidate_ms)
    assert.is_nil(rec.speedup)
    assert.is_nil(rec.speedup_lo)
  end)

  it("passes KernelBench's verdict only when every compared trial passed", function()
    local function kb(...)
      local trials = {}
      for i, p in ipairs({ ... }) do trials[i] = { kernelbench = { pass = p } } end
      return evaluation.kernelbench_verdict({ trials = trials })
    end
    assert.equals("pass", kb(true, true, true))
    assert.equals("fail", kb(false, true, true))
    assert.equals("fail", kb(true, false, true))
    assert.equals("fail", kb(true, true, false))
    -- a trial that compared nothing does not count
    assert.equals("fail", evaluation.kernelbench_verdict({ trials = { { kernelbench = { pass = false } }, {} } }))
    assert.is_nil(evaluation.kernelbench_verdict({ trials = { {}, {} } }))
  end)

  it("counts a win only where the speedup's interval lies above 1", function()
    local function row(ratio, lo) return { verdict = "correct", speedup = ratio, speedup_lo = lo } end
    local s = evaluation.summary({ row(2, 1.5), row(1.2, 0.9), row(3, 1.01), { verdict = "incorrect", speedup = 5, speedup_lo = 4 } })
    assert.equals(2, s.wins)
    assert.equals(0.5, s.win_rate)
    -- the record's own figures: lo 1.75, a win; made incorrect, none
    local rec = record()
    rec.verdict = "correct"
    assert.equals(1, evaluation.summary({ rec }).wins)
  end)
end)

describe("the record's exports, known answers", function()
  local function csv_of(rows)
    local out = {}
    results.csv(rows, function(...) for _, s in ipairs({ ... }) do out[#out + 1] = s end end)
    local lines = {}
    for l in table.concat(out):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    return lines
  end
  -- the record's CSV, header by header (no field here holds a comma or a quote)
  local CSV = {
    id = "", run_id = "", suite = "kernelbench-l1", problem_id = "19", problem = "19_ReLU", candidate = "relu_fast.lua",
    candidate_hash = "ch", dtype = "f32", verdict = "incorrect", reason = "wrong_values", kernelbench_allclose = "fail",
    baseline_ms = "2.5", candidate_ms = "1.25", speedup = "2.0625", speedup_lo = "1.75", speedup_hi = "2.25",
    pytorch_ms = "5.25", pytorch_compiled_ms = "4.5", speedup_pytorch = "4.125", speedup_pytorch_lo = "3.5",
    speedup_pytorch_hi = "4.25", speedup_compiled = "3.625", speedup_compiled_lo = "3.25",
    speedup_compiled_hi = "3.875", baseline_vs_pytorch = "0.5", sol_fraction = "0.375", throttled = "true",
    time_method = "kreach worker: events", other_stream_calls = "3", timing_warnings = "first warning; second warning",
    wall_s = "7.5", model = "", harness = "", measured_here = "", source_file = "",
  }

  -- over: the columns that differ for this record (a stored one has its model and measured_here)
  local function check_csv(lines, id, run_id, finished_at, over)
    assert.equals(2, #lines)
    local head, cells = {}, {}
    for h in (lines[1] .. ","):gmatch("([^,]*),") do head[#head + 1] = h end
    for c in (lines[2] .. ","):gmatch("([^,]*),") do cells[#cells + 1] = c end
    assert.equals(#head, #cells)
    local want = {}
    for k, v in pairs(CSV) do want[k] = v end
    want.id, want.run_id, want.finished_at = id, run_id, finished_at
    for k, v in pairs(over or {}) do want[k] = v end
    local got = {}
    for i, h in ipairs(head) do got[h] = cells[i] end
    assert.same(want, got)
  end

  it("writes the record's figures in their CSV columns", function()
    local rec = record()
    check_csv(csv_of({ rec }), "", "", rec.finished_at)
  end)

  it("writes the record's figures in its JSON line", function()
    local out = {}
    results.jsonl({ record() }, function(...) for _, s in ipairs({ ... }) do out[#out + 1] = s end end)
    local doc = cjson.decode(table.concat(out))
    for name, want in pairs(MEASURED) do assert.equals(want, doc[name], name) end
    assert.same({ 2.0625, 1.75, 2.25 }, { doc.timing.speedup.ratio, doc.timing.speedup.lo, doc.timing.speedup.hi })
  end)

  it("writes KernelBench's sample: the speedup against PyTorch eager, kreach's beside it", function()
    local rec = record()
    rec.id, rec.run_id, rec.candidate_ref = 11, 3, 1
    local s = results.kernelbench_sample(rec, "NVIDIA H200")
    -- population std of 0.75, 1, 1.5, 2.75 (mean 1.5): sqrt((0.5625 + 0.25 + 0 + 1.5625) / 4)
    assert.same({
      sample_id = 6, compiled = true, correctness = false,
      metadata = { verdict = "incorrect", reason = "wrong_values", detail = "found while timing", dtype = "f32",
                   kreach_eval_id = 11, kreach_run_id = 3, problem = "19_ReLU", candidate_hash = "ch",
                   speedup = 4.125, ref_runtime = 5.25, speedup_compiled = 3.625, ref_runtime_compiled = 4.5,
                   speedup_vs_kreach_baseline = 2.0625, baseline_ms = 2.5 },
      runtime = 1.25,
      runtime_stats = { mean = 1.5, std = math.sqrt(2.375 / 4), min = 0.75, max = 2.75, num_trials = 4,
                        hardware = "NVIDIA H200", device = "cuda:0" },
    }, s)
  end)

  it("shows the record's figures in eval --json's brief row, results list and the text report", function()
    local rec = record()
    rec.id = 11
    local b = evaluation.brief(rec)
    for name, want in pairs(MEASURED) do assert.equals(want, b[name], name) end
    local l = evaluation.pick(rec, "list")
    assert.same({ 2.5, 1.25, 2.0625, 1.75, 2.25 }, { l.baseline_ms, l.candidate_ms, l.speedup, l.speedup_lo, l.speedup_hi })
    -- the text table's cells: the speedup with its interval, and against PyTorch
    local cells = {}
    for i, col in ipairs(evaluation.REPORT) do cells[col[1]] = evaluation.cells(rec)[i] end
    assert.same({ "2.5", "1.25", "2.062x [1.750, 2.250]", "5.25", "4.125x [3.500, 4.250]", "3.625x [3.250, 3.875]", "38%" },
      { cells["base ms"], cells["cand ms"], cells["speedup [95% CI]"], cells["torch ms"], cells["vs torch [95% CI]"],
        cells["vs compiled [95% CI]"], cells["%SOL"] })
    local out = {}
    results.list({ rec }, function(...) for _, x in ipairs({ ... }) do out[#out + 1] = x end end)
    assert.matches(" 2%.06 %[1%.75, 2%.25%]\n$", table.concat(out))
  end)

  it("exports the same figures from a results database", function()
    local dir = support.tmpdir()
    local db = assert(store.open(dir .. "/r.db"))
    local rec = record()
    rec.run_id = db:begin_run{ command = { "kreach", "eval" }, config_hash = "h", device = { name = "NVIDIA H200" } }
    local id = db:record_evaluation(rec)
    local data = results.fetch(db)
    db:close()
    local out = {}
    results.write("csv", data, function(...) for _, s in ipairs({ ... }) do out[#out + 1] = s end end)
    local lines = {}
    for l in table.concat(out):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    -- stored by kreach itself: measured here, and the model the record names
    check_csv(lines, tostring(id), tostring(rec.run_id), rec.finished_at, { model = "m", measured_here = "true" })
    out = {}
    results.write("kernelbench", data, function(...) for _, s in ipairs({ ... }) do out[#out + 1] = s end end)
    local kb = cjson.decode(table.concat(out))["19"][1]
    assert.same({ 6, 4.125, 5.25, 2.0625, 2.5, 1.25, "NVIDIA H200" }, { kb.sample_id, kb.metadata.speedup, kb.metadata.ref_runtime,
      kb.metadata.speedup_vs_kreach_baseline, kb.metadata.baseline_ms, kb.runtime, kb.runtime_stats.hardware })
  end)
end)
