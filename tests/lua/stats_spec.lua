-- kreach.stats on synthetic samples: order statistics, the median's confidence interval and
-- its coverage, the stopping rule, and the bootstrap interval of a ratio of medians.
-- Random parts print their seed and take KREACH_SEED.
local stats = require "kreach.stats"

local seed = tonumber(os.getenv("KREACH_SEED")) or 20261202
print("seed", seed)

-- a seeded uniform [0, 1) stream for the synthetic samples
local function uniform(s)
  local x = s
  return function()
    x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    return (x >> 11) / 9007199254740992.0
  end
end

describe("kreach.stats", function()
  it("computes order statistics like numpy's defaults", function()
    local xs = { 5, 1, 4, 2, 3 }
    assert.equals(3, stats.median(xs))
    assert.equals(2.5, stats.median({ 1, 2, 3, 4 }))
    assert.equals(2, stats.quantile(xs, 0.25))
    assert.equals(1.75, stats.quantile({ 1, 2, 3, 4 }, 0.25))
    local s = stats.summary(xs)
    assert.equals(5, s.n); assert.equals(1, s.min); assert.equals(5, s.max); assert.equals(3, s.mean)
    assert.equals(2, s.iqr)
    assert.has_error(function() stats.median({ 1, "x" }) end)
    assert.has_error(function() stats.median({ 1, 0 / 0 }) end)
    assert.near(4, stats.geomean({ 2, 8 }), 1e-12)
    assert.near(0.5, stats.geomean({ 0.25, 1 }), 1e-12)
    assert.is_nil(stats.geomean({}))
  end)

  it("bounds the median with order statistics, and says when it cannot", function()
    assert.is_nil(stats.median_ci({ 1, 2, 3, 4, 5 }))           -- n = 5 cannot reach 95%
    local lo, hi = stats.median_ci({ 6, 5, 4, 3, 2, 1 })       -- n = 6: the extremes (96.9%)
    assert.equals(1, lo); assert.equals(6, hi)
    local xs = {}
    for i = 1, 100 do xs[i] = i end
    lo, hi = stats.median_ci(xs)
    -- for n = 100 the 95% interval is X(40)..X(61) (binomial(100, 1/2) tables)
    assert.equals(40, lo); assert.equals(61, hi)
    local big = {}
    for i = 1, 20000 do big[i] = i end
    lo, hi = stats.median_ci(big)                               -- no underflow at large n
    assert.is_true(lo < 10000.5 and hi > 10000.5 and hi - lo < 400)
  end)

  it("covers the true median at least 95% of the time (exponential samples, n = 25)", function()
    local u = uniform(seed)
    local trials, hits = 4000, 0
    local truth = math.log(2) -- the median of Exp(1)
    for _ = 1, trials do
      local xs = {}
      for i = 1, 25 do xs[i] = -math.log(1 - u()) end
      local lo, hi = stats.median_ci(xs)
      if lo <= truth and truth <= hi then hits = hits + 1 end
    end
    -- the exact coverage for n = 25 is 0.957; 5 standard errors of 4000 trials is 0.016
    assert.is_true(hits / trials > 0.957 - 0.016, ("coverage %.4f"):format(hits / trials))
  end)

  it("stops when the median is known to 1%, when the budget is spent, or at the cap", function()
    local u = uniform(seed + 1)
    local tight = {}
    for i = 1, 10 do tight[i] = 1 + 0.001 * u() end
    assert.same({ true, "converged" }, { stats.should_stop(tight, 0.01) })
    local nine = { table.unpack(tight, 1, 9) }
    assert.is_false(stats.should_stop(nine, 100))              -- never before min_samples
    local noisy = {}
    for i = 1, 30 do noisy[i] = 1 + u() end
    assert.is_false(stats.should_stop(noisy, 0.5))
    assert.same({ true, "budget" }, { stats.should_stop(noisy, 2.5) })
    assert.same({ true, "budget" }, { stats.should_stop(noisy, 0.2, { budget_s = 0.1 }) })
    assert.same({ true, "max_samples" }, { stats.should_stop(noisy, 0, { max_samples = 30 }) })
    assert.same({ true, "converged" }, { stats.should_stop(noisy, 0, { rel_ci = 10 }) })
    assert.equals(10, stats.STOP_DEFAULTS.min_samples)
    assert.equals(0.01, stats.STOP_DEFAULTS.rel_ci)
  end)

  -- ---- the stopping rule at its boundaries, known answers ----

  -- For n = 10 the 95% interval of the median is X(2)..X(9): binomial(10, 1/2) puts
  -- (1 + 10) / 1024 = 0.0107 <= 0.025 below X(2), and (1 + 10 + 45) / 1024 = 0.0547 below X(3).
  -- ten(lo, hi): ten samples, unsorted, whose 2nd and 9th order statistics are lo and hi and
  -- whose median is 100 (the 5th and 6th both 100); the extremes 90 and 110 are outside it.
  local function ten(lo, hi)
    return { 110, hi, 99.8, 100, 90, 99.9, 100.2, 100, 100.1, lo }
  end

  it("takes the n = 10 interval of the median from the 2nd and 9th order statistics", function()
    assert.same({ 99.5, 100.5 }, { stats.median_ci(ten(99.5, 100.5)) })
    assert.equals(100, stats.median(ten(99.5, 100.5)))
  end)

  it("converges on the full width of the interval: at 1% of the median, not above", function()
    -- the default rule: width <= 0.01 * 100 = 1
    assert.same({ true, "converged" }, { stats.should_stop(ten(99.51, 100.5), 0) })  -- width 0.99
    assert.same({ true, "converged" }, { stats.should_stop(ten(99.5, 100.5), 0) })   -- width 1, exactly
    assert.same({ false }, { stats.should_stop(ten(99.49, 100.5), 0) })              -- width 1.01
    -- widths up to twice the limit do not converge either (the half-width would be within it)
    assert.same({ false }, { stats.should_stop(ten(99.1, 100.9), 0) })               -- width 1.8
    -- with rel_ci = 1/16 and a median of 100: width 6.25 converges, 6.5 does not
    local o = { rel_ci = 0.0625 }
    assert.same({ true, "converged" }, { stats.should_stop(ten(96.875, 103.125), 0, o) })
    assert.same({ false }, { stats.should_stop(ten(96.75, 103.25), 0, o) })
  end)

  it("stops at max_samples, before the other rules", function()
    local noisy = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 } -- median 5.5, interval 2..9: width 7
    assert.same({ false }, { stats.should_stop(noisy, 0, { max_samples = 11 }) })
    assert.same({ true, "max_samples" }, { stats.should_stop(noisy, 0, { max_samples = 10 }) })
    -- a converged sample set and a spent budget at the cap still say max_samples
    assert.same({ true, "max_samples" }, { stats.should_stop(ten(99.5, 100.5), 5, { max_samples = 10 }) })
    -- and the cap holds below min_samples
    assert.same({ true, "max_samples" }, { stats.should_stop({ 1, 2, 3 }, 0, { max_samples = 3 }) })
  end)

  it("never stops for convergence or budget before min_samples", function()
    local xs = ten(99.5, 100.5)
    local nine = { table.unpack(xs, 1, 9) }
    assert.same({ false }, { stats.should_stop(nine, 100) })                    -- n = 9 = min - 1
    assert.same({ true, "converged" }, { stats.should_stop(xs, 100) })          -- n = 10 = min
    assert.same({ false }, { stats.should_stop(xs, 100, { min_samples = 11 }) })
    -- with min_samples lowered below 6 the interval does not exist yet: only the budget stops
    local five = { 1, 1, 1, 1, 1 }
    assert.same({ false }, { stats.should_stop(five, 0, { min_samples = 5 }) })
    assert.same({ true, "budget" }, { stats.should_stop(five, 2, { min_samples = 5 }) })
  end)

  it("stops when the budget is spent exactly, not before", function()
    local noisy = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }
    assert.same({ false }, { stats.should_stop(noisy, 1.999) })
    assert.same({ true, "budget" }, { stats.should_stop(noisy, 2) })              -- spent == budget_s
    assert.same({ false }, { stats.should_stop(noisy, 0.25, { budget_s = 0.5 }) })
    assert.same({ true, "budget" }, { stats.should_stop(noisy, 0.5, { budget_s = 0.5 }) })
    -- a converged set says converged even with the budget spent
    assert.same({ true, "converged" }, { stats.should_stop(ten(99.5, 100.5), 2) })
  end)

  it("converges exactly when the interval's width is within rel_ci of the median (random sets)", function()
    local s = seed + 3
    print(("should_stop boundary: seed %d (KREACH_SEED=%d repeats it)"):format(s, seed))
    local u = uniform(s)
    for _ = 1, 200 do
      local n = 10 + math.floor(u() * 200)
      local xs = {}
      for i = 1, n do xs[i] = 1 + u() * u() end
      local lo, hi = stats.median_ci(xs)
      local width, med = hi - lo, stats.median(xs)
      local rel = width / med
      local msg = ("n = %d, width %.6g, median %.6g"):format(n, width, med)
      assert.same({ true, "converged" }, { stats.should_stop(xs, 0, { rel_ci = rel * 1.001 }) }, msg)
      assert.same({ false }, { stats.should_stop(xs, 0, { rel_ci = rel * 0.999 }) }, msg)
      assert.same({ false }, { stats.should_stop(xs, 0, { rel_ci = rel * 0.6 }) }, msg)
    end
  end)

  it("compares each untraced step with the traced steps beside it, switching taken out", function()
    -- traced steps cost 10% more on a machine drifting by 1 ms a step: the drift cancels
    local t = {}
    for j = 1, 9 do t[j] = (10 + j) * (j % 2 == 1 and 1.1 or 1) end
    local r = stats.alternating_ratios(t)
    assert.equals(4, #r)
    for _, x in ipairs(r) do assert.near(1.1, x, 1e-12) end
    -- switching on costs 0.5 ms (not in step 1, which found tracing on), off 0.2 ms
    local u = {}
    for j = 1, 7 do u[j] = 10 * (j % 2 == 1 and 1.05 or 1) + (j % 2 == 1 and (j > 1 and 0.5 or 0) or 0.2) end
    r = stats.alternating_ratios(u, 0.5, 0.2)
    assert.equals(3, #r)
    for _, x in ipairs(r) do assert.near(1.05, x, 1e-12) end
    -- left in, the switching shows: the first pair has one switched traced step, the others two
    local raw = stats.alternating_ratios(u)
    assert.near((10.5 + 11) / 2 / 10.2, raw[1], 1e-12)
    assert.near(11 / 10.2, raw[2], 1e-12)
    -- steps skipped: the first step given paid a switch on as well
    local w = {}
    for j = 1, 5 do w[j] = u[j + 2] end
    r = stats.alternating_ratios(w, 0.5, 0.2, true)
    assert.equals(2, #r)
    for _, x in ipairs(r) do assert.near(1.05, x, 1e-12) end
    assert.near((11 + 10.5) / 2 / 10, stats.alternating_ratios(w, 0.5, 0.2)[1], 1e-12) -- left in without the flag
    -- an even count leaves the last untraced step without a right-hand neighbour
    assert.equals(2, #stats.alternating_ratios({ 1, 1, 1, 1, 1, 1 }))
    assert.same({}, stats.alternating_ratios({ 1, 1 }))
  end)

  it("gives a bootstrap interval for a ratio of medians, the same for the same seed", function()
    local u = uniform(seed + 2)
    local a, b = {}, {}
    for i = 1, 50 do a[i] = 2 + 0.02 * (u() - 0.5); b[i] = 1 + 0.01 * (u() - 0.5) end
    local r, lo, hi = stats.ratio_ci(a, b, { seed = 7 })
    assert.is_true(math.abs(r - 2) < 0.01)
    assert.is_true(lo <= r and r <= hi)
    assert.is_true(lo > 1.98 and hi < 2.02)
    local r2, lo2, hi2 = stats.ratio_ci(a, b, { seed = 7 })
    assert.same({ r, lo, hi }, { r2, lo2, hi2 })
    -- two samplings of one process, 100 times: the 95% interval holds the true ratio 1 in most.
    -- 5 standard errors of 100 trials is 0.11, and the percentile bootstrap of a median
    -- under-covers a little at n = 40: 0.80 is the bound.
    local held = 0
    for t = 1, 100 do
      local c, d = {}, {}
      for i = 1, 40 do c[i] = 1 + 0.1 * u(); d[i] = 1 + 0.1 * u() end
      local _, l3, h3 = stats.ratio_ci(c, d, { seed = t, resamples = 500 })
      if l3 <= 1 and h3 >= 1 then held = held + 1 end
    end
    assert.is_true(held >= 80, ("the interval held 1 in %d of 100"):format(held))
  end)
end)
