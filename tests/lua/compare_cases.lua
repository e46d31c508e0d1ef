-- Known answers for kreach.ops.compare's metrics (lib.metrics, lib.compare), shared by the CPU
-- spec (ops_compare_spec: the kernels emulated by g++) and the GPU one (gpu/compare_spec). Each
-- case: y (the output, exactly representable in f32 and, where `bf16` is set, in bf16), r (the
-- oracle, f64), tols (allclose's two tolerances) and the metrics worked out by hand, element by
-- element, in the comments and the arithmetic below. `diff`: lib.compare's result, where the
-- case has one (it skips non-finite outputs and has no centred metrics).
local NAN, INF = 0 / 0, math.huge
local sqrt = math.sqrt

local M = {}

M.cases = {
  {
    name = "one element off by 1",
    y = { 1, 2, 3, 4 }, r = { 1, 2, 3, 5 }, tols = { 1e-4, 1e-2 }, bf16 = true,
    -- d = (0, 0, 0, -1); sum r = 11, mean 2.75; r - mean = (-1.75, -0.75, 0.25, 2.25)
    want = {
      n = 4, finite = 4, sum_d2 = 1, sum_r2 = 1 + 4 + 9 + 25, mean_ref = 2.75,
      max_abs = 1, max_ref = 5, sum_c2 = 1.75 ^ 2 + 0.75 ^ 2 + 0.25 ^ 2 + 2.25 ^ 2, max_c = 2.25,
      nonfinite = 0, special_mismatch = 0, allclose_fail = { 1, 1 },
      rel_l2 = 1 / sqrt(39), max_scaled = 1 / 5, centred_l2 = 1 / sqrt(8.75),
      centred_max = 1 / 2.25, const_l2 = sqrt(8.75 / 39), const_max = 2.25 / 5,
    },
    diff = { n = 4, rel_l2 = sqrt(1 / 39), max_abs = 1, max_ref = 5, nonfinite = 0, mean_ref = 2.75 },
  },
  {
    name = "allclose's two tolerances disagree",
    -- element 1: |d| = 2^-7 = 0.0078125 > 1e-4 + 1e-4 * 1 but <= 1e-2 + 1e-2 * 1;
    -- element 4: |d| = 4 > 1e-2 + 1e-2 * 100 = 1.01: fails both
    y = { 1.0078125, -2, 0.5, 96 }, r = { 1, -2, 0.5, 100 }, tols = { 1e-4, 1e-2 },
    -- sum r = 99.5, mean 24.875
    want = {
      n = 4, finite = 4, sum_d2 = 0.0078125 ^ 2 + 4 ^ 2, sum_r2 = 1 + 4 + 0.25 + 10000,
      mean_ref = 24.875, max_abs = 4, max_ref = 100,
      sum_c2 = 23.875 ^ 2 + 26.875 ^ 2 + 24.375 ^ 2 + 75.125 ^ 2, max_c = 75.125,
      nonfinite = 0, special_mismatch = 0, allclose_fail = { 2, 1 },
      rel_l2 = sqrt((0.0078125 ^ 2 + 16) / 10005.25), max_scaled = 4 / 100,
      centred_l2 = sqrt((0.0078125 ^ 2 + 16) / 7530.1875), centred_max = 4 / 75.125,
      const_l2 = sqrt(7530.1875 / 10005.25), const_max = 75.125 / 100,
    },
    diff = { n = 4, rel_l2 = sqrt((0.0078125 ^ 2 + 16) / 10005.25), max_abs = 4, max_ref = 100,
             nonfinite = 0, mean_ref = 24.875 },
  },
  {
    name = "non-finite outputs and a non-finite oracle",
    -- 1: y NaN, r 1 finite: non-finite output, fails allclose at both tolerances
    -- 2: exact
    -- 3: y inf, r inf: the same special value, not a mismatch, passes allclose (inf == inf)
    -- 4: y 2, r NaN: a special mismatch, fails allclose
    -- 5: y -inf, r 3: non-finite output
    -- the sums are over the finite oracle elements 1, 2, 5: sum r = 5, mean 5/3; the
    -- differences over those where y is finite too (2 only): 0
    y = { NAN, 1, INF, 2, -INF }, r = { 1, 1, INF, NAN, 3 }, tols = { 1e-4, 1e-2 },
    want = {
      n = 5, finite = 3, sum_d2 = 0, sum_r2 = 11, mean_ref = 5 / 3, max_abs = 0, max_ref = 3,
      sum_c2 = 2 * (2 / 3) ^ 2 + (4 / 3) ^ 2, max_c = 4 / 3,
      nonfinite = 2, special_mismatch = 1, allclose_fail = { 3, 3 },
      rel_l2 = 0, max_scaled = 0, centred_l2 = 0, centred_max = 0,
      const_l2 = sqrt((8 / 3) / 11), const_max = (4 / 3) / 3,
    },
  },
  {
    name = "an all-zero oracle answered exactly",
    y = { 0, 0, 0 }, r = { 0, 0, 0 }, tols = { 1e-4, 1e-2 },
    -- every ratio is 0 / 0, which the metrics define as 0 (an exact answer)
    want = {
      n = 3, finite = 3, sum_d2 = 0, sum_r2 = 0, mean_ref = 0, max_abs = 0, max_ref = 0,
      sum_c2 = 0, max_c = 0, nonfinite = 0, special_mismatch = 0, allclose_fail = { 0, 0 },
      rel_l2 = 0, max_scaled = 0, centred_l2 = 0, centred_max = 0, const_l2 = 0, const_max = 0,
    },
  },
  {
    name = "an all-zero oracle answered wrongly",
    y = { 0, 0.5, 0 }, r = { 0, 0, 0 }, tols = { 1e-4, 1e-2 },
    -- x / 0 with x > 0 is infinite; the constant (0) scores 0 / 0 = 0
    want = {
      n = 3, finite = 3, sum_d2 = 0.25, sum_r2 = 0, mean_ref = 0, max_abs = 0.5, max_ref = 0,
      sum_c2 = 0, max_c = 0, nonfinite = 0, special_mismatch = 0, allclose_fail = { 1, 1 },
      rel_l2 = INF, max_scaled = INF, centred_l2 = INF, centred_max = INF,
      const_l2 = 0, const_max = 0,
    },
  },
  {
    name = "a constant oracle",
    y = { 2, 2, 2, 2.5 }, r = { 2, 2, 2, 2 }, tols = { 1e-4, 1e-2 },
    -- around the mean (2) the oracle is 0: any error is infinitely large there
    want = {
      n = 4, finite = 4, sum_d2 = 0.25, sum_r2 = 16, mean_ref = 2, max_abs = 0.5, max_ref = 2,
      sum_c2 = 0, max_c = 0, nonfinite = 0, special_mismatch = 0, allclose_fail = { 1, 1 },
      rel_l2 = 0.5 / 4, max_scaled = 0.25, centred_l2 = INF, centred_max = INF,
      const_l2 = 0, const_max = 0,
    },
  },
}

-- One larger case, so that the sums cross warps, blocks and the grid-stride loop: y_i =
-- (i % 13) - 6 for i = 0..999, r_i = y_i except r_i = y_i + 0.25 where i % 100 == 0 (10
-- elements). Its answers come from the loops here (the same definitions, element by element).
do
  local y, r = {}, {}
  for i = 0, 999 do
    y[i + 1] = (i % 13) - 6
    r[i + 1] = y[i + 1] + (i % 100 == 0 and 0.25 or 0)
  end
  local n, s, r2, d2, rmax = #r, 0, 0, 0, 0
  for i = 1, n do
    s = s + r[i]; r2 = r2 + r[i] ^ 2; d2 = d2 + (y[i] - r[i]) ^ 2
    rmax = math.max(rmax, math.abs(r[i]))
  end
  local mu, c2, cmax = s / n, 0, 0
  for i = 1, n do c2 = c2 + (r[i] - mu) ^ 2; cmax = math.max(cmax, math.abs(r[i] - mu)) end
  M.cases[#M.cases + 1] = {
    name = "1000 elements, 10 of them off by 0.25",
    y = y, r = r, tols = { 1e-4, 1e-2 }, bf16 = true,
    want = {
      n = n, finite = n, sum_d2 = d2, sum_r2 = r2, mean_ref = mu, max_abs = 0.25, max_ref = rmax,
      sum_c2 = c2, max_c = cmax, nonfinite = 0, special_mismatch = 0, allclose_fail = { 10, 10 },
      rel_l2 = sqrt(d2 / r2), max_scaled = 0.25 / rmax, centred_l2 = sqrt(d2 / c2),
      centred_max = 0.25 / cmax, const_l2 = sqrt(c2 / r2), const_max = cmax / rmax,
    },
    diff = { n = n, rel_l2 = sqrt(d2 / r2), max_abs = 0.25, max_ref = rmax, nonfinite = 0, mean_ref = mu },
  }
end

-- The fields compared, with a relative tolerance for the sums (fp64 accumulation in another
-- order than the loops here); counts exactly.
M.FIELDS = { "n", "finite", "sum_d2", "sum_r2", "mean_ref", "max_abs", "max_ref", "sum_c2",
             "max_c", "nonfinite", "special_mismatch", "rel_l2", "max_scaled", "centred_l2",
             "centred_max", "const_l2", "const_max" }
M.DIFF_FIELDS = { "n", "rel_l2", "max_abs", "max_ref", "nonfinite", "mean_ref" }

local function close(got, want)
  if want ~= want then return got ~= got end
  if want == INF or want == -INF then return got == want end
  if math.type(want) == "integer" then return got == want end
  return math.abs(got - want) <= 1e-12 * math.max(1, math.abs(want))
end

-- mismatches(got, want, fields) -> a list of "field: got x, want y" (empty when they agree)
function M.mismatches(got, want, fields)
  local bad = {}
  for _, f in ipairs(fields) do
    if want[f] ~= nil and not close(got[f], want[f]) then
      bad[#bad + 1] = ("%s: got %.17g, want %.17g"):format(f, got[f] or NAN, want[f])
    end
  end
  if want.allclose_fail and got.allclose_fail then
    for k = 1, 2 do
      if got.allclose_fail[k] ~= want.allclose_fail[k] then
        bad[#bad + 1] = ("allclose_fail[%d]: got %s, want %d"):format(k, tostring(got.allclose_fail[k]), want.allclose_fail[k])
      end
    end
  end
  return bad
end

return M
