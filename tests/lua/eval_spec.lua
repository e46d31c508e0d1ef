-- kreach.run.evaluate without a GPU: what a run evaluates (candidate files, manifests, matching to
-- problems), the keys evaluations are stored under, and the summary statistics.
local campaign = require "kreach.run.campaign"
local ev = require "kreach.run.evaluate"
local evaluation = require "kreach.results.evaluation"

local support = require "support"
local tmpdir, write = support.tmpdir, support.spit

describe("canonical JSON", function()
  it("does not depend on the order keys were inserted in", function()
    local a, b = {}, {}
    for i = 1, 50 do a["k" .. i] = i end
    for i = 50, 1, -1 do b["k" .. i] = i end
    assert.equals(campaign.canonical(a), campaign.canonical(b))
    assert.equals('{"a":1,"b":[1,2,{"c":true}],"d":"x\\"y"}', campaign.canonical({ d = 'x"y', b = { 1, 2, { c = true } }, a = 1 }))
    -- a number is a number, as in JSON (options arrive through JSON as floats); floats keep
    -- every bit
    assert.equals(campaign.canonical({ x = 1 }), campaign.canonical({ x = 1.0 }))
    assert.equals('{"x":0.10000000000000001}', campaign.canonical({ x = 0.1 }))
    assert.has_error(function() campaign.canonical({ f = print }) end)
  end)

  it("gives stable hashes", function()
    assert.equals(32, #campaign.hash("abc"))
    assert.equals(campaign.hash("abc"), campaign.hash("abc"))
    assert.not_equals(campaign.hash("abc"), campaign.hash("abd"))
  end)
end)

describe("the timed inputs' salt", function()
  it("is a whole number of 2^40 or more, below 2^41, new each time", function()
    local seen = {}
    for _ = 1, 20 do
      local s = ev.draw_salt()
      assert.equals("integer", math.type(s))
      assert.is_true(s >= 1 << 40 and s < 1 << 41)
      assert.is_nil(seen[s])
      seen[s] = true
    end
  end)
end)

describe("candidate files", function()
  it("takes <id>_<name>.lua files of a directory in name order, and nothing else", function()
    local d = tmpdir()
    write(d .. "/019_relu.lua", "return {}")
    write(d .. "/001_mm.lua", "return {}")
    write(d .. "/notes.txt", "x")
    write(d .. "/helper.lua", "return {}")
    local files, errors = ev.candidate_files({ d })
    assert.same({}, errors)
    assert.equals(2, #files)
    assert.equals(d .. "/001_mm.lua", files[1].path)
    assert.equals(d .. "/019_relu.lua", files[2].path)
  end)

  it("follows a manifest when there is one", function()
    local d = tmpdir()
    write(d .. "/a.lua", "return {}")
    write(d .. "/manifest.json", '[{"file": "a.lua", "problem": 19, "origin": {"model": "m", "sample": 3}}, {"nofile": 1}]')
    local files, errors = ev.candidate_files({ d })
    assert.equals(1, #files)
    assert.equals(d .. "/a.lua", files[1].path)
    assert.equals(19, files[1].problem)
    assert.same({ model = "m", sample = 3 }, files[1].origin)
    assert.equals(1, #errors)
    assert.truthy(errors[1]:find("entry 2 has no \"file\"", 1, true))
  end)

  it("reports what it cannot use", function()
    local d = tmpdir()
    local _, errors = ev.candidate_files({ d, d .. "/missing.lua" })
    assert.equals(2, #errors)
    assert.truthy(errors[1]:find("no candidate files", 1, true))
    assert.truthy(errors[2]:find("no such file", 1, true))
    write(d .. "/manifest.json", "{not json")
    local _, e2 = ev.candidate_files({ d })
    assert.truthy(e2[1]:find("manifest.json: not a JSON list", 1, true))
  end)
end)

describe("planning a run", function()
  it("matches candidates to the suite's problems by id and says why it skips the others", function()
    local d = tmpdir()
    write(d .. "/001_mm.lua", "return {}")
    write(d .. "/019_relu.lua", "return {}")
    write(d .. "/060_conv.lua", "return {}")
    local items, skipped = ev.plan("kernelbench-l1-repr", { d })
    assert.equals(1, #items)
    assert.equals(1, items[1].problem_id)
    assert.truthy(items[1].problem_path:find("001_Square_matrix_multiplication_.lua", 1, true))
    assert.equals(2, #skipped)
    local whys = { skipped[1].why, skipped[2].why }
    table.sort(whys)
    assert.equals("problem 19 is not in suite kernelbench-l1-repr", whys[1])
    assert.equals("problem 60 is not in suite kernelbench-l1-repr", whys[2])
  end)

  it("gives every candidate to a single problem when the target is a problem", function()
    local d = tmpdir()
    write(d .. "/anything.lua", "return {}")
    local items = ev.plan("19", { d .. "/anything.lua" })
    assert.equals(1, #items)
    assert.equals(19, items[1].problem_id)
    assert.equals("19_ReLU", items[1].problem_name)
  end)

  it("ships example candidates for the representative suite", function()
    local items, skipped = ev.plan("kernelbench-l1-repr", { "examples" })
    assert.same({}, skipped)
    assert.truthy(#items >= 4)
  end)
end)

describe("the summary of a run", function()
  local rows = {
    { verdict = "correct", speedup = 2.0, speedup_lo = 1.9 },
    { verdict = "correct", speedup = 1.2, speedup_lo = 0.99 },
    { verdict = "correct", speedup = 0.5, speedup_lo = 0.45 },
    { verdict = "incorrect", reason = "wrong_values" },
    { verdict = "compile_error" },
  }

  it("counts wins and fast_p over all evaluated candidates", function()
    local s = evaluation.summary(rows)
    assert.equals(5, s.n)
    assert.equals(3, s.correct)
    assert.equals(1, s.wins)                -- only the interval above 1 counts
    assert.equals(1, s.against.baseline.wins)
    assert.near(0.2, s.win_rate, 1e-12)
    assert.near(1.2, s.median_speedup, 1e-12)
    assert.near((2.0 * 1.2 * 0.5) ^ (1 / 3), s.geomean_speedup, 1e-12)
    local fp = {}
    for _, f in ipairs(s.fast_p) do fp[f.p] = f.value end
    assert.near(0.6, fp[0], 1e-12)          -- fast_0 is the correct fraction
    assert.near(0.4, fp[0.5], 1e-12)        -- 0.5 is not > 0.5
    assert.near(0.4, fp[0.8], 1e-12)
    assert.near(0.4, fp[1], 1e-12)
    assert.near(0.2, fp[1.5], 1e-12)
    assert.near(0, fp[2], 1e-12)            -- 2.0 is not > 2
    assert.equals(3, s.by_verdict.correct)
    assert.equals(1, s.by_verdict.incorrect)
  end)

  it("sets KernelBench's allclose beside kreach's verdicts, and counts where they disagree", function()
    local rs = {
      { problem_id = 19, verdict = "correct", kernelbench = "pass", candidate_path = "a.py" },
      { problem_id = 63, verdict = "correct", kernelbench = "fail", candidate_path = "b.lua" },  -- TF32's false negative
      { problem_id = 19, verdict = "incorrect", reason = "incomplete_write", kernelbench = "pass", candidate_path = "c.py" },
      { problem_id = 19, verdict = "compile_error", candidate_path = "d.py" },                   -- nothing compared
    }
    local s = evaluation.summary(rs)
    assert.same({ compared = 3, pass = 2, rejects_correct = 1, accepts_incorrect = 1 }, s.kernelbench)
    assert.is_nil(evaluation.summary({ rs[4] }).kernelbench)
    local out = {}
    local sink = { write = function(_, ...) for _, x in ipairs({ ... }) do out[#out + 1] = x end end }
    ev.report(rs, s, sink)
    local text = table.concat(out)
    assert.truthy(text:find("KernelBench's allclose: passes 2 of 3 compared; it rejects 1 that kreach finds correct and accepts 1 that kreach finds incorrect", 1, true))
    assert.truthy(text:find("  KB  ", 1, true))
  end)

  it("has nothing to say about an empty run", function()
    local s = evaluation.summary({})
    assert.equals(0, s.n)
    assert.is_nil(s.median_speedup)
    assert.is_nil(s.geomean_speedup)
    assert.is_nil(s.win_rate)
  end)

  it("prints a table and the summary lines", function()
    local out = {}
    local sink = { write = function(_, ...) for _, x in ipairs({ ... }) do out[#out + 1] = x end end }
    local r = { problem_id = 19, problem_name = "19_ReLU", candidate_path = "c/019_relu.lua", verdict = "correct",
                baseline_ms = 3.1, candidate_ms = 3.0, speedup = 1.033, speedup_lo = 1.01, speedup_hi = 1.05, sol_fraction = 0.97 }
    ev.report({ r }, evaluation.summary({ r }), sink)
    local text = table.concat(out)
    assert.truthy(text:find("019 19_ReLU", 1, true))
    assert.truthy(text:find("1.033x [1.010, 1.050]", 1, true))
    assert.truthy(text:find("97%", 1, true))
    assert.truthy(text:find("1 evaluated, 1 correct (100.0%)", 1, true))
    assert.truthy(text:find("against kreach's baseline: wins 1 (100.0%", 1, true))
    assert.truthy(text:find("fast_1 100.0%, fast_1.5 0.0%", 1, true))
    -- no PyTorch time: no PyTorch columns and no PyTorch line
    assert.falsy(text:find("torch ms", 1, true))
    assert.falsy(text:find("PyTorch", 1, true))
  end)

  it("states speedups against PyTorch beside the baseline's, with KernelBench's fast_p", function()
    local rs = {
      { problem_id = 19, problem_name = "19_ReLU", candidate_path = "a.lua", verdict = "correct", baseline_ms = 2, candidate_ms = 1,
        speedup = 2, speedup_lo = 1.9, speedup_hi = 2.1, pytorch_ms = 4, speedup_pytorch = 4, speedup_pytorch_lo = 3.8,
        speedup_pytorch_hi = 4.2 },
      { problem_id = 23, problem_name = "23_Softmax", candidate_path = "b.lua", verdict = "correct", baseline_ms = 1, candidate_ms = 2,
        speedup = 0.5, speedup_lo = 0.45, speedup_hi = 0.55, pytorch_ms = 1.8, speedup_pytorch = 0.9, speedup_pytorch_lo = 0.85,
        speedup_pytorch_hi = 0.95 },
      { problem_id = 26, problem_name = "26_GELU", candidate_path = "c.lua", verdict = "incorrect", reason = "wrong_values" },
    }
    local s = evaluation.summary(rs)
    assert.equals(1, s.against.pytorch.wins)
    assert.near(2, s.against.pytorch.measured, 0)
    assert.near(math.sqrt(4 * 0.9), s.against.pytorch.geomean_speedup, 1e-12)
    local fp = {}
    for _, f in ipairs(s.against.pytorch.fast_p) do fp[f.p] = f.value end
    assert.near(2 / 3, fp[0.8], 1e-12)
    assert.near(1 / 3, fp[1], 1e-12)
    assert.is_nil(s.against.compiled)
    local out = {}
    local sink = { write = function(_, ...) for _, x in ipairs({ ... }) do out[#out + 1] = x end end }
    ev.report(rs, s, sink)
    local text = table.concat(out)
    assert.truthy(text:find("vs torch [95% CI]", 1, true))
    assert.truthy(text:find("4.000x [3.800, 4.200]", 1, true))
    assert.truthy(text:find("against PyTorch eager (KernelBench's fast_p): wins 1 (33.3%", 1, true))
    assert.falsy(text:find("compiled", 1, true))
  end)
end)
