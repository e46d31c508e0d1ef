-- Known answers for the statistics a user reads (kreach.stats, kreach.judge.timing.ratio), each
-- worked out here from its definition, not by calling the code under test: the median and its
-- order statistics, the interval of the median at each level, the summary, the stopping rule
-- at each level, and the speedup's ratio and bootstrap interval with its direction.
local stats = require "kreach.stats"
local timing = require "kreach.judge.timing"

-- The distribution-free interval of the median is X(j)..X(n-j+1), j the largest with
-- P(Binomial(n, 1/2) < j) <= (1 - level) / 2. Cumulative binomial(n, 1/2) masses, by hand:
--   n = 11 (2^11 = 2048): P(<1) = 1/2048 = 0.0005, P(<2) = 12/2048 = 0.0059,
--     P(<3) = 67/2048 = 0.0327, P(<4) = 232/2048 = 0.1133
--     99%: 0.005 -> j = 1 (X1..X11); 95%: 0.025 -> j = 2 (X2..X10); 90%: 0.05 -> j = 3 (X3..X9);
--     80%: 0.10 -> j = 3 (X3..X9)
--   n = 10 (1024): P(<2) = 11/1024 = 0.0107, P(<3) = 56/1024 = 0.0547, P(<4) = 176/1024 = 0.1719
--     95% and 90%: j = 2 (X2..X9); 80%: j = 3 (X3..X8); 99%: j = 1 (X1..X10)
--   n = 6 (64): P(<1) = 1/64 = 0.0156, P(<2) = 7/64 = 0.109
--     95%: j = 1 (X1..X6); 99%: 0.005 < 1/64, so no interval
--   n = 5 (32): P(<1) = 1/32 = 0.031 > 0.025: no 95% interval; 90%: j = 1 (X1..X5)
local function shuffled(n)
  -- 1..n in a scrambled order (i * 7 mod n is a permutation: 7 is prime to every n used here)
  local xs = {}
  for i = 1, n do xs[i] = (i * 7) % n + 1 end
  return xs
end

describe("the median and its interval, known answers", function()
  it("takes the median and quartiles as numpy's linear rule does", function()
    -- odd n: the middle value; even n: the mean of the two middle ones
    assert.equals(6, stats.median(shuffled(11)))
    assert.equals(5.5, stats.median(shuffled(10)))
    -- quartiles of 1..10: (n - 1) q + 1 = 3.25 and 7.75
    local s = stats.summary(shuffled(10))
    assert.same({ 10, 5.5, 3.25, 7.75, 4.5, 1, 10, 5.5 }, { s.n, s.median, s.q1, s.q3, s.iqr, s.min, s.max, s.mean })
  end)

  it("gives the interval's order statistics for n = 11 at each level", function()
    local xs = shuffled(11)
    assert.same({ 1, 11 }, { stats.median_ci(xs, 0.99) })
    assert.same({ 2, 10 }, { stats.median_ci(xs, 0.95) })
    assert.same({ 3, 9 }, { stats.median_ci(xs, 0.90) })
    assert.same({ 3, 9 }, { stats.median_ci(xs, 0.80) })
    -- the default level is 95%
    assert.same({ 2, 10 }, { stats.median_ci(xs) })
  end)

  it("gives the interval's order statistics for n = 10, 6 and 5", function()
    local ten = shuffled(10)
    assert.same({ 2, 9 }, { stats.median_ci(ten, 0.95) })
    assert.same({ 2, 9 }, { stats.median_ci(ten, 0.90) })
    assert.same({ 3, 8 }, { stats.median_ci(ten, 0.80) })
    assert.same({ 1, 10 }, { stats.median_ci(ten, 0.99) })
    assert.same({ 1, 6 }, { stats.median_ci(shuffled(6), 0.95) })
    assert.is_nil(stats.median_ci(shuffled(6), 0.99))
    assert.is_nil(stats.median_ci(shuffled(5)))
    assert.same({ 1, 5 }, { stats.median_ci(shuffled(5), 0.90) })
  end)

  it("gives the interval for n = 100 at each level (binomial(100, 1/2) tables)", function()
    -- P(Binomial(100, 1/2) <= 39) = 0.0176, <= 40: 0.0284 (95%: j = 40); <= 41: 0.0443,
    -- <= 42: 0.0666 (90%: j = 42); <= 36: 0.0033, <= 37: 0.0060 (99%: j = 37)
    local xs = shuffled(100)
    assert.same({ 40, 61 }, { stats.median_ci(xs, 0.95) })
    assert.same({ 42, 59 }, { stats.median_ci(xs, 0.90) })
    assert.same({ 37, 64 }, { stats.median_ci(xs, 0.99) })
  end)

  it("puts the interval at the summary's level in the summary, and its width over the median", function()
    local xs = shuffled(11)
    local s = stats.summary(xs)
    assert.same({ 2, 10, 8 / 6 }, { s.ci_lo, s.ci_hi, s.ci_rel })
    s = stats.summary(xs, 0.90)
    assert.same({ 3, 9, 1 }, { s.ci_lo, s.ci_hi, s.ci_rel })
    -- too few samples for an interval: none
    s = stats.summary({ 1, 2, 3 })
    assert.same({ 3, 2 }, { s.n, s.median })
    assert.is_nil(s.ci_lo)
    assert.is_nil(s.ci_rel)
  end)
end)

describe("the stopping rule at each level, known answers", function()
  -- eleven samples, median 100: X(2), X(10) = 96, 104 (width 8: not within 1% at 95%) and
  -- X(3), X(9) = 99.75, 100.25 (width 0.5: within 1% at 90% and 80%); X(1), X(11) = 88, 112
  local ELEVEN = { 112, 96, 99.75, 99.875, 99.9375, 100, 100.0625, 100.125, 100.25, 104, 88 }

  it("converges at 90% and 80%, not at 95% or 99%", function()
    assert.same({ true, "converged" }, { stats.should_stop(ELEVEN, 0, { level = 0.90 }) })
    assert.same({ true, "converged" }, { stats.should_stop(ELEVEN, 0, { level = 0.80 }) })
    assert.same({ false }, { stats.should_stop(ELEVEN, 0, { level = 0.95 }) })
    assert.same({ false }, { stats.should_stop(ELEVEN, 0, { level = 0.99 }) })
    -- the default level is 95%
    assert.same({ false }, { stats.should_stop(ELEVEN, 0) })
    assert.equals(0.95, stats.STOP_DEFAULTS.level)
    -- at 95%, a rel_ci of 8% of the median takes the width of 8; 7.9% does not
    assert.same({ true, "converged" }, { stats.should_stop(ELEVEN, 0, { rel_ci = 0.08 }) })
    assert.same({ false }, { stats.should_stop(ELEVEN, 0, { rel_ci = 0.079 }) })
    -- at 99%, the extremes: width 24
    assert.same({ true, "converged" }, { stats.should_stop(ELEVEN, 0, { level = 0.99, rel_ci = 0.24 }) })
    assert.same({ false }, { stats.should_stop(ELEVEN, 0, { level = 0.99, rel_ci = 0.2 }) })
  end)

  it("never converges where the level has no interval, and then stops on the budget", function()
    -- n = 6 at 99% has no interval, however tight the samples
    local six = { 1, 1, 1, 1, 1, 1 }
    assert.same({ true, "converged" }, { stats.should_stop(six, 0, { min_samples = 6 }) })
    assert.same({ false }, { stats.should_stop(six, 0, { min_samples = 6, level = 0.99 }) })
    assert.same({ true, "budget" }, { stats.should_stop(six, 2, { min_samples = 6, level = 0.99 }) })
  end)
end)

describe("the speedup and its interval, known answers", function()
  it("is the first median over the second: a 2 ms baseline against a 1 ms candidate is 2", function()
    assert.same({ 2, 2, 2 }, { stats.ratio_ci({ 2, 2, 2 }, { 1, 1, 1 }) })
    assert.same({ 0.5, 0.5, 0.5 }, { stats.ratio_ci({ 1, 1, 1 }, { 2, 2, 2 }) })
    local r = timing.ratio({ 2, 2, 2, 2 }, { 1, 1, 1 }, timing.options())
    assert.same({ ratio = 2, lo = 2, hi = 2 }, r)
    local s = timing.speedup({ name = "baseline", samples = { 2, 2 } }, { name = "candidate", samples = { 1, 1 } }, timing.options())
    assert.same({ ratio = 2, lo = 2, hi = 2, baseline = "baseline", candidate = "candidate" }, s)
  end)

  it("puts the interval's ends where the resampled ratios' 2.5% and 97.5% points are", function()
    -- baseline 4 ms; candidate 1 ms five times and 3 ms five times, median 2: ratio 2. A
    -- resample's median of 10 is 1 when 6 or more of its draws are 1 ms (P(Binomial(10, 1/2)
    -- >= 6) = 386/1024 = 37.7%), 2 with exactly 5 (24.6%), 3 otherwise (37.7%): the ratios are
    -- 4, 2 and 4/3, so the 2.5% point is 4/3 and the 97.5% point 4.
    local cand = { 1, 3, 1, 3, 1, 3, 1, 3, 1, 3 }
    local ratio, lo, hi = stats.ratio_ci({ 4, 4, 4, 4 }, cand, { seed = 3 })
    assert.equals(2, ratio)
    assert.near(4 / 3, lo, 1e-12)
    assert.equals(4, hi)
    -- the other way round: 1/2, from 1/4 to 3/4
    ratio, lo, hi = stats.ratio_ci(cand, { 4, 4, 4, 4 }, { seed = 3 })
    assert.same({ 0.5, 0.25, 0.75 }, { ratio, lo, hi })
  end)

  it("takes the interval at its level: 95% by default", function()
    -- a = {1, 1, 2 x 5, 3, 3} over b = {1}: a resample's median of 9 is 1 when 5 or more of its
    -- draws are 1 (each 2/9): sum over k >= 5 of C(9, k) (2/9)^k (7/9)^(9-k) = 3.04%; the same
    -- for 3; 2 otherwise (93.9%). So the 2.5% and 97.5% points are 1 and 3, and the 5% and 95%
    -- points both 2. (40000 resamples: the 2.5% point falls among the 1s unless fewer than 1001
    -- of them are 1, 6 standard deviations below the 1215 expected.)
    local a = { 1, 2, 3, 2, 1, 2, 3, 2, 2 }
    assert.same({ 2, 1, 3 }, { stats.ratio_ci(a, { 1 }, { seed = 5, resamples = 40000, level = 0.95 }) })
    assert.same({ 2, 2, 2 }, { stats.ratio_ci(a, { 1 }, { seed = 5, resamples = 40000, level = 0.90 }) })
    assert.same({ 2, 1, 3 }, { stats.ratio_ci(a, { 1 }, { seed = 5, resamples = 40000 }) })
    -- timing.ratio with the timing options' level
    assert.same({ ratio = 2, lo = 2, hi = 2 }, timing.ratio(a, { 1 }, timing.options{ level = 0.9, resamples = 40000, seed = 5 }))
    assert.same({ ratio = 2, lo = 1, hi = 3 }, timing.ratio(a, { 1 }, timing.options{ resamples = 40000, seed = 5 }))
    assert.equals(0.95, timing.options().level)
  end)
end)
