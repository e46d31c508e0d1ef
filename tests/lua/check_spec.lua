-- The correctness policy without a GPU: thresholds, their floors and caps, the judgement of an
-- output's metrics (the trivial-output guard included) with known answers from hand-built
-- vectors, the bookkeeping of a call (unwritten outputs, changed inputs), the policy's options,
-- and the other input distributions the trials draw from.
local check = require "kreach.judge.check"
local problem = require "kreach.problem"
local compare = require "kreach.ops.compare"

-- Metrics as kreach.ops' metrics() reports them, for an output of n elements whose oracle has
-- mean `mu`, root-mean-square `rms` and spread `sd` around its mean, with a given error.
local function metrics(o)
  local n = o.n or 1000
  local m = { n = n, finite = n, nonfinite = o.nonfinite or 0, special_mismatch = 0 }
  m.sum_r2 = n * o.rms ^ 2
  m.sum_c2 = n * o.sd ^ 2
  m.sum_d2 = n * (o.err or 0) ^ 2
  m.max_ref, m.max_c, m.max_abs = o.max_ref or 2 * o.rms, o.max_c or 2 * o.sd, o.max_err or 2 * (o.err or 0)
  m.rel_l2 = math.sqrt(m.sum_d2 / m.sum_r2)
  m.max_scaled = m.max_abs / m.max_ref
  m.centred_l2 = m.sd == 0 and 0 or math.sqrt(m.sum_d2) / math.sqrt(m.sum_c2)
  m.centred_max = m.max_abs / m.max_c
  m.const_l2 = math.sqrt(m.sum_c2 / m.sum_r2)
  m.const_max = m.max_c / m.max_ref
  return m
end

describe("kreach.judge.check policy", function()
  local policy = check.policy()

  it("uses the dtype's thresholds where the baseline is far more accurate", function()
    local base = metrics{ rms = 1, sd = 1, err = 1e-8 }
    local th = check.thresholds(policy, "f32", base)
    assert.are.equal(1e-4, th.rel_l2)
    assert.are.equal(1e-3, th.max_scaled)
  end)

  it("never sets a threshold tighter than a multiple of the baseline's own error", function()
    local base = metrics{ rms = 1, sd = 1, err = 1e-3 } -- a baseline ten times the f32 threshold
    local th = check.thresholds(policy, "f32", base)
    assert.is_true(math.abs(th.rel_l2 - 4e-3) < 1e-12)
    -- an exact copy of the baseline's accuracy passes
    assert.is_true((check.judge(base, th)))
  end)

  it("caps the centred thresholds below what a constant output scores", function()
    local base = metrics{ rms = 2048, sd = 18, err = 4.6 } -- bf16 sums: centred error 0.26
    local th = check.thresholds(policy, "bf16", base)
    assert.are.equal(0.5, th.centred_l2)
  end)

  it("rejects wrong values and names the metric", function()
    local th = check.thresholds(policy, "f32", metrics{ rms = 1, sd = 1, err = 1e-8 })
    local ok, reason, detail = check.judge(metrics{ rms = 1, sd = 1, err = 1e-2 }, th)
    assert.is_false(ok)
    assert.are.equal("wrong_values", reason)
    assert.is_truthy(detail:find("relative L2 error", 1, true))
  end)

  it("judges nearly constant outputs on the centred metric (the trivial-output guard)", function()
    -- outputs 0.5 +- 1e-3: the best constant scores 2e-3 relative, under the bf16 threshold
    local base = metrics{ rms = 0.5, sd = 1e-3, err = 2e-4 }
    local th = check.thresholds(policy, "bf16", base)
    local constant = metrics{ rms = 0.5, sd = 1e-3, err = 1e-3 }
    local ok, reason, _, degenerate = check.judge(constant, th)
    assert.is_true(degenerate)
    assert.is_false(ok)
    assert.are.equal("trivial_output", reason)
    -- a candidate as accurate as the baseline passes
    local good = metrics{ rms = 0.5, sd = 1e-3, err = 2.5e-4 }
    assert.is_true((check.judge(good, th)))
  end)

  it("reports non-finite outputs before values", function()
    local th = check.thresholds(policy, "f32", nil)
    local ok, reason = check.judge(metrics{ rms = 1, sd = 1, nonfinite = 3 }, th)
    assert.is_false(ok)
    assert.are.equal("non_finite", reason)
  end)

  it("requires integer outputs to match exactly", function()
    local th = check.thresholds(policy, "f32", nil)
    assert.is_true((check.judge({ n = 10, mismatches = 0 }, th)))
    local ok, reason = check.judge({ n = 10, mismatches = 1 }, th)
    assert.is_false(ok)
    assert.are.equal("wrong_values", reason)
  end)

  it("takes its options as overrides and checks them", function()
    local p = check.policy{ trials = 3.0, seed = 7, tol = { f32 = { rel_l2 = 1e-5 } } }
    assert.are.equal(3, p.trials)
    assert.are.equal("integer", math.type(p.trials))
    assert.are.equal(1e-5, p.tol.f32.rel_l2)
    assert.are.equal(1e-3, p.tol.f32.max_scaled) -- merged by key
    assert.has_error(function() check.policy{ trials = 0 } end)
    assert.has_error(function() check.policy{ trials = 2, repeat_trial = 3 } end)
    assert.has_error(function() check.policy{ seed = 1.5 } end)
  end)
end)

-- ---- known answers: check.judge on metrics measured from small vectors by hand ----

-- measure(y, ref) -> the metrics kreach.ops' metrics() reports for float output y against its
-- oracle ref (lists of numbers), computed here in Lua as its two GPU passes define them: sums
-- and maxima over the oracle's finite elements, y's non-finite values there counted apart, the
-- oracle's non-finite elements compared for equality only.
local function measure(y, ref)
  local n = #ref
  local m = { n = n, finite = 0, sum_d2 = 0.0, sum_r2 = 0.0, max_abs = 0.0, max_ref = 0.0,
              nonfinite = 0, special_mismatch = 0, sum_c2 = 0.0, max_c = 0.0 }
  local function finite(x) return x == x and x ~= math.huge and x ~= -math.huge end
  local sum = 0.0
  for i = 1, n do
    local yv, rv = y[i], ref[i]
    if not finite(rv) then
      if not ((rv ~= rv and yv ~= yv) or yv == rv) then m.special_mismatch = m.special_mismatch + 1 end
    else
      m.finite = m.finite + 1
      m.sum_r2 = m.sum_r2 + rv * rv
      sum = sum + rv
      m.max_ref = math.max(m.max_ref, math.abs(rv))
      if not finite(yv) then m.nonfinite = m.nonfinite + 1
      else
        local d = math.abs(yv - rv)
        m.sum_d2 = m.sum_d2 + d * d
        m.max_abs = math.max(m.max_abs, d)
      end
    end
  end
  m.mean_ref = m.finite > 0 and sum / m.finite or 0
  for i = 1, n do
    if finite(ref[i]) then
      local c = ref[i] - m.mean_ref
      m.sum_c2 = m.sum_c2 + c * c
      m.max_c = math.max(m.max_c, math.abs(c))
    end
  end
  -- the ratios as the library derives them (known answers of their own: ops_compare_spec)
  return compare.derive(m)
end

-- n values, value(i) each
local function vec(n, value)
  local v = {}
  for i = 1, n do v[i] = value(i) end
  return v
end

-- ref plus d on every element (and `at` = {[i] = value} replacing single elements)
local function off(ref, d, at)
  local y = vec(#ref, function(i) return ref[i] + d end)
  for i, v in pairs(at or {}) do y[i] = v end
  return y
end

-- judge(...) as one list, its four results in place
local function judged(m, th) return table.pack(check.judge(m, th)) end

describe("check.judge, known answers", function()
  -- PM: 1, -1, 1, -1, ... (16 values): mean 0, sum of squares 16 (root 4), max |y*| 1, spread
  -- around the mean the same, so the best constant (0) scores 1 and 1: never degenerate
  local PM = vec(16, function(i) return i % 2 == 1 and 1.0 or -1.0 end)
  -- NC: 10.25, 9.75, ... (16 values): nearly constant. Mean 10, sum of squares
  -- 8 * (10.25^2 + 9.75^2) = 8 * (105.0625 + 95.0625) = 1601, max |y*| 10.25; around the mean
  -- +-0.25: sum of squares 16 * 0.0625 = 1, max 0.25. The constant 10 scores
  -- sqrt(1 / 1601) = 0.02499 (L2) and 0.25 / 10.25 = 0.02439 (worst)
  local NC = vec(16, function(i) return i % 2 == 1 and 10.25 or 9.75 end)

  it("measures the hand-built vectors as stated (the helper's own known answers)", function()
    local m = measure(off(PM, 0, { [5] = 1.25 }), PM)
    assert.same({ 16, 16, 0.0625, 16.0, 16.0, 0.25, 1.0, 1.0, 0, 0 },
      { m.n, m.finite, m.sum_d2, m.sum_r2, m.sum_c2, m.max_abs, m.max_ref, m.max_c, m.nonfinite, m.special_mismatch })
    assert.same({ 0.0625, 0.25, 0.0625, 0.25, 1.0, 1.0 },
      { m.rel_l2, m.max_scaled, m.centred_l2, m.centred_max, m.const_l2, m.const_max })
    m = measure(vec(16, function() return 10.0 end), NC)
    assert.same({ 1601.0, 1.0, 1.0, 10.25, 0.25, 0.25, 10.0 },
      { m.sum_r2, m.sum_c2, m.sum_d2, m.max_ref, m.max_c, m.max_abs, m.mean_ref })
    assert.near(0.024992, m.const_l2, 1e-6)
    assert.equals(1 / 41, m.const_max)
  end)

  it("requires integer outputs to match exactly: 0 mismatches pass, 1 of 4 fails", function()
    local th = check.thresholds(check.policy(), "f32", nil)
    local y, ref = { 1, 2, 3, 4 }, { 1, 2, 0, 4 }
    local mismatches = 0
    for i = 1, #ref do if y[i] ~= ref[i] then mismatches = mismatches + 1 end end
    assert.equals(1, mismatches)
    assert.same({ n = 1, false, "wrong_values", "1 of 4 elements differ" },
      { n = 1, check.judge({ n = 4, mismatches = mismatches }, th) })
    local r = judged({ n = 4, mismatches = 0 }, th)
    assert.equals(1, r.n) -- true alone: no reason, no detail
    assert.is_true(r[1])
    assert.same({ false, "wrong_values", "3 of 4 elements differ" },
      { check.judge({ n = 4, mismatches = 3 }, th) })
  end)

  local TH = { rel_l2 = 0.125, max_scaled = 0.125, centred_l2 = 0.5, centred_max = 0.5 }

  it("fails on the worst error alone (relative L2 within its threshold)", function()
    -- one element of 16 off by 0.25: relative L2 sqrt(0.0625) / 4 = 0.0625 <= 0.125, but the
    -- worst error is 0.25 / 1 = 0.25 > 0.125
    local m = measure(off(PM, 0, { [5] = 1.25 }), PM)
    assert.same({ false, "wrong_values",
                  "relative L2 error 0.0625 (threshold 0.125), worst error 0.25 of max |y*| (threshold 0.125)", false },
      { check.judge(m, TH) })
  end)

  it("fails on the worst error alone with the f32 policy's own thresholds", function()
    -- 400 values +-1 (root of the sum of squares 20), one off by 0.0015: relative L2
    -- 0.0015 / 20 = 7.5e-5 <= 1e-4, worst 1.5e-3 > 1e-3
    local ref = vec(400, function(i) return i % 2 == 1 and 1.0 or -1.0 end)
    local m = measure(off(ref, 0, { [7] = 1.0015 }), ref)
    assert.near(7.5e-5, m.rel_l2, 1e-12)
    assert.near(1.5e-3, m.max_scaled, 1e-12)
    local th = check.thresholds(check.policy(), "f32", nil)
    local ok, reason = check.judge(m, th)
    assert.is_false(ok)
    assert.equals("wrong_values", reason)
  end)

  it("fails on the relative L2 error alone (every element a little off)", function()
    -- all 16 off by 0.0625: relative L2 sqrt(16 / 256) / 4 = 0.0625 > 0.05; worst 0.0625 <= 0.125
    local m = measure(off(PM, 0.0625), PM)
    assert.same({ false, "wrong_values",
                  "relative L2 error 0.0625 (threshold 0.05), worst error 0.0625 of max |y*| (threshold 0.125)", false },
      { check.judge(m, { rel_l2 = 0.05, max_scaled = 0.125, centred_l2 = 0.5, centred_max = 0.5 }) })
  end)

  it("passes within both thresholds, and at them exactly", function()
    local m = measure(off(PM, 0.0625), PM) -- 0.0625 and 0.0625
    assert.same({ n = 4, true, nil, nil, false }, judged(m, TH))
    assert.same({ n = 4, true, nil, nil, false },
      judged(m, { rel_l2 = 0.0625, max_scaled = 0.0625, centred_l2 = 0.5, centred_max = 0.5 }))
    assert.same({ n = 4, true, nil, nil, false }, judged(measure(PM, PM), TH)) -- exact
  end)

  it("reports outputs non-finite where the oracle is finite before any other error", function()
    -- element 2 NaN, element 3 infinite, element 5 off by 0.5 (relative L2 0.125: also over)
    local y = off(PM, 0, { [2] = 0 / 0, [3] = math.huge, [5] = 1.5 })
    local m = measure(y, PM)
    assert.equals(2, m.nonfinite)
    assert.equals(0.5, m.max_abs) -- the non-finite ones are counted apart, not in the sums
    assert.same({ false, "non_finite", "2 of 16 outputs are NaN or infinite where the oracle is finite" },
      { check.judge(m, TH) })
    -- beside an oracle's infinity the output missed, non-finite still wins
    local ref = off(PM, 0, { [4] = math.huge })
    m = measure(off(y, 0, { [4] = 3.0 }), ref)
    assert.same({ 2, 1 }, { m.nonfinite, m.special_mismatch })
    assert.equals("non_finite", select(2, check.judge(m, TH)))
  end)

  it("rejects outputs that differ from the oracle's own non-finite values", function()
    -- the oracle is +inf at 4 and NaN at 6: the output matches the NaN, not the infinity
    local ref = off(PM, 0, { [4] = math.huge, [6] = 0 / 0 })
    local y = off(ref, 0, { [4] = 1e30, [6] = 0 / 0 })
    local m = measure(y, ref)
    assert.same({ 14, 0, 1, 0.0 }, { m.finite, m.nonfinite, m.special_mismatch, m.sum_d2 })
    assert.same({ false, "wrong_values", "1 outputs differ from the oracle's non-finite values" },
      { check.judge(m, TH) })
    -- the same infinity (and NaN for NaN) is right
    m = measure(off(ref, 0, { [4] = math.huge, [6] = 0 / 0 }), ref)
    assert.equals(0, m.special_mismatch)
    assert.is_true((check.judge(m, TH)))
    -- with values wrong as well, the reason is still wrong_values, the detail the non-finite one
    m = measure(off(ref, 0.5, { [4] = 1.0, [6] = 0 / 0 }), ref)
    assert.same({ false, "wrong_values", "1 outputs differ from the oracle's non-finite values" },
      { check.judge(m, TH) })
  end)

  -- the nearly constant oracle NC: relative thresholds a constant passes, so degenerate
  local DTH = { rel_l2 = 0.05, max_scaled = 0.05, centred_l2 = 0.375, centred_max = 0.75 }

  it("rejects a constant output for a nearly constant oracle (trivial_output)", function()
    -- 10 everywhere: relative 0.02499 and 0.02439 pass, around the mean 1 and 1 do not
    local m = measure(vec(16, function() return 10.0 end), NC)
    local r = judged(m, DTH)
    assert.same({ false, "trivial_output", true }, { r[1], r[2], r[4] })
    assert.equals("the outputs are nearly constant (a constant scores 0.025); around their mean the error is 1 (threshold 0.375), worst 1 (threshold 0.75)", r[3])
  end)

  it("rejects on the centred L2 error alone", function()
    -- all 16 off by 0.125: centred L2 sqrt(16 / 64) / 1 = 0.5 > 0.375; centred worst
    -- 0.125 / 0.25 = 0.5 <= 0.75; relative 0.0125 and 0.0122 pass
    local m = measure(off(NC, 0.125), NC)
    assert.same({ 0.5, 0.5 }, { m.centred_l2, m.centred_max })
    assert.is_true(m.rel_l2 <= DTH.rel_l2 and m.max_scaled <= DTH.max_scaled)
    local r = judged(m, DTH)
    assert.same({ false, "trivial_output", true }, { r[1], r[2], r[4] })
  end)

  it("rejects on the centred worst error alone", function()
    -- element 1 off by 0.25: centred L2 sqrt(0.0625) / 1 = 0.25 <= 0.375; centred worst
    -- 0.25 / 0.25 = 1 > 0.75; relative 0.00625 and 0.0244 pass
    local m = measure(off(NC, 0, { [1] = 10.5 }), NC)
    assert.same({ 0.25, 1.0 }, { m.centred_l2, m.centred_max })
    assert.is_true(m.rel_l2 <= DTH.rel_l2 and m.max_scaled <= DTH.max_scaled)
    local r = judged(m, DTH)
    assert.same({ false, "trivial_output", true }, { r[1], r[2], r[4] })
  end)

  it("passes a degenerate output that is right around the mean too", function()
    -- all 16 off by 1/64: centred L2 sqrt(16 / 4096) = 0.0625, worst (1/64) / 0.25 = 0.0625
    local m = measure(off(NC, 1 / 64), NC)
    assert.same({ 0.0625, 0.0625 }, { m.centred_l2, m.centred_max })
    assert.same({ n = 4, true, nil, nil, true }, judged(m, DTH))
  end)

  it("judges on the centred metrics only when a constant would pass both relative thresholds", function()
    local m = measure(off(NC, 0.125), NC) -- trivial under DTH (above)
    -- the constant's worst 0.02439 over a worst threshold of 0.02: not degenerate, passes
    assert.same({ n = 4, true, nil, nil, false },
      judged(m, { rel_l2 = 0.05, max_scaled = 0.02, centred_l2 = 0.375, centred_max = 0.75 }))
    -- the constant's L2 0.02499 over an L2 threshold of 0.02: not degenerate, passes
    assert.same({ n = 4, true, nil, nil, false },
      judged(m, { rel_l2 = 0.02, max_scaled = 0.05, centred_l2 = 0.375, centred_max = 0.75 }))
    -- a constant oracle (no spread: sum_c2 = 0) is never degenerate
    local flat = vec(16, function() return 10.0 end)
    m = measure(flat, flat)
    assert.same({ 0.0, 0.0, 0.0 }, { m.sum_c2, m.centred_l2, m.centred_max })
    assert.same({ n = 4, true, nil, nil, false }, judged(m, DTH))
    -- nor is a single element
    m = measure({ 10.0 }, { 10.0 })
    assert.is_false(select(4, check.judge(m, DTH)))
    -- a degenerate output that fails the relative thresholds is wrong_values, flagged degenerate
    local r = judged(measure(off(NC, 1.0), NC), DTH)
    assert.same({ false, "wrong_values", true }, { r[1], r[2], r[4] })
  end)
end)

describe("check.thresholds, known answers", function()
  local policy = check.policy() -- f32: 1e-4 and 1e-3; 4 times the baseline; centred cap 0.5

  it("uses the dtype's thresholds without a baseline, the centred ones too", function()
    assert.same({ rel_l2 = 1e-4, max_scaled = 1e-3, centred_l2 = 1e-4, centred_max = 1e-3 },
      check.thresholds(policy, "f32", nil))
    assert.same({ rel_l2 = 1e-2, max_scaled = 6e-2, centred_l2 = 1e-2, centred_max = 6e-2 },
      check.thresholds(policy, "bf16", nil))
  end)

  it("caps the centred L2 threshold: 4 x 0.375 = 1.5 becomes 0.5", function()
    local base = { rel_l2 = 0.0, max_scaled = 0.0, centred_l2 = 0.375, centred_max = 0.0 }
    assert.same({ rel_l2 = 1e-4, max_scaled = 1e-3, centred_l2 = 0.5, centred_max = 1e-3 },
      check.thresholds(policy, "f32", base))
  end)

  it("caps the centred worst-error threshold: 4 x 0.25 = 1 becomes 0.5", function()
    local base = { rel_l2 = 0.0, max_scaled = 0.0, centred_l2 = 0.0, centred_max = 0.25 }
    assert.same({ rel_l2 = 1e-4, max_scaled = 1e-3, centred_l2 = 1e-4, centred_max = 0.5 },
      check.thresholds(policy, "f32", base))
  end)

  it("leaves centred thresholds under the cap as the baseline multiple gives them", function()
    local base = { rel_l2 = 0.0078125, max_scaled = 0.015625, centred_l2 = 0.0625, centred_max = 0.03125 }
    assert.same({ rel_l2 = 0.03125, max_scaled = 0.0625, centred_l2 = 0.25, centred_max = 0.125 },
      check.thresholds(policy, "f32", base))
    -- a lower cap of the policy's own: 0.25 and 0.125 become 0.1875 and 0.125
    assert.same({ rel_l2 = 0.03125, max_scaled = 0.0625, centred_l2 = 0.1875, centred_max = 0.125 },
      check.thresholds(check.policy{ centred_cap = 0.1875 }, "f32", base))
  end)
end)

describe("check's bookkeeping of a call, known answers", function()
  local inst = { args = { { name = "x", kind = "input" }, { name = "w", kind = "param" },
                          { name = "y", kind = "output" }, { name = "z", kind = "output" } } }
  -- a call's record as Runner:call returns it: untouched[i] counts output i's poisoned elements
  local function call(uy, uz, mutated)
    return { outs = { [3] = { n = 1000 }, [4] = { n = 8 } }, untouched = { [3] = uy, [4] = uz },
             mutated = mutated or {} }
  end

  it("passes a call that wrote every element and changed no input", function()
    assert.is_nil(check.bookkeeping_failure(inst, call(0, 0)))
  end)

  it("fails a single element of 1000 never written", function()
    local v = check.bookkeeping_failure(inst, call(1, 0))
    assert.same({ verdict = "incorrect", reason = "incomplete_write",
                  detail = "output 'y': 1 of 1000 elements never written (99.9% written)", written_fraction = 0.999 }, v)
  end)

  it("fails an unwritten tail, and names the output", function()
    -- the last 24 of 1000 of y
    local v = check.bookkeeping_failure(inst, call(24, 0))
    assert.equals("incomplete_write", v.reason)
    assert.equals(0.976, v.written_fraction)
    assert.equals("output 'y': 24 of 1000 elements never written (97.6% written)", v.detail)
    -- the last element of z's 8, y whole
    v = check.bookkeeping_failure(inst, call(0, 1))
    assert.equals("output 'z': 1 of 8 elements never written (87.5% written)", v.detail)
    assert.equals(0.875, v.written_fraction)
    -- nothing written at all
    v = check.bookkeeping_failure(inst, call(1000, 0))
    assert.equals(0, v.written_fraction)
  end)

  it("fails a call that changed its inputs, after checking the writes", function()
    assert.same({ verdict = "incorrect", reason = "input_mutation", detail = "the candidate changed its input x" },
      check.bookkeeping_failure(inst, call(0, 0, { "x" })))
    assert.equals("the candidate changed its inputs x, w",
      check.bookkeeping_failure(inst, call(0, 0, { "x", "w" })).detail)
    assert.equals("incomplete_write", check.bookkeeping_failure(inst, call(1, 0, { "x" })).reason)
  end)
end)

describe("other input distributions", function()
  it("depend on the seed alone", function()
    local g1, a1 = problem.other_generator("real", "shifted", 11, 1)
    local g2, a2 = problem.other_generator("real", "shifted", 11, 1)
    local _, a3 = problem.other_generator("real", "shifted", 12, 1)
    assert.are.equal(g1, g2)
    assert.are.same(a1, a2)
    assert.are_not.same(a1, a3)
  end)

  it("stay inside each input's domain", function()
    for seed = 1, 200 do
      for _, v in ipairs({ "centred", "shifted" }) do
        local g, a = problem.other_generator("positive", v, seed, 1)
        assert.are.equal("uniform", g)
        assert.is_true(a[1] > 0 and a[2] > a[1])
        g, a = problem.other_generator("nonnegative", v, seed, 2)
        assert.is_true(a[1] >= 0 and a[2] > a[1])
        g, a = problem.other_generator("unit", v, seed, 3)
        assert.is_true(a[1] >= 0 and a[2] <= 1 and a[2] > a[1])
        g, a = problem.other_generator("real", v, seed, 4)
        assert.are.equal("normal", g)
        assert.is_true(a[2] > 0)
        if v == "centred" then assert.are.equal(0, a[1]) else assert.is_true(math.abs(a[1]) >= 0.5) end
      end
    end
  end)

  it("are not drawn for discrete domains", function()
    for _, d in ipairs({ "indices", "mask", "sign" }) do
      assert.is_nil(problem.other_generator(d, "shifted", 1, 1))
    end
    assert.is_nil(problem.other_generator(nil, "shifted", 1, 1))
  end)

  it("exist for every float input of the KernelBench suite", function()
    local kreach = require "kreach"
    local s = kreach.load_suite("kernelbench-l1")
    for _, f in ipairs(s.files) do
      local inst = problem.load(f):instantiate()
      local any = false
      for _, a in ipairs(inst.args) do
        if a.kind == "input" and a.dist.gen ~= "randint" and a.dist.gen ~= "bool" and a.dist.gen ~= "sign" then
          assert.is_not_nil(problem.other_generator(a.domain, "shifted", 1, 1),
            ("%s: input '%s' (domain %s) has no other distribution"):format(inst.problem.name, a.name, tostring(a.domain)))
          any = true
        end
      end
      assert.is_true(any, inst.problem.name .. " has no float input")
    end
  end)
end)
