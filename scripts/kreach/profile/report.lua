-- kreach.profile.report: the addressable-fraction report of a trace and its Amdahl projection.
-- build() turns a trace (kreach.profile.trace) into a plain table that serialises to JSON; text()
-- and csv() render it; project() adds the end-to-end speedup for per-family kernel speedups.
--
-- Two denominators, always both:
--   GPU time  the summed duration of every kernel and memory operation in the window
--             (overlapping streams count each record in full), so family shares add to 100%;
--   wall      the window's wall time: the summed length of the selected ranges, or the first
--             kernel's start to the last kernel's end.
-- GPU busy is the union of kernel and memory-operation intervals within the window, over the
-- wall time: concurrent streams count once.
local classify = require "kreach.profile.classify"
local trace_mod = require "kreach.profile.trace"
local json = require "kreach.json"
local stats = require "kreach.stats"
local text = require "kreach.text"

local M = {}

M.TOP = 15
M.FORMULA = "S = 1 / ((1 - sum_i f_i) + sum_i f_i / s_i)"

local function memop_name(m)
  if m.kind == "memcpy" then return "[memcpy " .. (m.copy_kind or "?") .. "]" end
  return "[memset]"
end

-- The length of the union of [s, e) intervals, clipped to the sorted disjoint `within`.
local function busy_ns(records, within)
  local ivs = {}
  for _, r in ipairs(records) do
    if r.end_ns > r.start_ns then ivs[#ivs + 1] = { r.start_ns, r.end_ns } end
  end
  local union = trace_mod.merge(ivs)
  local total, j = 0, 1
  for _, u in ipairs(union) do
    while within[j] and within[j][2] <= u[1] do j = j + 1 end
    local k = j
    while within[k] and within[k][1] < u[2] do
      local s = math.max(u[1], within[k][1])
      local e = math.min(u[2], within[k][2])
      if e > s then total = total + (e - s) end
      k = k + 1
    end
  end
  return total
end
M.busy_ns = busy_ns

local function frac(x, d) if d and d > 0 then return x / d end return 0 end

-- not_traced(trace) -> the activity kinds the recording library was told to leave out
-- (KREACH_TRACE_KINDS), in a list, or nil when it traced them all (or the trace does not say).
function M.not_traced(t)
  local kinds = t.meta and t.meta.header and t.meta.header.kinds
  if type(kinds) ~= "table" then return nil end
  local have, out = {}, {}
  for _, k in ipairs(kinds) do have[k] = true end
  for _, k in ipairs(trace_mod.TRACE_KINDS) do
    if not have[k] then out[#out + 1] = k end
  end
  return out[1] and out or nil
end

-- alternate(trace) -> nil when the library traced every step, else what the alternation shows
-- (kreach profile --alternate: the library traced kernels, memcpys and memsets in every other
-- range of one name only, KREACH_TRACE_ALTERNATE), the profiler's own cost measured in this run:
--   range; traced, untraced (the selected steps of each kind); traced_step_s, untraced_step_s
--   (their medians); slowdown, slowdown_lo, slowdown_hi (the median of
--   kreach.stats.alternating_ratios over the selected steps, less 1, with its distribution-free
--   95% interval; nil with too few steps); pairs (the untraced steps compared); switches_on,
--   switches_off, switch_on_s, switch_off_s (the library's switching: counts and mean time,
--   taken out of the steps before the ratios, as it happens inside their ranges).
function M.alternate(t)
  local h, f = t.meta and t.meta.header, t.meta and t.meta.footer
  if not (h and h.alternate) then return nil end
  local function mean_s(ns, n) return (n or 0) > 0 and (ns or 0) / n / 1e9 or 0 end
  local a = { range = h.alternate, switches_on = f and f.switches_on, switches_off = f and f.switches_off,
              switch_on_s = f and mean_s(f.switch_on_ns, f.switches_on) or 0,
              switch_off_s = f and mean_s(f.switch_off_ns, f.switches_off) or 0 }
  local sel = t.meta.selection and t.meta.selection.alternate
  if not sel then return a end
  a.traced, a.untraced = sel.traced, sel.untraced
  local times, tr, un = {}, {}, {}
  for i, ns in ipairs(sel.steps_ns or {}) do
    times[i] = ns / 1e9
    local into = i % 2 == 1 and tr or un
    into[#into + 1] = times[i]
  end
  a.traced_step_s = tr[1] and stats.median(tr) or nil
  a.untraced_step_s = un[1] and stats.median(un) or nil
  local ratios = stats.alternating_ratios(times, a.switch_on_s, a.switch_off_s, (sel.from or 1) > 1)
  a.pairs = #ratios
  if ratios[1] then
    a.slowdown = stats.median(ratios) - 1
    local lo, hi = stats.median_ci(ratios)
    if lo then a.slowdown_lo, a.slowdown_hi = lo - 1, hi - 1 end
  end
  return a
end

-- build(trace[, opts]) -> report. opts: rules (a list, default classify.RULES), addressable (a
-- policy { family = bool }), speedups ({ family = s }: adds the projection). A trace without a
-- window is measured over its default window (kreach.profile.trace.select without a range).
function M.build(trace, opts)
  opts = opts or {}
  local t = trace
  if not t.window and #(t.kernels or {}) > 0 then
    local err
    t, err = trace_mod.select(trace)
    if not t then error(err, 2) end
  end
  local c = classify.new(opts.rules)
  local sel = t.meta and t.meta.selection or {}
  local within = sel.intervals or (t.window and { t.window }) or {}
  local wall_s = t.wall_s
  if not wall_s then
    local w = 0
    for _, iv in ipairs(within) do w = w + (iv[2] - iv[1]) end
    wall_s = w / 1e9
  end

  local fams, names = {}, {}
  local kernel_ns, memop_ns = 0, 0
  local function add(name, family, rule, dur)
    local f = fams[family]
    if not f then f = { count = 0, ns = 0 }; fams[family] = f end
    f.count, f.ns = f.count + 1, f.ns + dur
    local n = names[name]
    if not n then n = { name = name, family = family, rule = rule, count = 0, ns = 0 }; names[name] = n end
    n.count, n.ns = n.count + 1, n.ns + dur
  end
  for _, k in ipairs(t.kernels or {}) do
    local fam, rule = c:classify(k.name)
    local d = k.end_ns - k.start_ns
    kernel_ns = kernel_ns + d
    add(k.name, fam or "unclassified", rule and rule.id or nil, d)
  end
  for _, m in ipairs(t.memops or {}) do
    local d = m.end_ns - m.start_ns
    memop_ns = memop_ns + d
    add(memop_name(m), "memory", nil, d)
  end
  local gpu_ns = kernel_ns + memop_ns
  local gpu_s = gpu_ns / 1e9
  local all = {}
  for _, k in ipairs(t.kernels or {}) do all[#all + 1] = k end
  for _, m in ipairs(t.memops or {}) do all[#all + 1] = m end
  local busy_s = busy_ns(all, within) / 1e9

  local rep = {
    source = t.source, path = t.meta and t.meta.path, workload = t.workload, knobs = t.knobs,
    command = t.command, device = t.device, exit = t.meta and t.meta.exit, run_s = t.meta and t.meta.run_s,
    partial = t.meta and t.meta.partial or nil, not_traced = M.not_traced(t), alternate = M.alternate(t),
    selection = sel.range and { range = sel.range, skip = sel.skip, selected = sel.selected, total = sel.total } or nil,
    window_ns = t.window, wall_s = wall_s,
    totals = { kernels = #(t.kernels or {}), memops = #(t.memops or {}), dropped = t.dropped or 0,
               kernel_s = kernel_ns / 1e9, memop_s = memop_ns / 1e9, gpu_s = gpu_s,
               busy_s = busy_s, busy_frac = frac(busy_s, wall_s) },
    families = {}, kernels = {}, top = opts.top or M.TOP,
  }
  local policy = opts.addressable
  local add_s, vendor_s = 0, 0
  for _, fam in ipairs(c:families()) do
    local f = fams[fam]
    if f then
      local s = f.ns / 1e9
      local addr = classify.addressable(fam, policy)
      rep.families[#rep.families + 1] = { family = fam, vendor = classify.VENDOR[fam] or false, addressable = addr,
        count = f.count, time_s = s, frac_gpu = frac(s, gpu_s), frac_wall = frac(s, wall_s) }
      if addr then add_s = add_s + s else vendor_s = vendor_s + s end
    end
  end
  local un = fams.unclassified
  local un_s = un and un.ns / 1e9 or 0
  rep.addressable = { time_s = add_s, frac_gpu = frac(add_s, gpu_s), frac_wall = frac(add_s, wall_s) }
  -- alternating: the same share of the wall the steps take untraced (their time less the slowdown)
  local alt = rep.alternate
  if alt and alt.slowdown then
    alt.wall_untraced_s = wall_s / (1 + alt.slowdown)
    rep.addressable.frac_wall_untraced = frac(add_s, alt.wall_untraced_s)
  end
  rep.not_addressable = { time_s = vendor_s, frac_gpu = frac(vendor_s, gpu_s), frac_wall = frac(vendor_s, wall_s) }
  rep.unclassified = { count = un and un.count or 0, time_s = un_s, frac_gpu = frac(un_s, gpu_s),
                       frac_wall = frac(un_s, wall_s), kernels = {} }
  rep.other = { kernels = {} }
  local list = {}
  for _, n in pairs(names) do list[#list + 1] = n end
  table.sort(list, function(a, b)
    if a.ns ~= b.ns then return a.ns > b.ns end
    return a.name < b.name
  end)
  for _, n in ipairs(list) do
    local s = n.ns / 1e9
    local row = { name = n.name, family = n.family, rule = n.rule, count = n.count, time_s = s,
                  mean_s = s / n.count, frac_gpu = frac(s, gpu_s), frac_wall = frac(s, wall_s),
                  addressable = nil }
    if n.family ~= "unclassified" then row.addressable = classify.addressable(n.family, policy) end
    rep.kernels[#rep.kernels + 1] = row
    if n.family == "unclassified" then rep.unclassified.kernels[#rep.unclassified.kernels + 1] = row end
    if n.family == "other" then rep.other.kernels[#rep.other.kernels + 1] = row end
  end
  if opts.speedups then rep.projection = M.project(rep, opts.speedups) end
  return rep
end

-- project(report, speedups) -> projection. speedups = { family = s_i } (families without one
-- stay at 1.0x). Amdahl's law over each denominator D (GPU time, wall time), with f_i the
-- family's share of D: S = 1 / ((1 - sum f_i) + sum f_i / s_i); the time saved is D (1 - 1/S);
-- time outside kernels (the rest of the wall) is unchanged. Raises on an unknown family or a
-- speedup that is not a positive number.
function M.project(rep, speedups)
  if type(speedups) ~= "table" then error("project: a table of speedups expected", 2) end
  local known = { unclassified = true }
  for _, f in ipairs(classify.FAMILY_ORDER) do known[f] = true end
  local by = {}
  for _, f in ipairs(rep.families) do known[f.family] = true; by[f.family] = f end
  local fams = {}
  for fam, s in pairs(speedups) do
    if not known[fam] then
      local names = {}
      for _, f in ipairs(classify.FAMILY_ORDER) do names[#names + 1] = f end
      error(("unknown family '%s' in the speedups (families: %s)"):format(tostring(fam), table.concat(names, ", ")), 2)
    end
    if type(s) ~= "number" or not (s > 0 and s < math.huge) then
      error(("the speedup of %s must be a positive number"):format(fam), 2)
    end
    fams[#fams + 1] = fam
  end
  local order = {}
  for i, f in ipairs(classify.FAMILY_ORDER) do order[f] = i end
  table.sort(fams, function(a, b) return (order[a] or 99) < (order[b] or 99) or ((order[a] or 99) == (order[b] or 99) and a < b) end)
  local terms = {}
  local p = { speedups = speedups, formula = M.FORMULA, terms = terms }
  for _, key in ipairs({ "gpu", "wall" }) do
    local d = key == "gpu" and rep.totals.gpu_s or rep.wall_s
    local sum_f, sum_fs, saved = 0, 0, 0
    local parts = {}
    for _, fam in ipairs(fams) do
      local row = by[fam] or (fam == "unclassified" and rep.unclassified) or { time_s = 0 }
      local f = frac(row.time_s, d)
      local s = speedups[fam]
      sum_f, sum_fs = sum_f + f, sum_fs + f / s
      saved = saved + row.time_s * (1 - 1 / s)
      parts[#parts + 1] = ("%.4f/%.3g"):format(f, s)
    end
    local S = 1 / ((1 - sum_f) + sum_fs)
    p[key] = { S = S, before_s = d, after_s = d - saved, saved_s = saved, sum_f = sum_f,
               formula = ("S = 1 / ((1 - %.4f)%s) = %.4f"):format(sum_f,
                 #parts > 0 and (" + " .. table.concat(parts, " + ")) or "", S) }
  end
  for _, fam in ipairs(fams) do
    local row = by[fam] or (fam == "unclassified" and rep.unclassified) or { time_s = 0 }
    terms[#terms + 1] = { family = fam, speedup = speedups[fam], time_s = row.time_s,
      frac_gpu = frac(row.time_s, rep.totals.gpu_s), frac_wall = frac(row.time_s, rep.wall_s),
      saved_s = row.time_s * (1 - 1 / speedups[fam]) }
  end
  return p
end

-- ---- rendering ----

-- A kernel name shortened for a table: no "void ", no at::native or anonymous namespaces, cut
-- to `width` characters.
function M.short_name(name, width)
  local s = classify.normalize(name)
  s = s:gsub("%(anonymous namespace%)::", ""):gsub("at::native::", ""):gsub("at_cuda_detail::", "")
  width = width or 60
  if #s > width then s = s:sub(1, width - 3) .. "..." end
  return s
end

local function pct(x) return ("%.1f%%"):format(100 * x) end

-- Times print in ms, or in us when the window is under 10 ms.
local unit_scale, unit_name = 1e3, "ms"
local function ms(s) return ("%.3f"):format(s * unit_scale) end
local function set_unit(rep)
  if (rep.wall_s or 0) < 0.01 and (rep.totals.gpu_s or 0) < 0.01 then unit_scale, unit_name = 1e6, "us"
  else unit_scale, unit_name = 1e3, "ms" end
end

local function sorted_pairs_text(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = t[k]
    if type(v) == "table" then v = json.encode(v)
    elseif type(v) == "number" then v = ("%.14g"):format(v) end
    parts[#parts + 1] = k .. "=" .. tostring(v)
  end
  return table.concat(parts, ", ")
end

local function header(rep, out)
  out[#out + 1] = ("profile: %s trace%s"):format(rep.source or "?", rep.path and (" " .. rep.path) or "")
  if rep.command then
    local cmd = type(rep.command) == "table" and table.concat(rep.command, " ") or tostring(rep.command)
    local ex = rep.exit
    local how = ex and (ex.how == "signal" and ("killed by signal " .. tostring(ex.status)) or ("exit status " .. tostring(ex.status))) or nil
    out[#out + 1] = ("command: %s%s"):format(cmd, (how or rep.run_s) and (" (" .. table.concat(
      { how, rep.run_s and ("ran %.2f s"):format(rep.run_s) or nil }, ", ") .. ")") or "")
  end
  if rep.workload then out[#out + 1] = "workload: " .. tostring(rep.workload) end
  if type(rep.knobs) == "table" and next(rep.knobs) then out[#out + 1] = "knobs: " .. sorted_pairs_text(rep.knobs) end
  if type(rep.device) == "table" and rep.device.name then out[#out + 1] = "device: " .. tostring(rep.device.name) end
  local tt = rep.totals
  local win
  if rep.selection then
    local s = rep.selection
    win = ("%d of %d '%s' ranges (%d skipped%s)"):format(s.selected, s.total, s.range, s.skip or 0,
      rep.alternate and rep.alternate.traced and (", %d traced"):format(rep.alternate.traced) or "")
  else
    win = "first kernel start to last kernel end"
  end
  out[#out + 1] = ("window: %s; wall %s %s; %d kernels, %d memory operations%s"):format(win, ms(rep.wall_s or 0), unit_name,
    tt.kernels, tt.memops, tt.dropped > 0 and (", %d records DROPPED by the recorder"):format(tt.dropped) or "")
  if rep.partial then out[#out + 1] = "warning: partial trace (no footer): the program did not exit normally" end
  if rep.not_traced then
    out[#out + 1] = ("note: %s not traced (KREACH_TRACE_KINDS): the report leaves them out"):format(table.concat(rep.not_traced, ", "))
  end
  local a = rep.alternate
  if a then
    out[#out + 1] = ("alternate: kernels and memory operations traced in every other '%s' range only (the 1st, 3rd...): the totals and shares are over the %straced steps"):format(
      a.range, a.traced and (a.traced .. " ") or "")
    if a.slowdown then
      local ci = a.slowdown_lo and (" [%+.2f%%, %+.2f%%] (95%%)"):format(100 * a.slowdown_lo, 100 * a.slowdown_hi) or ""
      out[#out + 1] = ("  tracing slowed a step by %+.2f%%%s (the median over %d untraced steps, each against the traced ones beside it; switching taken out); median step traced %s %s, untraced %s %s"):format(
        100 * a.slowdown, ci, a.pairs, ms(a.traced_step_s or 0), unit_name, ms(a.untraced_step_s or 0), unit_name)
    elseif a.traced then
      out[#out + 1] = "  too few steps to compare traced and untraced ones (3 or more are needed)"
    end
  end
  out[#out + 1] = ("GPU busy: %s of the wall (kernels and memory operations, concurrent streams once); summed GPU time %s %s (kernels %s, memory %s)"):format(
    pct(tt.busy_frac), ms(tt.gpu_s), unit_name, ms(tt.kernel_s), ms(tt.memop_s))
end

-- The text report's lines, each made safe for a terminal: kernel names, ranges, the command,
-- the workload and the device come from a trace (a program's or a file's words), and may hold
-- terminal controls (ESC), bidirectional overrides or line breaks. They are written visibly
-- (kreach.text.clean, unbounded) and a break is " | ", so one entry stays one line. The JSON
-- and CSV reports keep every name exact: they are data (JSON escapes control characters).
local function lines(out)
  for i, l in ipairs(out) do out[i] = text.one_line(text.clean(l, math.huge)) end
  return table.concat(out, "\n") .. "\n"
end

-- text(report) -> the report as text tables.
function M.text(rep)
  local out = {}
  set_unit(rep)
  header(rep, out)
  if rep.totals.kernels == 0 and rep.totals.memops == 0 then
    out[#out + 1] = "no kernels or memory operations in the window"
    return lines(out)
  end
  out[#out + 1] = ""
  out[#out + 1] = ("%-14s %-12s %9s %11s %9s %9s"):format("family", "addressable", "count", "time " .. unit_name, "% GPU", "% wall")
  for _, f in ipairs(rep.families) do
    out[#out + 1] = ("%-14s %-12s %9d %11s %9s %9s"):format(f.family, f.addressable and "yes" or (f.vendor and "no (vendor)" or "no"),
      f.count, ms(f.time_s), pct(f.frac_gpu), pct(f.frac_wall))
  end
  local un = rep.unclassified
  if un.count > 0 then
    out[#out + 1] = ("%-14s %-12s %9d %11s %9s %9s"):format("unclassified", "unknown", un.count, ms(un.time_s), pct(un.frac_gpu), pct(un.frac_wall))
  end
  local tt = rep.totals
  out[#out + 1] = ("%-14s %-12s %9d %11s %9s %9s"):format("total", "", tt.kernels + tt.memops, ms(tt.gpu_s), pct(tt.gpu_s > 0 and 1 or 0),
    pct(rep.wall_s > 0 and tt.gpu_s / rep.wall_s or 0))
  out[#out + 1] = ""
  out[#out + 1] = ("addressable: %s of GPU time, %s of wall time%s"):format(pct(rep.addressable.frac_gpu), pct(rep.addressable.frac_wall),
    rep.addressable.frac_wall_untraced and (" (%s of the untraced steps' wall)"):format(pct(rep.addressable.frac_wall_untraced)) or "")
  if un.count > 0 then
    out[#out + 1] = ("  unclassified kernels (%s of GPU time, %s of wall) are not counted: up to %s of GPU time if they all were"):format(
      pct(un.frac_gpu), pct(un.frac_wall), pct(rep.addressable.frac_gpu + un.frac_gpu))
  end
  out[#out + 1] = ""
  out[#out + 1] = ("%-62s %-13s %7s %11s %10s %7s"):format("top kernels", "family", "count", "time " .. unit_name, "mean us", "% GPU")
  for i, k in ipairs(rep.kernels) do
    if i > rep.top then break end
    out[#out + 1] = ("%-62s %-13s %7d %11s %10.2f %7s"):format(M.short_name(k.name, 62), k.family, k.count, ms(k.time_s),
      k.mean_s * 1e6, pct(k.frac_gpu))
  end
  if #rep.kernels > rep.top then out[#out + 1] = ("(%d more)"):format(#rep.kernels - rep.top) end
  if #un.kernels > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "unclassified kernels (no rule matched; add one: docs/profiling.md):"
    for _, k in ipairs(un.kernels) do
      out[#out + 1] = ("  %7d x %11s %s  %s"):format(k.count, ms(k.time_s), unit_name, M.short_name(k.name, 200))
    end
  end
  if #rep.other.kernels > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "kernels in 'other':"
    for _, k in ipairs(rep.other.kernels) do
      out[#out + 1] = ("  %7d x %11s %s  %s"):format(k.count, ms(k.time_s), unit_name, M.short_name(k.name, 200))
    end
  end
  local p = rep.projection
  if p then
    out[#out + 1] = ""
    out[#out + 1] = ("projection (Amdahl): %s, f_i a family's share, s_i its speedup"):format(p.formula)
    local parts = {}
    for _, term in ipairs(p.terms) do parts[#parts + 1] = ("%s %.3gx"):format(term.family, term.speedup) end
    out[#out + 1] = ("  speedups: %s (every other family 1.0x)"):format(#parts > 0 and table.concat(parts, ", ") or "none")
    local u = unit_name
    out[#out + 1] = ("  GPU time:  %s; %s %s -> %s %s, saves %s %s"):format(p.gpu.formula, ms(p.gpu.before_s), u, ms(p.gpu.after_s), u, ms(p.gpu.saved_s), u)
    out[#out + 1] = ("  wall time: %s; %s %s -> %s %s, saves %s %s (time outside kernels unchanged)"):format(p.wall.formula,
      ms(p.wall.before_s), u, ms(p.wall.after_s), u, ms(p.wall.saved_s), u)
  end
  return lines(out)
end

-- json(report) -> one line of JSON.
function M.json(rep)
  return json.encode(rep)
end

-- Text a spreadsheet would run as a formula (a kernel named "=..." by the profiled program)
-- gets a leading apostrophe (kreach.text.csv_cell); numbers stay numbers.
local function csv_field(v)
  if v == nil then return "" end
  if type(v) == "boolean" then return v and "true" or "false" end
  if type(v) == "number" then return ("%.9g"):format(v) end
  v = text.csv_cell(tostring(v))
  if v:find('[,"\n\r]') then return '"' .. v:gsub('"', '""') .. '"' end
  return v
end

-- csv(report) -> CSV text, one table: a row per family, per kernel name (memory operations
-- by kind), the totals, and with a projection a row per speedup and per denominator.
function M.csv(rep)
  local rows = { "section,name,family,addressable,count,time_s,mean_s,frac_gpu,frac_wall,speedup" }
  local function row(...)
    local t = {}
    for i = 1, 10 do t[i] = csv_field((select(i, ...))) end
    rows[#rows + 1] = table.concat(t, ",")
  end
  for _, f in ipairs(rep.families) do
    row("family", f.family, f.family, f.addressable, f.count, f.time_s, f.time_s / f.count, f.frac_gpu, f.frac_wall)
  end
  local un = rep.unclassified
  if un.count > 0 then row("family", "unclassified", "unclassified", nil, un.count, un.time_s, un.time_s / un.count, un.frac_gpu, un.frac_wall) end
  for _, k in ipairs(rep.kernels) do
    row("kernel", k.name, k.family, k.addressable, k.count, k.time_s, k.mean_s, k.frac_gpu, k.frac_wall)
  end
  local tt = rep.totals
  row("total", "gpu", nil, nil, tt.kernels + tt.memops, tt.gpu_s, nil, 1, rep.wall_s > 0 and tt.gpu_s / rep.wall_s or 0)
  row("total", "wall", nil, nil, nil, rep.wall_s, nil, nil, 1)
  row("total", "busy", nil, nil, nil, tt.busy_s, nil, nil, tt.busy_frac)
  row("total", "addressable", nil, true, nil, rep.addressable.time_s, nil, rep.addressable.frac_gpu, rep.addressable.frac_wall)
  if rep.addressable.frac_wall_untraced then
    -- --alternate: the wall the traced steps would take untraced, and the addressable share of it
    row("total", "wall_untraced", nil, nil, nil, rep.alternate.wall_untraced_s, nil, nil, nil)
    row("total", "addressable_untraced", nil, true, nil, rep.addressable.time_s, nil, rep.addressable.frac_gpu,
      rep.addressable.frac_wall_untraced)
  end
  local p = rep.projection
  if p then
    for _, term in ipairs(p.terms) do
      row("speedup", term.family, term.family, nil, nil, term.time_s, nil, term.frac_gpu, term.frac_wall, term.speedup)
    end
    row("projection", "gpu", nil, nil, nil, p.gpu.after_s, nil, p.gpu.sum_f, nil, p.gpu.S)
    row("projection", "wall", nil, nil, nil, p.wall.after_s, nil, nil, p.wall.sum_f, p.wall.S)
  end
  return table.concat(rows, "\n") .. "\n"
end

return M
