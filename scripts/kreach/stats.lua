-- kreach.stats: the statistics timing results are reported with. Order statistics (median,
-- quartiles), a distribution-free confidence interval for the median, the stopping rule that
-- decides when enough samples were taken, and a bootstrap interval for the ratio of two
-- medians (a speedup). Pure Lua; every random choice comes from an explicit seed.
local M = {}

local function sorted(xs)
  local s = {}
  for i, x in ipairs(xs) do
    if type(x) ~= "number" or x ~= x then error(("sample %d is not a number"):format(i), 3) end
    s[i] = x
  end
  table.sort(s)
  return s
end

-- Quantile q (0..1) of sorted values, linear between order statistics (numpy's default).
local function quantile_sorted(s, q)
  local n = #s
  if n == 0 then return 0 / 0 end
  local h = (n - 1) * q + 1
  local lo = math.floor(h)
  local hi = math.min(lo + 1, n)
  return s[lo] + (h - lo) * (s[hi] - s[lo])
end

function M.quantile(xs, q) return quantile_sorted(sorted(xs), q) end
function M.median(xs) return quantile_sorted(sorted(xs), 0.5) end

-- geomean(xs) -> the geometric mean of positive numbers, nil for none.
function M.geomean(xs)
  if #xs == 0 then return nil end
  local s = 0
  for _, x in ipairs(xs) do s = s + math.log(x) end
  return math.exp(s / #xs)
end

-- The distribution-free confidence interval for the median: order statistics j and n - j + 1
-- with P(X(j) <= median <= X(n-j+1)) >= level for any continuous distribution, from the
-- binomial(n, 1/2) law of how many samples fall below the median. Returns lo, hi, or nil when
-- there are too few samples to bound the median at that level (n < 6 at 95%).
function M.median_ci(xs, level)
  level = level or 0.95
  local s = sorted(xs)
  local n = #s
  local alpha = (1 - level) / 2
  -- walk the binomial(n, 1/2) masses in logs (2^-n underflows past n = 1074)
  local logp = -n * math.log(2)
  local cum, j = 0, 0
  for k = 0, n do
    local p = math.exp(logp)
    if cum + p > alpha then break end
    cum = cum + p
    j = k + 1
    logp = logp + math.log((n - k) / (k + 1))
  end
  if j < 1 then return nil end
  return s[j], s[n - j + 1]
end

-- summary(xs) -> { n, median, q1, q3, iqr, min, max, mean, ci_lo, ci_hi, ci_rel }: ci_rel is the
-- width of the 95% interval of the median over the median.
function M.summary(xs, level)
  local s = sorted(xs)
  local n = #s
  local sum = 0
  for _, x in ipairs(s) do sum = sum + x end
  local r = { n = n, median = quantile_sorted(s, 0.5), q1 = quantile_sorted(s, 0.25),
              q3 = quantile_sorted(s, 0.75), min = s[1], max = s[n], mean = n > 0 and sum / n or 0 / 0 }
  r.iqr = r.q3 - r.q1
  r.ci_lo, r.ci_hi = M.median_ci(s, level)
  if r.ci_lo then r.ci_rel = (r.ci_hi - r.ci_lo) / r.median end
  return r
end

-- The stopping rule, with its defaults (the options that change it):
--   min_samples = 10, max_samples = 10000, rel_ci = 0.01 (the 95% interval of the median
--   narrower than 1% of it), budget_s = 2 (time spent sampling), level = 0.95.
M.STOP_DEFAULTS = { min_samples = 10, max_samples = 10000, rel_ci = 0.01, budget_s = 2, level = 0.95 }

-- should_stop(samples, spent_s, opts) -> stop?, why ("converged", "budget", "max_samples" or nil)
function M.should_stop(xs, spent_s, opts)
  local o = setmetatable(opts or {}, { __index = M.STOP_DEFAULTS })
  local n = #xs
  if n >= o.max_samples then return true, "max_samples" end
  if n >= o.min_samples then
    local lo, hi = M.median_ci(xs, o.level)
    if lo and (hi - lo) <= o.rel_ci * M.median(xs) then return true, "converged" end
    if spent_s >= o.budget_s then return true, "budget" end
  end
  return false
end

-- A seeded stream of indices in 1..n (splitmix64): its own state, so that nothing else's use
-- of math.random changes the draws, and the same seed always gives the same interval.
local function rng(seed)
  local x = seed
  return function(n)
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    local z = x
    z = ((z ~ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ~ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z = z ~ (z >> 31)
    return (z & 0x7FFFFFFFFFFFFFFF) % n + 1
  end
end

-- ratio_ci(a, b, {seed =, resamples =, level =}) -> ratio of medians median(a) / median(b),
-- and its percentile bootstrap interval (each sample set resampled with replacement).
function M.ratio_ci(a, b, opts)
  opts = opts or {}
  local seed = opts.seed or 1
  local R = opts.resamples or 2000
  local level = opts.level or 0.95
  local draw = rng(seed)
  local ratio = M.median(a) / M.median(b)
  local rs = {}
  local ra, rb = {}, {}
  for r = 1, R do
    for i = 1, #a do ra[i] = a[draw(#a)] end
    for i = 1, #b do rb[i] = b[draw(#b)] end
    rs[r] = M.median(ra) / M.median(rb)
  end
  table.sort(rs)
  local alpha = (1 - level) / 2
  return ratio, quantile_sorted(rs, alpha), quantile_sorted(rs, 1 - alpha)
end

-- alternating_ratios(times, on, off[, first_switched]) -> the ratios of a run whose steps
-- alternate traced and untraced (KREACH_TRACE_ALTERNATE): times[1], times[3]... traced,
-- times[2], times[4]... not. Each untraced step j with a traced step on both sides gives
-- mean(times[j-1], times[j+1]) / times[j], so a drift of the machine that is linear over three
-- steps cancels. `on` and `off` (default 0) are the times switching tracing on and off added to a
-- step (on at the start of every traced step but the run's first, which found it on; off at the
-- start of every untraced one), taken out first; first_switched says times[1] is not the run's
-- first step (steps were skipped), so it paid a switch on too. Returns a list, empty for fewer
-- than 3 steps.
function M.alternating_ratios(times, on, off, first_switched)
  on, off = on or 0, off or 0
  local function traced(j) return times[j] - ((j > 1 or first_switched) and on or 0) end
  local out = {}
  for j = 2, #times - 1, 2 do
    out[#out + 1] = (traced(j - 1) + traced(j + 1)) / 2 / (times[j] - off)
  end
  return out
end

return M
