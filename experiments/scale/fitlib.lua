-- The model-scale sweep's fit (issue 36, item 8): the addressable share against log10 of the
-- parameter count, by least squares, per model family and mode, with a t-interval for the slope,
-- and the table that says whether "the fraction shrinks with model scale" holds on the GPU the
-- sweep ran on. Pure functions of experiments/scale/run.lua's summary JSON; fit.lua prints them,
-- experiments/paper/run.lua writes them into the paper's tables.
--
-- Why a t-interval and not a bootstrap: a family has four sizes (GPT-2) or two (Llama). Resampling
-- four runs gives 4^4 = 256 resamples, of which the ones with fewer than two distinct sizes have
-- no slope and the rest take a handful of values, so a percentile interval from them is too
-- short and moves with the seed. The t-interval with n - 2 degrees of freedom (t = 4.30 at 95%
-- for n = 4) assumes normal residuals but says honestly how little four points pin down. Two
-- points give a line but no interval (0 degrees of freedom): the verdict is then "undecided".
local json = require "kreach.json"
local csv_field = require("kreach.results.report").csv_field

local M = {}

M.LEVEL = 0.95

-- ---- least squares and Student's t ----

-- ols(xs, ys) -> { n, slope, intercept, se (the slope's standard error; nil for n < 3), df,
-- rss, sxx }. Raises for fewer than two points or when every x is the same.
function M.ols(xs, ys)
  local n = #xs
  if n ~= #ys then error("ols: xs and ys differ in length", 2) end
  if n < 2 then error("ols: a line needs two points at least", 2) end
  local mx, my = 0, 0
  for i = 1, n do mx, my = mx + xs[i], my + ys[i] end
  mx, my = mx / n, my / n
  local sxx, sxy = 0, 0
  for i = 1, n do sxx, sxy = sxx + (xs[i] - mx) ^ 2, sxy + (xs[i] - mx) * (ys[i] - my) end
  if sxx == 0 then error("ols: every x is the same", 2) end
  local slope = sxy / sxx
  local intercept = my - slope * mx
  local rss = 0
  for i = 1, n do rss = rss + (ys[i] - intercept - slope * xs[i]) ^ 2 end
  local df = n - 2
  local se = df > 0 and math.sqrt(rss / df / sxx) or nil
  return { n = n, slope = slope, intercept = intercept, se = se, df = df, rss = rss, sxx = sxx }
end

-- t_cdf(t, df): P(T <= t) for Student's t with a whole number df of degrees of freedom, in
-- closed form (Abramowitz and Stegun 26.7.3 and 26.7.4): with theta = atan(t / sqrt(df)),
-- A = 2/pi (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ... )) for odd df (2 theta / pi for
-- df 1), A = sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...) for even df; P = (1 + A) / 2.
function M.t_cdf(t, df)
  if math.type(df) ~= "integer" and not (df == math.floor(df)) then error("t_cdf: df must be a whole number", 2) end
  if df < 1 then error("t_cdf: df must be positive", 2) end
  local th = math.atan(math.abs(t) / math.sqrt(df))
  local sn, c2 = math.sin(th), math.cos(th) ^ 2
  local A
  if df % 2 == 1 then
    local sum, term = 0, 1
    if df > 1 then
      sum = 1
      for k = 3, df - 2, 2 do term = term * (k - 1) / k * c2; sum = sum + term end
    end
    A = 2 / math.pi * (th + sn * math.cos(th) * sum)
  else
    local sum, term = 1, 1
    for k = 2, df - 2, 2 do term = term * (k - 1) / k * c2; sum = sum + term end
    A = sn * sum
  end
  return t >= 0 and (1 + A) / 2 or (1 - A) / 2
end

-- t_quantile(p, df): the t with P(T <= t) = p (bisection on t_cdf, to 1e-12).
function M.t_quantile(p, df)
  if not (p > 0 and p < 1) then error("t_quantile: p must lie in (0, 1)", 2) end
  if not (df >= 1 and df == math.floor(df)) then error("t_quantile: df must be a whole number >= 1", 2) end
  if p < 0.5 then return -M.t_quantile(1 - p, df) end
  local lo, hi = 0, 1
  while M.t_cdf(hi, df) < p do hi = hi * 2 end
  for _ = 1, 200 do
    local mid = (lo + hi) / 2
    if M.t_cdf(mid, df) < p then lo = mid else hi = mid end
    if hi - lo < 1e-12 * math.max(1, hi) then break end
  end
  return (lo + hi) / 2
end

-- slope_interval(fit[, level]) -> lo, hi: slope -/+ t_{(1+level)/2, n-2} se; nil for n < 3.
function M.slope_interval(fit, level)
  if not fit.se then return nil end
  local t = M.t_quantile((1 + (level or M.LEVEL)) / 2, fit.df)
  return fit.slope - t * fit.se, fit.slope + t * fit.se
end

-- verdict(lo, hi) -> "holds" (the interval lies below zero: the share shrinks with scale),
-- "contradicted" (above zero: it grows) or "undecided" (it holds zero, or there is none).
function M.verdict(lo, hi)
  if lo == nil then return "undecided" end
  if hi < 0 then return "holds" end
  if lo > 0 then return "contradicted" end
  return "undecided"
end

-- ---- the sweep's summary ----

-- load(path) -> the summary (experiments/scale/run.lua --out), or nil and an error naming the
-- file (and, for a row without what the fit needs, the row).
function M.load(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("a")
  f:close()
  local ok, doc = pcall(json.decode, s)
  if not ok then return nil, ("%s: not JSON: %s"):format(path, tostring(doc)) end
  if type(doc) ~= "table" or type(doc.rows) ~= "table" then
    return nil, ("%s: not a scale sweep's summary (no \"rows\"; experiments/scale/run.lua --out writes one)"):format(path)
  end
  for i, r in ipairs(doc.rows) do
    if type(r) ~= "table" or type(r.family) ~= "string" or type(r.mode) ~= "string" then
      return nil, ("%s: row %d: no family or mode"):format(path, i)
    end
    if r.status == "ok" then
      for _, k in ipairs({ "params", "addr_gpu", "addr_wall", "vendor_gpu" }) do
        if type(r[k]) ~= "number" then return nil, ("%s: row %d (%s): no number for %s"):format(path, i, tostring(r.name), k) end
      end
    end
  end
  return doc
end

local FAMILY_NAME = { gpt2 = "GPT-2", llama = "Llama-3.2 shape" }
M.FAMILY_NAME = FAMILY_NAME

-- the kernel families whose share of GPU time moved most between the smallest and the largest
-- model (the `families` of their rows), largest moves first: { family, from, to }
local function moves(first, last, count)
  local names, seen = {}, {}
  for _, r in ipairs({ first, last }) do
    for fam in pairs(r.families or {}) do if not seen[fam] then seen[fam] = true; names[#names + 1] = fam end end
  end
  local out = {}
  for _, fam in ipairs(names) do
    local a, b = (first.families or {})[fam] or 0, (last.families or {})[fam] or 0
    out[#out + 1] = { family = fam, from = a, to = b }
  end
  table.sort(out, function(x, y)
    local dx, dy = math.abs(x.to - x.from), math.abs(y.to - y.from)
    if dx ~= dy then return dx > dy end
    return x.family < y.family
  end)
  while #out > count do out[#out] = nil end
  return out
end

local function pct(x) return x and ("%.1f%%"):format(100 * x) or "-" end
local function pp(x) return ("%+.2f"):format(100 * x) end

-- analyse(doc[, level]) -> { device, groups = { { family, mode, rows (ok rows by parameters),
-- failed (rows), fit_gpu, fit_wall, lo, hi (the GPU-time slope's interval), lo_wall, hi_wall,
-- verdict, moves, sentence } } }, groups by family (GPT-2 first) then mode. The slopes are in
-- share (0..1) per tenfold parameters.
function M.analyse(doc, level)
  level = level or M.LEVEL
  local groups, by = {}, {}
  for _, r in ipairs(doc.rows) do
    local key = r.family .. "\0" .. r.mode
    local g = by[key]
    if not g then
      g = { family = r.family, mode = r.mode, rows = {}, failed = {} }
      by[key] = g; groups[#groups + 1] = g
    end
    if r.status == "ok" then g.rows[#g.rows + 1] = r else g.failed[#g.failed + 1] = r end
  end
  local forder = { gpt2 = 1, llama = 2 }
  table.sort(groups, function(a, b)
    local fa, fb = forder[a.family] or 99, forder[b.family] or 99
    if fa ~= fb then return fa < fb end
    if a.family ~= b.family then return a.family < b.family end
    return a.mode < b.mode
  end)
  local device = doc.device and doc.device.name or "the GPU of the sweep"
  for _, g in ipairs(groups) do
    table.sort(g.rows, function(a, b) return a.params < b.params end)
    local xs, ys, yw = {}, {}, {}
    local distinct = {}
    for i, r in ipairs(g.rows) do
      xs[i], ys[i], yw[i] = math.log(r.params, 10), r.addr_gpu, r.addr_wall
      distinct[r.params] = true
    end
    local nd = 0
    for _ in pairs(distinct) do nd = nd + 1 end
    local name = ("%s %s"):format(FAMILY_NAME[g.family] or g.family, g.mode == "train" and "training" or "inference")
    if nd >= 2 then
      g.fit_gpu, g.fit_wall = M.ols(xs, ys), M.ols(xs, yw)
      g.lo, g.hi = M.slope_interval(g.fit_gpu, level)
      g.lo_wall, g.hi_wall = M.slope_interval(g.fit_wall, level)
    end
    g.verdict = M.verdict(g.lo, g.hi)
    local s = {}
    if not g.fit_gpu then
      s[#s + 1] = ("%s: %d size%s measured, no line to fit; undecided."):format(name, #g.rows, #g.rows == 1 and "" or "s")
    else
      local first, last = g.rows[1], g.rows[#g.rows]
      s[#s + 1] = ("%s: the addressable share of GPU time changes by %s points per tenfold parameters"):format(name, pp(g.fit_gpu.slope))
      if g.lo then
        s[#s + 1] = (", %d%% t-interval [%s, %s] (%d sizes, %d df): "):format(math.floor(level * 100 + 0.5), pp(g.lo), pp(g.hi), g.fit_gpu.n, g.fit_gpu.df)
      else
        s[#s + 1] = (" (%d sizes: no interval, 0 df): "):format(g.fit_gpu.n)
      end
      if g.verdict == "holds" then
        s[#s + 1] = ("\"the fraction shrinks with model scale\" holds on %s."):format(device)
      elseif g.verdict == "contradicted" then
        s[#s + 1] = ("\"the fraction shrinks with model scale\" is contradicted on %s: the share grows."):format(device)
      else
        s[#s + 1] = ("undecided on %s: the interval %s."):format(device, g.lo and "holds zero" or "needs three sizes")
      end
      g.moves = moves(first, last, 3)
      local parts = {}
      for _, m in ipairs(g.moves) do parts[#parts + 1] = ("%s %s -> %s"):format(m.family, pct(m.from), pct(m.to)) end
      s[#s + 1] = (" From %s to %s, the vendor libraries' share of GPU time went %s -> %s and the addressable share %s -> %s"):format(
        first.size or first.model or "?", last.size or last.model or "?", pct(first.vendor_gpu), pct(last.vendor_gpu),
        pct(first.addr_gpu), pct(last.addr_gpu))
      s[#s + 1] = #parts > 0 and ("; the kernel families that moved most: %s."):format(table.concat(parts, ", ")) or "."
      local lib_up, addr_down = last.vendor_gpu > first.vendor_gpu, last.addr_gpu < first.addr_gpu
      if lib_up and addr_down then
        s[#s + 1] = " That is what a fixed number of tokens predicts: a layer's matrix products (vendor GEMMs) grow as the "
          .. "width squared per token while its elementwise and normalization kernels grow as the width, so the library "
          .. "share rises with size and the addressable share falls."
      elseif not lib_up and not addr_down then
        s[#s + 1] = " The width-squared growth of the GEMMs does not dominate here: the library share did not rise with size."
      else
        s[#s + 1] = " The library share and the addressable share did not move in opposite directions (the unclassified "
          .. "and other shares moved too)."
      end
    end
    if #g.failed > 0 then
      local f = {}
      for _, r in ipairs(g.failed) do f[#f + 1] = ("%s (%s)"):format(r.size or r.name, r.error or "failed") end
      s[#s + 1] = (" Not measured: %s."):format(table.concat(f, "; "))
    end
    g.sentence = table.concat(s)
  end
  return { device = doc.device, torch = doc.torch, date = doc.date, batch = doc.batch, seq = doc.seq,
           steps = doc.steps, warmup = doc.warmup, groups = groups, level = level }
end

-- ---- the tables ----

local function params_text(n)
  if n >= 1e9 then return ("%.2fB"):format(n / 1e9) end
  return ("%.0fM"):format(n / 1e6)
end
local function num(x, fmt) return x and tonumber((fmt or "%.6f"):format(x)) or nil end

-- rows(analysis) -> the per-run rows of the table, Markdown cells and CSV values:
-- { md = {...}, csv = {...} } each
M.HEADER = { "model", "mode", "size", "params", "batch x seq", "GPU busy", "addressable (GPU)", "addressable (wall)",
             "library (GPU)", "unclassified (GPU)", "kernels", "step ms", "status" }
M.CSV_HEADER = { "family", "mode", "size", "model", "params", "batch", "seq", "precision", "steps", "busy", "addr_gpu",
                 "addr_wall", "vendor_gpu", "unclassified_gpu", "kernels", "median_step_ms", "status", "error" }
M.FIT_HEADER = { "model", "mode", "sizes", "slope (GPU)", "interval (GPU)", "slope (wall)", "interval (wall)", "verdict" }
M.FIT_CSV_HEADER = { "family", "mode", "fit_sizes", "slope_gpu", "lo_gpu", "hi_gpu", "slope_wall", "lo_wall", "hi_wall", "level", "verdict" }

function M.tables(a)
  local runs, fits = {}, {}
  for _, g in ipairs(a.groups) do
    local all = {}
    for _, r in ipairs(g.rows) do all[#all + 1] = r end
    for _, r in ipairs(g.failed) do all[#all + 1] = r end
    for _, r in ipairs(all) do
      local ok = r.status == "ok"
      runs[#runs + 1] = {
        md = { FAMILY_NAME[g.family] or g.family, g.mode, r.size or "-", r.params and params_text(r.params) or "-",
               ("%s x %s"):format(tostring(r.batch), tostring(r.seq)), ok and pct(r.busy) or "-", ok and pct(r.addr_gpu) or "-",
               ok and pct(r.addr_wall) or "-", ok and pct(r.vendor_gpu) or "-", ok and pct(r.unclassified_gpu) or "-",
               ok and r.kernels or "-", r.median_step_ms and ("%.1f"):format(r.median_step_ms) or "-",
               ok and "ok" or ("failed: " .. (r.error or "?")) },
        csv = { g.family, g.mode, r.size, r.model, r.params, r.batch, r.seq, r.precision, r.steps, num(r.busy), num(r.addr_gpu),
                num(r.addr_wall), num(r.vendor_gpu), num(r.unclassified_gpu), r.kernels, r.median_step_ms,
                r.status or "failed", r.error },
      }
    end
    local function iv(lo, hi) return lo and ("[%s, %s]"):format(pp(lo), pp(hi)) or "-" end
    fits[#fits + 1] = {
      md = { FAMILY_NAME[g.family] or g.family, g.mode, #g.rows, g.fit_gpu and pp(g.fit_gpu.slope) or "-", iv(g.lo, g.hi),
             g.fit_wall and pp(g.fit_wall.slope) or "-", iv(g.lo_wall, g.hi_wall), g.verdict },
      csv = { g.family, g.mode, #g.rows, g.fit_gpu and num(g.fit_gpu.slope), num(g.lo), num(g.hi),
              g.fit_wall and num(g.fit_wall.slope), num(g.lo_wall), num(g.hi_wall), a.level, g.verdict },
    }
  end
  return runs, fits
end

-- the conditions of the sweep, one sentence
function M.conditions(a)
  local d = a.device or {}
  return ("%s%s%s, torch %s, batch %s x seq %s, %s warm-up and %s measured steps, %s."):format(
    d.name or "an unnamed device", d.memory_gib and (" (%d GiB)"):format(d.memory_gib) or "",
    d.driver and (", driver " .. tostring(d.driver)) or "", tostring(a.torch or "?"), tostring(a.batch), tostring(a.seq),
    tostring(a.warmup), tostring(a.steps), tostring(a.date or "undated"))
end

local function md_table(w, header, rows, right)
  local function cell(x) return (tostring(x):gsub("|", "\\|"):gsub("\n", " ")) end
  local h, sep = {}, {}
  for i, x in ipairs(header) do h[i] = cell(x); sep[i] = right[i] and "---:" or "---" end
  w("| ", table.concat(h, " | "), " |\n| ", table.concat(sep, " | "), " |\n")
  for _, r in ipairs(rows) do
    local c = {}
    for i = 1, #header do c[i] = cell(r.md[i] == nil and "-" or r.md[i]) end
    w("| ", table.concat(c, " | "), " |\n")
  end
end

-- write_md(analysis, w): the Markdown tables (the runs, then the fits) and a paragraph a group;
-- w(...) writes text.
function M.write_md(a, w)
  local runs, fits = M.tables(a)
  w("Measured on ", M.conditions(a), "\n\n")
  md_table(w, M.HEADER, runs, { [4] = true, [6] = true, [7] = true, [8] = true, [9] = true, [10] = true, [11] = true, [12] = true })
  w("\nThe fit: the addressable share of GPU time (and of wall time) against log10(parameters), least squares per model ",
    "and mode; slope in percentage points per tenfold parameters, with its ", math.floor(a.level * 100 + 0.5),
    "% t-interval (n - 2 degrees of freedom; experiments/scale/README.md says why not a bootstrap). Verdict on ",
    "\"the fraction shrinks with model scale\": holds where the GPU-time interval lies below zero, contradicted above, ",
    "undecided where it holds zero or there are fewer than three sizes.\n\n")
  md_table(w, M.FIT_HEADER, fits, { [3] = true, [4] = true, [6] = true })
  w("\n")
  for _, g in ipairs(a.groups) do w("- ", g.sentence, "\n") end
end

-- write_csv(analysis, w[, source[, no_header]]): a row a run, its group's fit (slope, interval,
-- level, verdict) on each; with `source` (a file's name), a first column `source` holding it;
-- no_header leaves the header line out (a second file's rows under the first's).
function M.write_csv(a, w, source, no_header)
  local runs, fits = M.tables(a)
  local header = source and { "source" } or {}
  for _, h in ipairs(M.CSV_HEADER) do header[#header + 1] = h end
  for i = 3, #M.FIT_CSV_HEADER do header[#header + 1] = M.FIT_CSV_HEADER[i] end
  local fit_of = {}
  for _, f in ipairs(fits) do fit_of[f.csv[1] .. "\0" .. f.csv[2]] = f.csv end
  local function line(vals)
    local c = {}
    for i = 1, #header do c[i] = csv_field(vals[i]) end
    w(table.concat(c, ","), "\n")
  end
  if not no_header then line(header) end
  local off = source and 1 or 0
  for _, r in ipairs(runs) do
    local vals = { source }
    for i = 1, #M.CSV_HEADER do vals[off + i] = r.csv[i] end
    local f = fit_of[r.csv[1] .. "\0" .. r.csv[2]]
    for i = 3, #M.FIT_CSV_HEADER do vals[off + #M.CSV_HEADER + i - 2] = f[i] end
    line(vals)
  end
end

return M
