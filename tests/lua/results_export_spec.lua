-- kreach results export --format kernelbench with known answers: every verdict kreach gives
-- becomes KernelBench's compiled / correctness / runtime fields as stated here, the timing's
-- statistics and the speedups go where KernelBench and our metadata put them, baseline-only rows
-- are left out, and eval_results.json is ordered by problem id, then sample, then evaluation.
-- Hand-built rows (the shape of kreach.results.store's evaluations()), then one round trip through a
-- results database.
local results = require "kreach.results.report"
local json = require "kreach.json"
local store = require "kreach.results.store"
local verdict = require "kreach.verdict"
local cjson = require "cjson"
local lfs = require "lfs"
local support = require "support"

-- Every verdict of kreach.verdict and what its KernelBench sample says: compiled (the
-- candidate was built and loaded: false only where it never was) and correctness (only a
-- correct one). false: no sample (a baseline timed alone has no candidate; a skipped candidate
-- was never judged). A timeout after the build (here in phase 'check') counts as compiled, as
-- runtime errors do; one while loading or building does not (tested below).
local EXPECTED = {
  correct = { compiled = true, correctness = true },
  incorrect = { compiled = true, correctness = false },
  runtime_error = { compiled = true, correctness = false },
  timeout = { compiled = true, correctness = false },
  skipped = false,
  compile_error = { compiled = false, correctness = false },
  invalid_candidate = { compiled = false, correctness = false },
  baseline = false,
}
local REASON = { incorrect = "wrong_values", runtime_error = "illegal address", timeout = "phase 'check' ran past its limit",
                 skipped = "no python3 with CUDA PyTorch", compile_error = "error: expected ';'",
                 invalid_candidate = "candidate.lua:3: attempt to call a nil value" }

-- a row as kreach.results.store's evaluations() gives it, of problem 19, without timing
local function row(v, extra)
  local r = { id = 1, run_id = 1, candidate_ref = v ~= "baseline" and 1 or nil, problem_id = 19,
              problem_name = "19_ReLU", candidate_hash = "c0ffee", dtype = "f32", verdict = v, reason = REASON[v] }
  for k, x in pairs(extra or {}) do r[k] = x end
  return r
end

describe("the KernelBench export, known answers", function()
  it("has an expected sample for every verdict kreach has", function()
    for _, v in ipairs(verdict.KINDS) do
      assert.is_true(EXPECTED[v] ~= nil, "no expected KernelBench sample for verdict " .. v)
    end
  end)

  for _, v in ipairs(verdict.KINDS) do
    it(("exports verdict %s as %s"):format(v, EXPECTED[v] and ("compiled = %s, correctness = %s"):format(
      EXPECTED[v].compiled, EXPECTED[v].correctness) or "no sample"), function()
      local s = results.kernelbench_sample(row(v))
      if not EXPECTED[v] then
        assert.is_nil(s)
        return
      end
      assert.same({
        sample_id = 0, compiled = EXPECTED[v].compiled, correctness = EXPECTED[v].correctness,
        metadata = { verdict = v, reason = REASON[v], dtype = "f32", kreach_eval_id = 1, kreach_run_id = 1,
                     problem = "19_ReLU", candidate_hash = "c0ffee" },
        runtime = -1.0, runtime_stats = {},
      }, s)
      assert.equals("float", math.type(s.runtime))
    end)
  end

  it("exports a timed correct candidate with its statistics and speedups", function()
    -- samples 1, 1, 3, 3 ms: median and mean 2, population std sqrt((1 + 1 + 1 + 1) / 4) = 1
    local r = row("correct", { id = 7, run_id = 2, origin = { model = "m", sample = 4 }, baseline_ms = 2.5,
      candidate_ms = 2.0, speedup = 1.25, pytorch_ms = 3.0, speedup_pytorch = 1.5, pytorch_compiled_ms = 2.4,
      speedup_compiled = 1.2,
      timing = { candidate = { summary = { n = 4, median = 2, mean = 2, min = 1, max = 3 }, samples = { 1, 1, 3, 3 } } } })
    local s = results.kernelbench_sample(r, "NVIDIA H200")
    assert.same({
      sample_id = 4, compiled = true, correctness = true,
      metadata = { verdict = "correct", dtype = "f32", kreach_eval_id = 7, kreach_run_id = 2, problem = "19_ReLU",
                   candidate_hash = "c0ffee", speedup = 1.5, ref_runtime = 3.0, speedup_compiled = 1.2,
                   ref_runtime_compiled = 2.4, speedup_vs_kreach_baseline = 1.25, baseline_ms = 2.5 },
      runtime = 2.0,
      runtime_stats = { mean = 2.0, std = 1.0, min = 1.0, max = 3.0, num_trials = 4, hardware = "NVIDIA H200",
                        device = "cuda:0" },
    }, s)
    -- KernelBench reads floats: the integers of the summary are written as floats
    for _, k in ipairs({ "mean", "std", "min", "max" }) do assert.equals("float", math.type(s.runtime_stats[k]), k) end
    assert.equals("float", math.type(s.runtime))
    assert.equals('{"device":"cuda:0","hardware":"NVIDIA H200","max":3.0,"mean":2.0,"min":1.0,"num_trials":4,"std":1.0}',
      json.encode(s.runtime_stats))
    -- without the run's device name, the hardware is null
    assert.equals(json.null, results.kernelbench_sample(r).runtime_stats.hardware)
  end)

  it("counts a timeout while the candidate was loaded or built as not compiled, any other as compiled", function()
    local function c(reason) return results.kernelbench_sample(row("timeout", { reason = reason })).compiled end
    assert.is_false(c("phase 'load' ran past its limit of 60 s"))
    assert.is_false(c("phase 'compile' ran past its limit of 60 s"))
    assert.is_false(c("c.py: the Python worker did not answer within 600 s while loading it"))
    assert.is_true(c("phase 'trial1.forward' ran past its limit of 60 s"))
    assert.is_true(c("phase 'timing' ran past its limit of 60 s"))
    assert.is_true(c("c.py: the Python worker did not answer within 60 s while calling it"))
    -- a candidate's words cannot pass for the phase: the reason must start with it
    assert.is_true(c("phase 'trial1.forward' ran past its limit: phase 'compile' ran past"))
  end)

  it("takes the runtime from candidate_ms without timing statistics, else -1", function()
    local s = results.kernelbench_sample(row("correct", { candidate_ms = 1.5 }))
    assert.same({ 1.5, {} }, { s.runtime, s.runtime_stats })
    s = results.kernelbench_sample(row("correct", { candidate_ms = 2 }))
    assert.equals(2.0, s.runtime)
    assert.equals("float", math.type(s.runtime))
    assert.equals(-1.0, results.kernelbench_sample(row("incorrect")).runtime)
  end)

  it("writes eval_results.json by problem id in numeric order, samples in order, baselines and skips left out", function()
    local rows = {
      row("correct", { id = 1, problem_id = 100, problem_name = "100_HingeLoss", origin = { sample = 1 }, candidate_ms = 1.0 }),
      row("invalid_candidate", { id = 2, problem_id = 19, origin = { sample = 2 } }),
      row("baseline", { id = 3, problem_id = 19, baseline_ms = 0.5 }),
      row("compile_error", { id = 4, problem_id = 19, origin = { sample = 0 } }),
      row("incorrect", { id = 5, problem_id = 2, problem_name = "2_Standard_matrix_multiplication_" }),
      row("timeout", { id = 6, problem_id = 19, origin = { sample = 2 } }),
      row("skipped", { id = 7, problem_id = 19, origin = { sample = 3 } }),
    }
    local out = {}
    local n = results.write("kernelbench", { rows = rows, runs = { [1] = { device = { name = "NVIDIA H200" } } } },
      function(...) for _, s in ipairs({ ... }) do out[#out + 1] = s end end)
    local text = table.concat(out)
    assert.equals(5, n)
    -- problems 2, 19, 100 (not "100" < "19" < "2"); in 19: samples 0, 2 (eval 2), 2 (eval 6)
    local keys = {}
    for k in text:gmatch('\n"(%d+)": %[') do keys[#keys + 1] = k end
    assert.same({ "2", "19", "100" }, keys)
    local doc = cjson.decode(text)
    local function brief(s) return { s.metadata.kreach_eval_id, s.sample_id, s.compiled, s.correctness, s.runtime } end
    assert.same({ 5, 0, true, false, -1 }, brief(doc["2"][1]))
    assert.same({ { 4, 0, false, false, -1 }, { 2, 2, false, false, -1 }, { 6, 2, true, false, -1 } },
      { brief(doc["19"][1]), brief(doc["19"][2]), brief(doc["19"][3]) })
    assert.equals(3, #doc["19"])
    assert.same({ 1, 1, true, true, 1 }, brief(doc["100"][1]))
    -- one sample a line, as KernelBench's own files are
    assert.truthy(text:find('\n  {"compiled":false,"correctness":false,"metadata":{"candidate_hash":"c0ffee",'
      .. '"dtype":"f32","kreach_eval_id":2,', 1, true))
    -- nothing to export: an empty object
    out = {}
    assert.equals(0, results.kernelbench({ row("baseline") }, {}, function(s) out[#out + 1] = s end))
    assert.equals("{}\n", table.concat(out))
  end)

  it("exports every verdict the same way from a results database", function()
    local dir = support.tmpdir()
    local db = assert(store.open(dir .. "/r.db"))
    local run = db:begin_run{ command = { "kreach", "eval" }, config_hash = "h", device = { name = "NVIDIA H200" } }
    for i, v in ipairs(verdict.KINDS) do
      db:record_evaluation{ run_id = run, problem = { suite = "kernelbench-l1", problem_id = 19, name = "19_ReLU", file_hash = "p" },
                            candidate = v ~= "baseline" and { hash = "h" .. i, source = "return {}\n", origin = { sample = i } } or nil,
                            eval_key = "k" .. i, dtype = "f32", verdict = v, reason = REASON[v] }
    end
    local out = {}
    local n = results.export(db, "kernelbench", {}, function(...) for _, s in ipairs({ ... }) do out[#out + 1] = s end end)
    db:close()
    for f in lfs.dir(dir) do if f ~= "." and f ~= ".." then assert(os.remove(dir .. "/" .. f)) end end
    assert(os.remove(dir))
    assert.equals(#verdict.KINDS - 2, n)
    local got = { skipped = false, baseline = false }
    for _, s in ipairs(cjson.decode(table.concat(out))["19"]) do
      got[s.metadata.verdict] = { compiled = s.compiled, correctness = s.correctness }
      assert.equals(-1, s.runtime)
    end
    assert.same(EXPECTED, got)
  end)
end)
