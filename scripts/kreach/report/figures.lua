-- kreach.report.figures: the report's figures, each a pure function of kreach.report.data's
-- table: { name, title, caption, data (what is drawn, embedded in the SVG), blocks (gnuplot's
-- datablocks), script (gnuplot's plot commands) }, or { name, title, missing = (a sentence: why
-- it is left out) } when its data are not there. The figures' numbers come from
-- kreach.results.summary (compute), never from SQL of our own. docs/report.md shows each.
local summary = require "kreach.results.summary"
local gnuplot = require "kreach.report.gnuplot"

local M = {}

local Q = gnuplot.quote

-- the verdicts in the order the bars stack them, from correct to compile error, and their colours
M.VERDICT_ORDER = { "correct", "incorrect", "timeout", "runtime_error", "skipped", "invalid_candidate", "compile_error" }
local VERDICT_COLOUR = { correct = "#1a9850", incorrect = "#fdae61", timeout = "#9e6ebd", runtime_error = "#d73027",
                         skipped = "#bdbdbd", invalid_candidate = "#737373", compile_error = "#67001f" }
local LINE_COLOURS = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" }

-- ---- captions: what, where, when, how many ----

local function sorted_set(t)
  local l = {}
  for k in pairs(t) do l[#l + 1] = k end
  table.sort(l)
  return l
end

-- about(rows) -> "on <devices>, <first> to <last>, from <sources>": where and when the rows
-- were measured, as their runs and files record it
local function about(rows)
  local devices, sources, first, last = {}, {}, nil, nil
  for _, r in ipairs(rows) do
    if r.report_device then devices[r.report_device] = true end
    if r.report_source then sources[r.report_source] = true end
    local t = r.finished_at or r.started_at
    if type(t) == "string" then
      local day = t:sub(1, 10)
      if not first or day < first then first = day end
      if not last or day > last then last = day end
    end
  end
  local dl = sorted_set(devices)
  local parts = {}
  parts[#parts + 1] = #dl > 0 and ("on " .. table.concat(dl, ", "))
    or "on a device the store does not record (the data's description may name it)"
  if first then parts[#parts + 1] = first == last and first or (first .. " to " .. last) end
  local sl = sorted_set(sources)
  if #sl > 0 then parts[#parts + 1] = "data: " .. table.concat(sl, "; ") end
  return table.concat(parts, ", ")
end
M.about = about

local function plural(n, word) return ("%d %s%s"):format(n, word, n == 1 and "" or "s") end

-- the rows of every group of a computation, once each
local function rows_of(s)
  local t = {}
  for _, g in ipairs(s.groups) do for _, r in ipairs(g.rows) do t[#t + 1] = r end end
  return t
end

-- ---- verdicts ----

function M.verdicts(d)
  local f = { name = "verdicts", title = "Verdicts per model" }
  local s = summary.compute(d, { by = { "model" }, rows = true })
  local by = "model"
  if #s.groups == 1 then
    local r = summary.compute(d, { by = { "run" }, rows = true })
    if #r.groups > 1 then s, by, f.title = r, "run", "Verdicts per run" end
  end
  if #s.groups == 0 then f.missing = "No candidate has been evaluated in the store (kreach eval records evaluations)."; return f end
  local groups, rows = {}, {}
  for _, g in ipairs(s.groups) do
    local counts = {}
    local row = { by == "run" and ("run " .. g.name) or g.name }
    for _, v in ipairs(M.VERDICT_ORDER) do counts[v] = g.verdicts[v] or 0; row[#row + 1] = counts[v] end
    groups[#groups + 1] = { name = g.name, evaluations = g.evaluations, counts = counts }
    rows[#rows + 1] = row
  end
  local all = rows_of(s)
  f.data = { by = by, verdicts = M.VERDICT_ORDER, groups = groups }
  f.caption = ("The verdicts of %s of candidates, per %s (each evaluation once: a repeated one counts its newest), stacked from correct to compile error; measured %s."):format(
    plural(#all, "evaluation"), by, about(all))
  f.blocks = { { "v", rows } }
  local plots = {}
  for i, v in ipairs(M.VERDICT_ORDER) do
    plots[#plots + 1] = ("$v using %d%s title %s lc rgb '%s'"):format(i + 1, i == 1 and ":xtic(1)" or "", Q(v), VERDICT_COLOUR[v])
  end
  f.script = table.concat({
    "set style data histograms", "set style histogram rowstacked", "set style fill solid 1.0 border rgb '#ffffff'",
    "set boxwidth 0.6", "set key outside right top vertical", "set ylabel 'evaluations'", "set yrange [0:*]",
    "set grid ytics", "set xtics rotate by -30", "plot " .. table.concat(plots, ", ")
  }, "\n")
  return f
end

-- ---- the speedups' ECDF ----

local REF_FIELD = { baseline = { "speedup", "kreach's baseline" }, pytorch = { "speedup_pytorch", "PyTorch eager" } }

function M.speedups(d, against)
  local field, title = REF_FIELD[against][1], REF_FIELD[against][2]
  local f = { name = "speedup_" .. against, title = "Speedups against " .. title }
  local s = summary.compute(d, { by = { "model" }, against = against, rows = true })
  local groups, blocks, plots, used = {}, {}, {}, {}
  local xmin, xmax = 1, 1
  for _, g in ipairs(s.groups) do
    local xs = {}
    for _, r in ipairs(g.rows) do
      if r.verdict == "correct" and type(r[field]) == "number" and r[field] > 0 then xs[#xs + 1] = r[field]; used[#used + 1] = r end
    end
    if #xs > 0 then
      table.sort(xs)
      local fp = {}
      for i, p in ipairs(summary.FAST_P) do if p == 1 or p == 1.5 then fp[#fp + 1] = { p = p, value = g.fast_p[i].value, count = g.fast_p[i].count } end end
      groups[#groups + 1] = { name = g.name, speedups = xs, problems = g.problems, fast_p = fp }
      local rows = { { xs[1], 0 } }
      for i, x in ipairs(xs) do rows[#rows + 1] = { x, i / #xs } end
      local bn = "e" .. #groups
      blocks[#blocks + 1] = { bn, rows }
      xmin, xmax = math.min(xmin, xs[1]), math.max(xmax, xs[#xs])
      plots[#plots + 1] = ("$%s using 1:2 with steps lw 2 lc rgb '%s' title %s"):format(bn,
        LINE_COLOURS[(#groups - 1) % #LINE_COLOURS + 1],
        Q(("%s (n = %d; fast_1 %.2f, fast_1.5 %.2f of %d problems)"):format(g.name, #xs, fp[1].value or 0, fp[2].value or 0, g.problems)))
    end
  end
  if #groups == 0 then
    f.missing = against == "pytorch"
      and "No correct candidate has a time against PyTorch eager in the store (kreach eval times PyTorch where it is installed; docs/timing.md, \"PyTorch in the same run\")."
      or "No correct candidate has a speedup against kreach's baseline in the store."
    return f
  end
  f.data = { against = against, field = field, groups = groups }
  f.caption = ("The distribution (ECDF) of the speedups of %s against %s, per model; the dashed lines are p = 1 and p = 1.5, where fast_p is read (fast_p: the share of a model's problems whose best correct candidate is more than p times faster); measured %s."):format(
    plural(#used, "correct candidate"), title, about(used))
  f.blocks = blocks
  f.script = table.concat({
    "set logscale x 2", ("set xrange [%.17g:%.17g]"):format(xmin / 1.25, xmax * 1.25), "set yrange [0:1.02]",
    ("set xlabel %s"):format(Q("speedup against " .. title .. " (log scale)")), "set ylabel 'fraction of candidates at or below'",
    "set grid", "set key bottom right",
    "set arrow 1 from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb '#555555'",
    "set arrow 2 from 1.5, graph 0 to 1.5, graph 1 nohead dt 3 lc rgb '#555555'",
    "plot " .. table.concat(plots, ", ")
  }, "\n")
  return f
end

-- ---- model by category ----

function M.heatmap(d)
  local f = { name = "heatmap", title = "Correct rate by model and problem category" }
  if not d.categories then
    f.missing = "The problems' categories were not loaded (the problem files are not here)."
    return f
  end
  local s = summary.compute(d, { by = { "model", "category" }, categories = d.categories, rows = true })
  if #s.groups == 0 then f.missing = "No candidate has been evaluated in the store."; return f end
  local models, cats, mi, ci = {}, {}, {}, {}
  for _, g in ipairs(s.groups) do
    if not mi[g.key.model] then models[#models + 1] = g.key.model; mi[g.key.model] = true end
    if not ci[g.key.category] then cats[#cats + 1] = g.key.category; ci[g.key.category] = true end
  end
  table.sort(cats)
  for i, c in ipairs(cats) do ci[c] = i - 1 end
  for i, m in ipairs(models) do mi[m] = i - 1 end
  local cells, rows = {}, {}
  for _, g in ipairs(s.groups) do
    if g.correct_rate then
      cells[#cells + 1] = { model = g.key.model, category = g.key.category, correct_rate = g.correct_rate,
                            judged = g.judged, correct = g.correct, verified_median = g.verified.median }
      rows[#rows + 1] = { ci[g.key.category], mi[g.key.model], g.correct_rate,
                          ("%.0f%% (%d/%d)"):format(100 * g.correct_rate, g.correct, g.judged) }
    end
  end
  if #cells == 0 then f.missing = "No evaluation has been judged (every one is skipped)."; return f end
  local xt, yt = {}, {}
  for i, c in ipairs(cats) do xt[i] = ("%s %d"):format(Q(c), i - 1) end
  for i, m in ipairs(models) do yt[i] = ("%s %d"):format(Q(m), i - 1) end
  local all = rows_of(s)
  f.data = { models = models, categories = cats, cells = cells }
  f.caption = ("The share of the judged evaluations that are correct, per model and problem category (%s; each cell: correct of judged); measured %s."):format(
    plural(#all, "evaluation"), about(all))
  f.blocks = { { "h", rows } }
  f.height = math.max(260, 120 + 40 * #models)
  f.script = table.concat({
    ("set xrange [-0.5:%d.5]"):format(#cats - 1), ("set yrange [-0.5:%d.5]"):format(#models - 1),
    "set xtics (" .. table.concat(xt, ", ") .. ") rotate by -30", "set ytics (" .. table.concat(yt, ", ") .. ")",
    "set cbrange [0:1]", "set cblabel 'correct rate'", "set palette defined (0 '#f7f7f7', 1 '#1a9850')",
    "set style fill solid 1.0 border rgb '#ffffff'", "unset key",
    "plot $h using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, $h using 1:2:4 with labels font 'sans,10'",
  }, "\n")
  return f
end

-- ---- the addressable fraction ----

function M.addressable(d)
  local f = { name = "addressable", title = "Addressable fraction per workload" }
  if #d.profiles == 0 then
    f.missing = "No profile in the store or among --profiles (kreach profile stores one; experiments/addressable_fraction.lua --json writes them for the workloads)."
    return f
  end
  local parts = { "library", "addressable", "unclassified", "rest" }
  local rows, entries = {}, {}
  for _, p in ipairs(d.profiles) do
    local gl, ga, gu = p.gpu.library or 0, p.gpu.addressable or 0, p.gpu.unclassified or 0
    rows[#rows + 1] = { p.name .. " (GPU)", gl, ga, gu, math.max(0, 1 - gl - ga - gu) }
    local w = p.wall
    local wl, wa, wu = w.library, w.addressable or 0, w.unclassified
    -- the rest of the wall: outside the kernels (idle GPU), or not split in the file
    rows[#rows + 1] = { p.name .. " (wall)", wl or 0, wa, wu or 0, math.max(0, 1 - (wl or 0) - wa - (wu or 0)) }
    entries[#entries + 1] = { name = p.name, device = p.device, source = p.source, gpu = p.gpu, wall = p.wall }
  end
  local devices, sources, days = {}, {}, {}
  for _, p in ipairs(d.profiles) do
    if p.device then devices[p.device] = true end
    if p.source then sources[p.source] = true end
    if type(p.when) == "string" then days[p.when:sub(1, 10)] = true end
  end
  local dl, dd = sorted_set(devices), sorted_set(days)
  f.data = { parts = parts, profiles = entries }
  f.caption = ("The share of each workload's GPU time and wall time in library kernels (vendor GEMM, attention, convolution, communication: not addressable), in kernels a candidate could replace (addressable), in unclassified kernels, and the rest (GPU time: none; wall: outside kernels, or not split where the source gives only the addressable share); %s, %s, %s; from %s."):format(
    plural(#entries, "profile"), #dl > 0 and ("on " .. table.concat(dl, ", ")) or "on a device the profiles do not record",
    #dd > 0 and ("recorded " .. (#dd == 1 and dd[1] or (dd[1] .. " to " .. dd[#dd]))) or "on a date the files do not record",
    table.concat(sorted_set(sources), "; "))
  f.blocks = { { "a", rows } }
  f.height = 420
  local colours = { "#4575b4", "#1a9850", "#fee08b", "#e0e0e0" }
  local plots = {}
  for i, name in ipairs(parts) do
    plots[#plots + 1] = ("$a using %d%s title %s lc rgb '%s'"):format(i + 1, i == 1 and ":xtic(1)" or "", Q(name), colours[i])
  end
  f.script = table.concat({
    "set style data histograms", "set style histogram rowstacked", "set style fill solid 1.0 border rgb '#ffffff'",
    "set boxwidth 0.7", "set key outside right top vertical", "set ylabel 'share'", "set yrange [0:1.05]",
    "set grid ytics", "set xtics rotate by -40", "plot " .. table.concat(plots, ", ")
  }, "\n")
  return f
end

-- ---- DLRM: projected against measured ----

function M.dlrm(d)
  local f = { name = "dlrm", title = "DLRM: projected against measured end-to-end gain" }
  if not d.dlrm then
    f.missing = "No DLRM measurement among the data (a *dlrm-measure.json in --data DIR, as experiments/dlrm/measure.lua --json FILE writes it, on a GPU)."
    return f
  end
  if #d.dlrm.points == 0 then
    f.missing = ("%s holds no substitution measured end to end (%d not measured or void)."):format(d.dlrm.file, d.dlrm.skipped)
    return f
  end
  local rows, lo, hi = {}, math.huge, -math.huge
  for _, p in ipairs(d.dlrm.points) do
    rows[#rows + 1] = { p.projected, p.measured, p.lo, p.hi, ("%s/%s"):format(p.config, p.problem) }
    lo = math.min(lo, p.projected, p.lo); hi = math.max(hi, p.projected, p.hi)
  end
  local pad = math.max(0.01, (hi - lo) * 0.15)
  f.data = { file = d.dlrm.file, points = d.dlrm.points }
  f.caption = ("The end-to-end speedup of the DLRM training step with a candidate substituted: projected by Amdahl's law from the operator's speedup and share, against measured (the step timed plain and substituted, interleaved, with its 95%% interval); %s, %s; %d not measured or void; from %s."):format(
    plural(#rows, "substitution"), d.dlrm.device and ("on " .. d.dlrm.device) or "on a device the file does not record", d.dlrm.skipped, d.dlrm.file)
  f.blocks = { { "d", rows } }
  f.script = table.concat({
    ("set xrange [%.17g:%.17g]"):format(lo - pad, hi + pad), ("set yrange [%.17g:%.17g]"):format(lo - pad, hi + pad),
    "set xlabel 'projected speedup of the step'", "set ylabel 'measured speedup of the step'", "set grid", "set key top left",
    "plot x with lines dt 2 lc rgb '#777777' title 'measured = projected', $d using 1:2:3:4 with yerrorbars pt 7 lc rgb '#1f77b4' title 'substitutions', $d using 1:2:5 with labels offset 1,1 left notitle",
  }, "\n")
  return f
end

-- ---- the roofline: each candidate against its problem's speed of light ----

function M.roofline(d)
  local f = { name = "roofline", title = "Each candidate against its speed-of-light bound" }
  local s = summary.compute(d, { by = { "model" }, rows = true })
  local ok_rows, bad_rows, points, used = {}, {}, {}, {}
  local lo, hi = math.huge, -math.huge
  for _, g in ipairs(s.groups) do
    for _, r in ipairs(g.rows) do
      if type(r.sol_fraction) == "number" and r.sol_fraction > 0 and type(r.candidate_ms) == "number" and r.candidate_ms > 0 then
        local bound = r.sol_fraction * r.candidate_ms
        local suspicious = r.sol_fraction > 1
        points[#points + 1] = { key = r.report_key, problem = summary.problem_of(r), model = g.name, verdict = r.verdict,
                                candidate_ms = r.candidate_ms, bound_ms = bound, sol_fraction = r.sol_fraction, suspicious = suspicious }
        local row = { bound, r.candidate_ms, ("%s %.0f%%"):format(r.problem_name or "?", 100 * r.sol_fraction) }
        if suspicious then bad_rows[#bad_rows + 1] = row else ok_rows[#ok_rows + 1] = row end
        lo = math.min(lo, bound, r.candidate_ms); hi = math.max(hi, bound, r.candidate_ms)
        used[#used + 1] = r
      end
    end
  end
  if #points == 0 then
    f.missing = "No candidate in the store has a speed-of-light fraction (sol_fraction: kreach eval gives it where the problem states its traffic and a calibration exists)."
    return f
  end
  f.data = { points = points }
  f.caption = ("Each candidate's median time against the speed-of-light bound of its problem (the larger of its bytes over the calibrated copy bandwidth and its flops over the peak), log scales; the line is the bound: a point below it (sol_fraction above 1, drawn red) ran faster than the hardware allows and is suspicious; %s, measured %s."):format(
    plural(#points, "candidate"), about(used))
  local blocks, plots = {}, {}
  plots[#plots + 1] = "x with lines lw 2 lc rgb '#333333' title 'speed of light (time = bound)'"
  if #ok_rows > 0 then
    blocks[#blocks + 1] = { "ok", ok_rows }
    plots[#plots + 1] = "$ok using 1:2 with points pt 7 ps 1.2 lc rgb '#1f77b4' title 'at or above the bound'"
    plots[#plots + 1] = "$ok using 1:2:3 with labels offset 1,0.6 left font 'sans,9' notitle"
  end
  if #bad_rows > 0 then
    blocks[#blocks + 1] = { "bad", bad_rows }
    plots[#plots + 1] = "$bad using 1:2 with points pt 9 ps 1.6 lc rgb '#d62728' title 'faster than the bound: suspicious'"
    plots[#plots + 1] = "$bad using 1:2:3 with labels offset 1,-0.8 left font 'sans,9' tc rgb '#d62728' notitle"
  end
  f.blocks = blocks
  f.script = table.concat({
    "set logscale xy 10", ("set xrange [%.17g:%.17g]"):format(lo / 2, hi * 4), ("set yrange [%.17g:%.17g]"):format(lo / 2, hi * 4),
    "set xlabel 'speed-of-light bound (ms)'", "set ylabel 'candidate time (ms, median)'", "set grid", "set key top left",
    "plot " .. table.concat(plots, ", "),
  }, "\n")
  return f
end

-- all(d) -> the figures in the report's order
function M.all(d)
  return { M.verdicts(d), M.speedups(d, "baseline"), M.speedups(d, "pytorch"), M.heatmap(d), M.addressable(d),
           M.dlrm(d), M.roofline(d) }
end

-- table_rows(d) -> the per-problem table: each evaluation of a candidate once (as the figures
-- count them), in the problems' order
function M.table_rows(d)
  local s = summary.compute(d, { by = { "problem" }, rows = true })
  local out = {}
  for _, g in ipairs(s.groups) do
    for _, r in ipairs(g.rows) do
      out[#out + 1] = { row = r, problem = g.name, model = summary.model_of(r, d.models) }
    end
  end
  return out
end

local function ci(x, lo, hi)
  if type(x) ~= "number" then return "-" end
  if type(lo) == "number" and type(hi) == "number" then return ("%.3fx [%.3f, %.3f]"):format(x, lo, hi) end
  return ("%.3fx"):format(x)
end

-- the table's columns: { header, value(t) (what it sorts by: a number or a string, nil last),
-- text(t) }, t being one of table_rows'
M.COLUMNS = {
  { "problem", function(t) return t.problem end },
  { "model", function(t) return t.model end },
  { "candidate", function(t) return t.row.candidate_name or t.row.candidate_path or "?" end },
  { "dtype", function(t) return t.row.dtype end },
  { "verdict", function(t) return t.row.verdict end, function(t)
      return t.row.reason and (t.row.verdict .. ": " .. t.row.reason) or t.row.verdict end },
  { "time (ms)", function(t) return t.row.candidate_ms end,
    function(t) return t.row.candidate_ms and ("%.4g"):format(t.row.candidate_ms) or "-" end },
  { "vs baseline", function(t) return t.row.speedup end,
    function(t) return ci(t.row.speedup, t.row.speedup_lo, t.row.speedup_hi) end },
  { "vs PyTorch", function(t) return t.row.speedup_pytorch end,
    function(t) return ci(t.row.speedup_pytorch, t.row.speedup_pytorch_lo, t.row.speedup_pytorch_hi) end },
  { "SoL", function(t) return t.row.sol_fraction end,
    function(t) return t.row.sol_fraction and ("%.0f%%"):format(100 * t.row.sol_fraction) or "-" end },
  { "KernelBench", function(t) return t.row.kernelbench end },
}

-- record(row) -> the evaluation's full record as stored (the candidate's source apart; the
-- report's own marks left out)
function M.record(r)
  local t = {}
  for k, v in pairs(r) do
    if k ~= "candidate_source" and not k:match("^report_") then t[k] = v end
  end
  return t
end

return M
