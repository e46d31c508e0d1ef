-- kreach.results.summary's `kreach results summary` half with known answers: the database of
-- tests/lua/summary_store.lua (its header lists every row), read through the store's read path,
-- and every figure checked against values worked out by hand below.
local summary = require "kreach.results.summary"
local report = require "kreach.results.report"
local store = require "kreach.results.store"
local errors = require "kreach.errors"
local json = require "kreach.json"
local fixture = require "summary_store"

local close = fixture.close

local function data()
  local ok, d = store.read(fixture.path(), summary.read)
  assert(ok, d)
  return d
end

local function summarize(by, against)
  return summary.compute(data(), { by = by, against = against })
end

local function group(s, name)
  for _, g in ipairs(s.groups) do if g.name == name then return g end end
  error("no group " .. name)
end

local function fast(g)
  local t = {}
  for _, f in ipairs(g.fast_p) do t[#t + 1] = f.value end
  return t
end

local function close_all(want, got, what)
  assert.equals(#want, #got, what)
  for i = 1, #want do close(want[i], got[i], ("%s[%d]"):format(what, i)) end
end

describe("kreach.results.summary.compute by model, against kreach's baseline", function()
  local s
  setup(function() s = summarize({ "model" }, "baseline") end)

  it("groups by the candidate's origin, the generations table, else (unknown)", function()
    assert.same({ "(unknown)", "m-a", "m-b" }, { s.groups[1].name, s.groups[2].name, s.groups[3].name })
    -- the baseline timed alone is left out; a1's two evaluations count once (the newest)
    assert.same({ baselines = 1, repeats = 1 }, s.left_out)
  end)

  it("counts m-a's verdicts, correct rate and pass@k", function()
    local g = group(s, "m-a")
    -- a1..a8: 8 evaluations (a1 once), correct a1 a2 a3 a6, incorrect a4 a7
    assert.equals(8, g.evaluations)
    assert.same({ correct = 4, incorrect = 2, compile_error = 1, runtime_error = 1, timeout = 0, skipped = 0,
                  invalid_candidate = 0 }, g.verdicts)
    assert.equals(8, g.judged)
    close(0.5, g.correct_rate, "correct rate") -- 4 / 8
    assert.equals(3, g.problems)
    -- 1_Matmul n = 5, c = 3; 19_ReLU n = 2, c = 1; 23_Softmax n = 1, c = 0
    -- pass@1 = (3/5 + 1/2 + 0) / 3 = 1.1 / 3
    assert.equals(2, #g.pass_at) -- no problem has 10 samples
    close(1.1 / 3, g.pass_at[1].value, "pass@1")
    assert.equals(3, g.pass_at[1].problems)
    -- pass@5: 1_Matmul alone has 5 samples; 2 incorrect < 5 drawn: 1
    assert.equals(5, g.pass_at[2].k)
    close(1, g.pass_at[2].value, "pass@5")
    assert.equals(1, g.pass_at[2].problems)
  end)

  it("states m-a's speedups, verified ones and best-of-samples", function()
    local g = group(s, "m-a")
    -- correct and timed: 2.0 (a1's newest), 1.2, 0.5, 4.0; median (1.2 + 2.0) / 2 = 1.6;
    -- geometric mean (2 * 1.2 * 0.5 * 4) ^ (1/4) = 4.8 ^ 0.25
    assert.equals(4, g.speedup.count)
    close(1.6, g.speedup.median, "median")
    close(4.8 ^ 0.25, g.speedup.geomean, "geomean")
    -- verified (lo > 1): a1 (lo 1.8) and a6 (lo 3.0); a2's lo is 0.9. Median 3, geomean sqrt(8)
    assert.equals(2, g.verified.count)
    close(3.0, g.verified.median, "verified median")
    close(math.sqrt(8), g.verified.geomean, "verified geomean")
    -- best of each problem's samples: 1_Matmul 2.0, 19_ReLU 4.0, 23_Softmax none
    assert.equals(2, g.best.count)
    assert.equals(2, g.best.verified)
    close(3.0, g.best.median, "best median")
    close(math.sqrt(8), g.best.geomean, "best geomean")
    assert.equals("kernelbench-level1/19_ReLU", g.best.problems[2].problem)
    close(4.0, g.best.problems[2].speedup, "19_ReLU's best")
  end)

  it("gives m-a's fast_p over its 3 problems (strictly faster than p)", function()
    -- p = 0: 1_Matmul and 19_ReLU have a correct candidate: 2/3; up to p = 1.5 their best (2.0,
    -- 4.0) stay above p: 2/3; p = 2: 2.0 is not above 2, only 19_ReLU: 1/3
    close_all({ 2 / 3, 2 / 3, 2 / 3, 2 / 3, 2 / 3, 1 / 3 }, fast(group(s, "m-a")), "fast_p")
  end)

  it("names the problems where KernelBench's allclose and kreach disagree", function()
    local kb = group(s, "m-a").kernelbench
    -- compared: a1 a2 a3 a4 a6 a7 (6); allclose passes a1 a2 a6 a7 (4)
    assert.equals(6, kb.compared)
    assert.equals(4, kb.pass)
    -- a7 (19_ReLU): allclose passes what kreach finds nondeterministic
    assert.equals(1, kb.kb_pass_not_correct.count)
    assert.same({ { problem = "kernelbench-level1/19_ReLU", count = 1 } }, kb.kb_pass_not_correct.problems)
    -- a3 (1_Matmul): allclose fails what kreach finds correct
    assert.equals(1, kb.kb_fail_correct.count)
    assert.same({ { problem = "kernelbench-level1/1_Matmul", count = 1 } }, kb.kb_fail_correct.problems)
  end)

  it("counts the candidates whose time was measured with a caveat", function()
    local t = group(s, "m-a").timing
    assert.equals(1, t.other_streams) -- a6: 3 calls on other streams
    assert.equals(1, t.warned)
    assert.equals(1, t.methods["in-process"])
    assert.equals(0, group(s, "m-b").timing.other_streams)
  end)

  it("leaves a skipped evaluation out of m-b's denominators, and counts an invalid candidate as incorrect", function()
    local g = group(s, "m-b")
    -- b1 correct, b2 skipped, b3 timeout, b4 invalid_candidate
    assert.equals(4, g.evaluations)
    assert.equals(3, g.judged)
    close(1 / 3, g.correct_rate, "correct rate")
    -- 1_Matmul n1 c1, 19_ReLU n1 (b3; b2 skipped) c0, 23_Softmax n1 c0: pass@1 = 1/3
    assert.equals(3, g.problems)
    assert.equals(1, #g.pass_at)
    close(1 / 3, g.pass_at[1].value, "pass@1")
    -- b1: 1.5 [1.1, 1.9], verified; fast_1.5: 1.5 is not above 1.5
    close(1.5, g.verified.geomean, "verified geomean")
    close_all({ 1 / 3, 1 / 3, 1 / 3, 1 / 3, 0, 0 }, fast(g), "fast_p")
  end)

  it("gives (unknown) its one correct candidate, not verified", function()
    local g = group(s, "(unknown)")
    assert.equals(1, g.correct)
    assert.equals(0, g.verified.count)
    assert.is_nil(g.verified.median)
    -- 1.0 is above 0, 0.5, 0.8, not above 1
    close_all({ 1, 1, 1, 0, 0, 0 }, fast(g), "fast_p")
  end)
end)

describe("kreach.results.summary.compute of everything", function()
  it("pools the samples of every model by problem", function()
    local g = summarize({}, "baseline").groups[1]
    assert.equals("all", g.name)
    -- 13 evaluations: correct 6 (a1 a2 a3 a6 b1 u1), judged 12 (b2 skipped)
    assert.equals(13, g.evaluations)
    assert.equals(12, g.judged)
    close(0.5, g.correct_rate, "correct rate")
    -- 1_Matmul n6 c4, 19_ReLU n3 c1, 23_Softmax n3 c1: pass@1 = (4/6 + 1/3 + 1/3) / 3 = 4/9;
    -- pass@5 over 1_Matmul alone: 2 incorrect < 5: 1
    close(4 / 9, g.pass_at[1].value, "pass@1")
    close(1, g.pass_at[2].value, "pass@5")
    -- speedups 0.5 1.0 1.2 1.5 2.0 4.0: median 1.35, geomean 7.2 ^ (1/6)
    close(1.35, g.speedup.median, "median")
    close(7.2 ^ (1 / 6), g.speedup.geomean, "geomean")
    -- verified 1.5 2.0 4.0: median 2, geomean 12 ^ (1/3)
    assert.equals(3, g.verified.count)
    close(2.0, g.verified.median, "verified median")
    close(12 ^ (1 / 3), g.verified.geomean, "verified geomean")
    -- best: 1_Matmul 2.0, 19_ReLU 4.0, 23_Softmax 1.0 (u1): geomean 8 ^ (1/3) = 2
    close(2.0, g.best.geomean, "best geomean")
    assert.equals(2, g.best.verified)
    close_all({ 1, 1, 1, 2 / 3, 2 / 3, 1 / 3 }, fast(g), "fast_p")
  end)
end)

describe("kreach.results.summary.compute against PyTorch eager", function()
  it("takes the speedups against PyTorch, and fast_0 from correctness alone", function()
    local s = summarize({ "model" }, "pytorch")
    local g = group(s, "m-a")
    -- against PyTorch: a1 1.6 [1.5, 1.7], a6 0.9 [0.8, 1.0]: median 1.25, geomean sqrt(1.44) = 1.2
    assert.equals(2, g.speedup.count)
    close(1.25, g.speedup.median, "median")
    close(1.2, g.speedup.geomean, "geomean")
    assert.equals(1, g.verified.count)
    -- fast_0: 2 of 3 problems solved; fast_1: 1_Matmul alone (1.6); fast_2: none
    close_all({ 2 / 3, 2 / 3, 2 / 3, 1 / 3, 1 / 3, 0 }, fast(g), "fast_p")
    -- u1 was not timed against PyTorch: it counts in fast_0 only
    close_all({ 1, 0, 0, 0, 0, 0 }, fast(group(s, "(unknown)")), "fast_p (unknown)")
  end)
end)

describe("kreach.results.summary.compute groups", function()
  it("by run: the two evaluations of a1 are in different groups", function()
    local s = summarize({ "run" }, "baseline")
    assert.equals(2, #s.groups)
    assert.equals("1", s.groups[1].name)
    assert.equals(13, s.groups[1].evaluations)
    assert.equals(1, s.groups[2].evaluations)
    assert.equals(0, s.left_out.repeats)
  end)
  it("by model and problem, in that order", function()
    local s = summarize({ "model", "problem" }, "baseline")
    assert.equals("m-a / kernelbench-level1/1_Matmul", s.groups[2].name)
    assert.same({ model = "m-a", problem = "kernelbench-level1/1_Matmul" }, s.groups[2].key)
    assert.equals(7, #s.groups) -- (unknown) 1, m-a 3, m-b 3
  end)
  it("by category: from what the command loads, (unknown) where nothing loads", function()
    local d = data()
    local cats = summary.categories(d.rows, function(paths)
      local r = {}
      for i, p in ipairs(paths) do r[i] = p:find("Matmul") and { value = { category = "matmul" } } or { why = "gone" } end
      return r
    end)
    local s = summary.compute(d, { by = { "category" }, categories = cats })
    assert.same({ "(unknown)", "matmul" }, { s.groups[1].name, s.groups[2].name })
    assert.equals(6, s.groups[2].evaluations) -- a1..a5, b1
  end)
  it("by category: a file's subcategory after a '/'", function()
    local d = data()
    local cats = summary.categories(d.rows, function(paths)
      local r = {}
      for i, p in ipairs(paths) do
        r[i] = p:find("Matmul") and { value = { category = "convolution", subcategory = "transposed 2D" } }
          or { value = { category = "matmul" } }
      end
      return r
    end)
    local s = summary.compute(d, { by = { "category" }, categories = cats })
    local names = {}
    for i, g in ipairs(s.groups) do names[i] = g.name end
    assert.same({ "convolution/transposed 2D", "matmul" }, names)
    assert.equals(6, s.groups[1].evaluations) -- a1..a5, b1
  end)
end)

describe("kreach.results.summary.compute options", function()
  it("parses --by and refuses an unknown or repeated key", function()
    assert.same({}, summary.parse_by(""))
    assert.same({ "model", "dtype" }, summary.parse_by("model, dtype"))
    local ok, e = pcall(summary.parse_by, "model,colour")
    assert.is_false(ok)
    assert.equals(2, errors.status(e))
    assert.matches("unknown key 'colour'", errors.message(e), 1, true)
    ok, e = pcall(summary.parse_by, "model,model")
    assert.is_false(ok)
    assert.equals(2, errors.status(e))
  end)
  it("refuses an unknown reference", function()
    assert.equals("compiled", summary.parse_against("compiled"))
    local ok, e = pcall(summary.parse_against, "triton")
    assert.is_false(ok)
    assert.equals(2, errors.status(e))
  end)
end)

describe("kreach.results.summary.compute output", function()
  it("writes a text table, Markdown, CSV and one JSON document", function()
    local s = summarize({ "model" }, "baseline")
    local out = {}
    local function w(...) for _, x in ipairs{ ... } do out[#out + 1] = x end end
    summary.text(s, w)
    local t = table.concat(out)
    assert.matches("m%-a +8 +4 +2 +1 +1 +0 +0 +0 +50%.0%% +3 +0%.367 +1%.000 +%-", t)
    assert.matches("KernelBench's allclose fails 1 candidate that kreach finds correct: kernelbench-level1/1_Matmul", t, 1, true)
    out = {}
    summary.markdown(s, w)
    assert.matches("| m-a | 8 | 4 |", table.concat(out), 1, true)
    out = {}
    summary.csv(s, w, report.csv_field)
    local lines = {}
    for l in table.concat(out):gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equals(4, #lines)
    assert.matches("^model,evaluations,correct,", lines[1])
    assert.matches("^m%-a,8,4,2,1,1,0,0,0,8,0%.5,3,", lines[3])
    local doc = json.decode(json.encode(summary.json_doc(s, "x.db")))
    assert.equals("baseline", doc.against)
    assert.equals(3, #doc.groups)
    assert.equals(4, doc.groups[2].correct)
  end)
end)
