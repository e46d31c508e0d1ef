-- The correctness policy without a GPU: thresholds, their floors and caps, the judgement of an
-- output's metrics (the trivial-output guard included), the policy's options, and the other
-- input distributions the trials draw from.
local check = require "kreach.check"
local problem = require "kreach.problem"

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

describe("kreach.check policy", function()
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
