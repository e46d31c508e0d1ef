-- The profiler checked against torch.profiler and against no profiler (issue 6). For each run
-- of experiments/workloads/list.json (the core runs unless --all or --only):
--   * --rounds rounds of three runs: one plain (`python3 <argv>`), one under
--     `kreach profile --steps step`, and one with the workload's own --torch-profile
--     (torch.profiler, CPU and CUDA activities, around the same warm-up and measured steps; its
--     Chrome trace is read by experiments/workloads/trace_stats.py and then deleted). The
--     profiled run is always the middle one and the order reverses from round to round, so a
--     drift of the machine (clocks, temperature) falls on every side.
-- CUPTI takes one subscriber a process, so kreach's library and torch.profiler cannot watch the
-- same process: the three kinds of run are separate processes running the same program with the
-- same seed, and are compared on the same steps (the `step` ranges after the warm-up).
-- Printed per workload: kernels a step by kreach and by torch.profiler (the same in every
-- round, else flagged), the kernel time a step by each (medians over rounds) and the median of
-- the rounds' differences (target 2%), kreach's own run-to-run spread of kernel time, the median
-- step time plain and profiled and the slowdown (target under 3%), and the records kreach
-- dropped. A kernel-time difference over 2% is starred; kernel counts that differ in some round
-- are marked "!".
-- usage: kreach experiments/profiler_check.lua [--only a,b | --all] [--rounds N (3)] [--steps N]
--            [--db FILE] [--python python3] [--extra 'OPTIONS'] [--kinds K] [--no-torch]
--            [--json FILE] [--timeout S] [--pin CPUS] [--alternate]
-- --extra appends options to every run's command line (such as '--compile'; words split at
-- white space, no quoting: every program is started from an argv list, no shell); --db keeps the
-- profiles in FILE (else a temporary database, removed at the end); --kinds sets
-- KREACH_TRACE_KINDS for the profiled runs (what the library traces, docs/profiling-inject.md).
-- The torch.profiler run's own median step time is printed too ("torch.prof"), for scale: it
-- pays CUPTI's tracing as well, and records the CPU side of every operator. --no-torch leaves
-- the torch.profiler runs out (the slowdown alone, for many rounds of long runs).
-- Step times of host-bound programs shift from run to run, so the slowdown (the ratio of the
-- medians, over runs, of the runs' median steps, profiled over plain) comes with a 95% bootstrap
-- interval (kreach.stats.ratio_ci, seed 1, each kind's runs resampled): the verdict on the 3%
-- target is "under" when the interval's top is under 3%, "over" when its bottom is over, else
-- "unresolved" (more rounds needed; with 3 rounds the interval is as wide as the runs' range).
-- "noise" is printed for scale: the larger relative range ((max - min) / median) of the plain
-- and of the profiled runs' median steps. "us/kernel" is the slowdown in time a kernel launched:
-- (profiled - plain median step) / kernels a step, what tracing costs a launch where the host's
-- time is the step's. --pin CPUS runs every program under `taskset -c CPUS` (the same CPUs for
-- every run), against the drift that the scheduler's placement adds to host-bound steps.
-- Every run is a process started by kreach.core.proc (the plain and torch.profiler ones through
-- runs.execute, the profiled ones through kreach.profile.run), killed with all it started after
-- --timeout seconds.
-- --alternate measures the slowdown within one process instead, free of the drift from process
-- to process: each round is one run under `kreach profile --alternate` (KREACH_TRACE_ALTERNATE=step),
-- so the library traces kernels, memcpys and memsets in the even steps (0, 2, ...) only (NVTX
-- ranges in all), and each untraced step is compared with the mean of the traced steps either
-- side of it. Printed: kernels a traced step, the step pairs compared, the median untraced and
-- traced step, the slowdown (the median of the pairs' ratios) with its distribution-free 95%
-- interval, the range of the rounds' own medians, the time added a kernel, the mean time the
-- library took to switch tracing on (at a traced step's start) and off (at an untraced one's),
-- and the slowdown before those times were taken out of the steps ("raw"; switching is the
-- measurement's own cost: a run without --alternate switches nothing), and the median of the rounds'
-- slowdowns as the profile report measures them itself, from the NVTX ranges' lengths rather
-- than the program's own clock ("report"); last, what the --alternate run itself cost a step on
-- average, switching included ("run": the median, over the untraced steps, of the mean of the
-- step and its two neighbours as they came, over the step less its switching off). It measures
-- tracing against CUPTI attached but idle; plain runs against profiled ones (the default)
-- measure attaching as well.
local kreach = require "kreach"
kreach.skip_without_device()
local cjson = require "cjson"
local json = require("kreach.results.store").json
local stats = require "kreach.stats"

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local root = here .. "/.."
local db, only, all, python, json_out = os.tmpname(), nil, false, "python3", nil
local rounds, steps, timeout, extra, kinds, no_torch = 3, nil, 300, "", nil, false
local keep_db, pin, alternate = false, nil, false
local function usage(msg)
  io.stderr:write("profiler_check: ", msg, "\n")
  os.exit(2)
end
local function count(s, what)
  local n = math.tointeger(tonumber(s))
  if not n or n < 1 then usage(what .. " takes a positive integer") end
  return n
end
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--db" then i = i + 1; db = arg[i]; keep_db = true
  elseif a == "--only" then i = i + 1; only = {}; for n in (arg[i] or ""):gmatch("[^,]+") do only[n] = true end
  elseif a == "--all" then all = true
  elseif a == "--rounds" then i = i + 1; rounds = count(arg[i], "--rounds")
  elseif a == "--steps" then i = i + 1; steps = count(arg[i], "--steps")
  elseif a == "--timeout" then i = i + 1; timeout = count(arg[i], "--timeout")
  elseif a == "--python" then i = i + 1; python = arg[i]
  elseif a == "--extra" then i = i + 1; extra = arg[i] or ""
  elseif a == "--kinds" then i = i + 1; kinds = arg[i]
  elseif a == "--no-torch" then no_torch = true
  elseif a == "--alternate" then alternate = true
  elseif a == "--json" then i = i + 1; json_out = arg[i]
  elseif a == "--pin" then
    i = i + 1; pin = arg[i]
    if not pin or not pin:match("^[%d,%-]+$") then usage("--pin takes a CPU list such as 2-5 or 0,2") end
  else usage("unknown option " .. tostring(a)) end
  i = i + 1
end

package.path = here .. "/workloads/?.lua;" .. package.path
local runs = require "runs"
local list = runs.load(here .. "/workloads")
-- the median, nil for no values (a run traced without kernels has no difference to give)
local function median(xs) return xs[1] ~= nil and stats.median(xs) or nil end

-- the program's argv: the script as a path from the repository root, then its options (with
-- --steps, the measured steps overridden: argparse keeps the last --steps), then --extra's words
-- and `more`'s
local function program(run, more)
  local words = {}
  if steps then words[#words + 1] = "--steps"; words[#words + 1] = tostring(steps) end
  for w in extra:gmatch("%S+") do words[#words + 1] = w end
  for _, w in ipairs(more or {}) do words[#words + 1] = w end
  return runs.pinned(runs.program(run, root, python, words), pin)
end

if pin and not select(2, runs.execute({ "taskset", "-c", pin, "true" })) then
  usage(("--pin %s: `taskset -c %s true` failed (no taskset, or no such CPUs)"):format(pin, pin))
end

-- runs a program (an argv list) with the time limit, returns its output (stdout, then stderr)
-- and whether it exited 0
local function execute(argv) return runs.execute(argv, { timeout_s = timeout }) end

local function summary_of(out)
  local line = out:match("\nsummary (%b{})") or out:match("^summary (%b{})")
  if not line then return nil end
  local ok, s = pcall(json.decode, line)
  return ok and type(s) == "table" and s or nil
end

local function tail(out) return (out:sub(-400):gsub("\n", " | ")) end

-- the measured steps of a run: --steps, else the list's own
local function steps_of(run)
  if steps then return steps end
  for j = 2, #run.argv - 1 do
    if run.argv[j] == "--steps" then return math.tointeger(tonumber(run.argv[j + 1])) end
  end
  error(("%s: list.json gives no --steps; pass --steps"):format(run.name))
end

local function plain(run)
  local out, ok = execute(program(run))
  local s = summary_of(out)
  if not ok or not s then return nil, "the plain run failed: " .. tail(out) end
  return { step_ms = s.median_step_ms }
end

local function profiled(run)
  local res, why, failed_out = runs.profile(run, program(run), { db = db, kinds = kinds, timeout_s = timeout })
  if not res then return nil, ("the profiled run failed: %s: %s"):format(why, tail(failed_out)) end
  local out = res.output
  local s = summary_of(out)
  local r = res.report
  if not s then return nil, "the profiled run failed: " .. tail(out) end
  local n = r.selection and r.selection.selected or 0
  if n ~= steps_of(run) then return nil, ("the profile holds %d step ranges, not %d"):format(n, steps_of(run)) end
  return { step_ms = s.median_step_ms, kernels = r.totals.kernels / n, kernel_ms = r.totals.kernel_s * 1e3 / n,
           dropped = r.totals.dropped }
end

local function torch_profiled(run)
  local trace = os.tmpname() .. ".json"
  local out, ok = execute(program(run, { "--torch-profile", trace }))
  local st_out, st_ok = execute(runs.pinned({ python, here .. "/workloads/trace_stats.py", trace }, pin))
  os.remove(trace)
  local s = summary_of(out)
  if not ok or not s then return nil, "the torch.profiler run failed: " .. tail(out) end
  local dok, st = pcall(json.decode, st_out:match("(%b{})%s*$") or "")
  if not st_ok or not dok or type(st) ~= "table" then return nil, "trace_stats failed: " .. tail(st_out) end
  local n = steps_of(run)
  if st.ranges ~= n then return nil, ("the trace holds %d step ranges, not %d"):format(st.ranges, n) end
  return { kernels = st.total.kernels.count / n, kernel_ms = st.total.kernels.time_ms / n,
           outside = st.gpu_activities_outside_ranges, step_ms = s.median_step_ms }
end

-- the verdict on the target of a slowdown known to lie in [lo, hi]
local TARGET = 0.03
local function verdict(lo, hi)
  return hi < TARGET and "under" or lo > TARGET and "over" or "unresolved"
end

-- the plain, profiled (and torch.profiler) runs of a run, compared: a row of the table
local function compare(run)
  local row = { name = run.name, plain_ms = {}, profiled_ms = {}, kreach = {} }
  local function note(res, err)
    if not res and not row.error then row.error = err end
    return res
  end
  -- a round: one plain, one profiled and one torch.profiler run, the profiled one in the
  -- middle, so that it is next in time to the torch.profiler run it is compared with
  row.torch_runs = {}
  for r = 1, rounds do
    local order = r % 2 == 1 and { "plain", "profiled", "torch" } or { "torch", "profiled", "plain" }
    if no_torch then order = r % 2 == 1 and { "plain", "profiled" } or { "profiled", "plain" } end
    local k, t
    for _, kind in ipairs(order) do
      if kind == "plain" then
        local p = note(plain(run))
        if p then row.plain_ms[#row.plain_ms + 1] = p.step_ms end
      elseif kind == "profiled" then
        k = note(profiled(run))
        if k then
          row.profiled_ms[#row.profiled_ms + 1] = k.step_ms
          row.kreach[#row.kreach + 1] = k
        end
      else
        t = note(torch_profiled(run))
        if t then row.torch_runs[#row.torch_runs + 1] = t end
      end
    end
    if k and t then
      k.torch = t
      -- (a run traced without kernels, KREACH_TRACE_KINDS=marker, has nothing to compare)
      k.diff = k.kernels > 0 and t.kernel_ms > 0 and k.kernel_ms / t.kernel_ms - 1 or nil
    end
  end
  if not row.error then
    local k1, t1 = row.kreach[1], row.torch_runs[1]
    row.kernels_kreach = k1.kernels
    local kms = {}
    for _, k in ipairs(row.kreach) do
      if k.kernels ~= k1.kernels then row.count_mismatch = true end
      kms[#kms + 1] = k.kernel_ms
    end
    local ks = stats.summary(kms)
    row.kernel_ms_kreach = ks.median
    -- the spread of kreach's own kernel time from run to run, for scale
    row.kernel_ms_spread = ks.min > 0 and ks.max / ks.min - 1 or nil
    if t1 then
      -- counts must agree in every round; times are compared round by round (median difference)
      row.kernels_torch = t1.kernels
      local diffs, tms, torch_step = {}, {}, {}
      for _, k in ipairs(row.kreach) do
        if k.torch.kernels ~= k1.kernels then row.count_mismatch = true end
        diffs[#diffs + 1] = k.diff -- (nil, nothing to compare, adds nothing)
        tms[#tms + 1] = k.torch.kernel_ms
        torch_step[#torch_step + 1] = k.torch.step_ms
      end
      row.kernel_ms_torch = median(tms)
      row.kernel_ms_diff = median(diffs)
      row.step_ms_torch = median(torch_step)
    end
    row.dropped = 0
    for _, x in ipairs(row.kreach) do row.dropped = row.dropped + x.dropped end
    local ps, fs = stats.summary(row.plain_ms), stats.summary(row.profiled_ms)
    row.step_ms_plain, row.step_ms_profiled = ps.median, fs.median
    local ratio, lo, hi = stats.ratio_ci(row.profiled_ms, row.plain_ms, { seed = 1 })
    row.slowdown, row.slowdown_lo, row.slowdown_hi = ratio - 1, lo - 1, hi - 1
    row.noise = math.max((ps.max - ps.min) / ps.median, (fs.max - fs.min) / fs.median)
    row.verdict = verdict(row.slowdown_lo, row.slowdown_hi)
    row.us_per_kernel = k1.kernels > 0
      and (row.step_ms_profiled - row.step_ms_plain) * 1e3 / row.kernels_kreach or nil
    row.slowdown_torch = row.step_ms_torch and row.step_ms_torch / row.step_ms_plain - 1 or nil
  end
  return row
end

-- --alternate: one run a round under `kreach profile` with KREACH_TRACE_ALTERNATE=step, whose
-- even steps (0, 2, ...) are traced and odd ones not; each untraced step is compared with the
-- mean of the traced steps either side of it (which cancels a drift of the machine), and the
-- slowdown is the median of these ratios over all rounds, with its distribution-free 95%
-- interval (kreach.stats.median_ci)
local function alternating(run)
  local row = { name = run.name, ratios = {}, raw_ratios = {}, traced_ms = {}, untraced_ms = {}, round_slowdowns = {},
                dropped = 0, kernels = {}, on_us = {}, off_us = {}, report_slowdowns = {}, run_ratios = {} }
  for _ = 1, rounds do
    local res, why, failed_out = runs.profile(run, program(run), { db = db, kinds = kinds, alternate = true, timeout_s = timeout })
    if not res then row.error = ("the alternating run failed: %s: %s"):format(why, tail(failed_out)); return row end
    local out, r = res.output, res.report
    if not r.alternate then row.error = "the trace does not say it alternated: an older libkreach_inject.so?"; return row end
    local t, n, seen = {}, steps_of(run), 0
    for i, ms in ("\n" .. out):gmatch("\nstep (%d+) ([%d.]+)") do
      t[tonumber(i) + 1] = tonumber(ms)
      seen = seen + 1
    end
    for j = 1, n do
      if not t[j] or seen ~= n then row.error = ("the run's step lines are not steps 0 to %d"):format(n - 1); return row end
    end
    if n < 3 then row.error = "--alternate needs 3 steps or more"; return row end
    -- the library's switching is timed inside the steps (on at a traced step's start but the
    -- first's, off at an untraced one's); it is taken out of each, so the ratios compare tracing
    local a = r.alternate
    local on, off = (a.switch_on_s or 0) * 1e3, (a.switch_off_s or 0) * 1e3 -- a switch's mean time, ms
    row.on_us[#row.on_us + 1], row.off_us[#row.off_us + 1] = on * 1e3, off * 1e3
    local mine = stats.alternating_ratios(t, on, off)
    for _, x in ipairs(mine) do row.ratios[#row.ratios + 1] = x end
    for _, x in ipairs(stats.alternating_ratios(t)) do row.raw_ratios[#row.raw_ratios + 1] = x end
    -- what a run under --alternate costs a step, its switching included: each untraced step and
    -- the mean of its neighbours as they came, over that step less its switching off
    for i, x in ipairs(stats.alternating_ratios(t, 0, off)) do
      local j = 2 * i
      row.run_ratios[#row.run_ratios + 1] = (x + t[j] / (t[j] - off)) / 2
    end
    for j = 1, n do
      local into = j % 2 == 1 and row.traced_ms or row.untraced_ms
      into[#into + 1] = t[j]
    end
    row.round_slowdowns[#row.round_slowdowns + 1] = stats.median(mine) - 1
    row.kernels[#row.kernels + 1] = r.totals.kernels / ((n + 1) // 2)
    -- the report's own measure, from the NVTX ranges' lengths rather than the program's clock
    if a.slowdown then row.report_slowdowns[#row.report_slowdowns + 1] = a.slowdown end
    row.dropped = row.dropped + r.totals.dropped
  end
  row.kernels_per_step = stats.median(row.kernels)
  row.step_ms_untraced, row.step_ms_traced = stats.median(row.untraced_ms), stats.median(row.traced_ms)
  row.slowdown = stats.median(row.ratios) - 1
  row.slowdown_raw = stats.median(row.raw_ratios) - 1
  row.run_cost = stats.median(row.run_ratios) - 1
  local lo, hi = stats.median_ci(row.ratios)
  if not lo then row.error = "too few step pairs for an interval: raise --steps or --rounds"; return row end
  row.slowdown_lo, row.slowdown_hi = lo - 1, hi - 1
  row.verdict = verdict(row.slowdown_lo, row.slowdown_hi)
  row.us_per_kernel = row.kernels_per_step > 0
    and row.slowdown * row.step_ms_untraced * 1e3 / row.kernels_per_step or nil
  row.switch_on_us, row.switch_off_us = stats.median(row.on_us), stats.median(row.off_us)
  row.slowdown_report = row.report_slowdowns[1] and stats.median(row.report_slowdowns) or nil
  return row
end

local rows, failed = {}, 0
for _, run in ipairs(list.runs) do
  if (only and only[run.name]) or (not only and (all or run.core ~= false)) then
    local t0 = kreach.now()
    local row = alternate and alternating(run) or compare(run)
    if row.error then failed = failed + 1 end
    row.wall_s = kreach.now() - t0
    rows[#rows + 1] = row
    io.stderr:write(("checked %s in %.1f s%s\n"):format(run.name, row.wall_s, row.error and (": " .. row.error) or ""))
  end
end
if not keep_db then os.remove(db) end

local function pct(x, target)
  if not x then return "-" end
  return ("%+.2f%%%s"):format(100 * x, (target and math.abs(x) > target) and "*" or "")
end
-- the slowdowns of the rows that did not fail, and how many of them each verdict got
local function tally()
  local slows, verdicts = {}, { under = 0, over = 0, unresolved = 0 }
  for _, r in ipairs(rows) do
    if not r.error then
      slows[#slows + 1] = r.slowdown
      verdicts[r.verdict] = verdicts[r.verdict] + 1
    end
  end
  table.sort(slows)
  return ("slowdown median %+.2f%%, largest %+.2f%%; against 3%%: %d under, %d over, %d unresolved"):format(
    100 * median(slows), 100 * slows[#slows], verdicts.under, verdicts.over, verdicts.unresolved)
end

local function print_alternating()
  print(("%d rounds of one run under kreach profile --alternate (even steps traced, odd not), %s measured steps a run, KREACH_TRACE_KINDS %s, %s, on %s"):format(
    rounds, steps and tostring(steps) or "list.json's", kinds or "unset (all)", pin and ("pinned to CPUs " .. pin) or "not pinned",
    kreach.device().name))
  print(("%-20s %9s %7s %10s %10s %10s %19s %19s %9s %13s %10s %10s %-10s %7s %8s"):format("workload", "kernels", "pairs", "untraced",
    "traced", "slowdown", "(95% interval)", "(rounds' range)", "us/kernel", "on/off us", "(raw)", "(report)", "vs 3%", "dropped", "run"))
  for _, r in ipairs(rows) do
    if r.error then
      print(("%-20s FAILED %s"):format(r.name, r.error))
    else
      local rs = stats.summary(r.round_slowdowns)
      print(("%-20s %9.1f %7d %10.3f %10.3f %10s %19s %19s %9s %13s %10s %10s %-10s %7d %8s"):format(r.name, r.kernels_per_step, #r.ratios,
        r.step_ms_untraced, r.step_ms_traced, pct(r.slowdown),
        ("[%+.2f%%, %+.2f%%]"):format(100 * r.slowdown_lo, 100 * r.slowdown_hi),
        ("[%+.2f%%, %+.2f%%]"):format(100 * rs.min, 100 * rs.max),
        r.us_per_kernel and ("%.2f"):format(r.us_per_kernel) or "-",
        ("%.1f/%.1f"):format(r.switch_on_us, r.switch_off_us), pct(r.slowdown_raw), pct(r.slowdown_report), r.verdict, r.dropped, pct(r.run_cost)))
    end
  end
  if #rows > failed then print(tally()) end
end

local function print_compared()
  print(("%d rounds of plain, profiled%s runs, %s measured steps a run, KREACH_TRACE_KINDS %s, %s, on %s"):format(rounds,
    no_torch and "" or " and torch.profiler", steps and tostring(steps) or "list.json's", kinds or "unset (all)",
    pin and ("pinned to CPUs " .. pin) or "not pinned", kreach.device().name))
  print(("%-20s %9s %9s %10s %10s %9s %8s %10s %10s %7s %10s %19s %9s %-10s %10s %7s"):format("workload", "kernels", "(torch)", "kernel ms",
    "(torch)", "diff", "spread", "step ms", "profiled", "noise", "slowdown", "(95% interval)", "us/kernel", "vs 3%", "torch.prof", "dropped"))
  local diffs = {}
  for _, r in ipairs(rows) do
    if r.error then
      print(("%-20s FAILED %s"):format(r.name, r.error))
    else
      if r.kernel_ms_diff then diffs[#diffs + 1] = math.abs(r.kernel_ms_diff) end
      print(("%-20s %9s %9s %10.3f %10s %9s %8s %10.3f %10.3f %7s %10s %19s %9s %-10s %10s %7d"):format(r.name,
        ("%s%.1f"):format(r.count_mismatch and "!" or "", r.kernels_kreach),
        r.kernels_torch and ("%.1f"):format(r.kernels_torch) or "-",
        r.kernel_ms_kreach, r.kernel_ms_torch and ("%.3f"):format(r.kernel_ms_torch) or "-",
        pct(r.kernel_ms_diff, 0.02), pct(r.kernel_ms_spread), r.step_ms_plain, r.step_ms_profiled,
        ("%.1f%%"):format(100 * r.noise), pct(r.slowdown), ("[%+.2f%%, %+.2f%%]"):format(100 * r.slowdown_lo, 100 * r.slowdown_hi),
        r.us_per_kernel and ("%.2f"):format(r.us_per_kernel) or "-", r.verdict,
        pct(r.slowdown_torch), r.dropped))
    end
  end
  if #rows > failed then
    table.sort(diffs)
    print(("largest kernel-time difference %s (target 2%%); %s"):format(
      diffs[1] and ("%.2f%%"):format(100 * diffs[#diffs]) or "-", tally()))
  end
end

if alternate then print_alternating() else print_compared() end
if json_out then
  local f = assert(io.open(json_out, "w"))
  f:write(cjson.encode({ device = kreach.device().name, rounds = rounds, steps = steps or "list", kinds = kinds,
    torch = not no_torch and not alternate, pin = pin, alternate = alternate, rows = rows }), "\n")
  f:close()
end
os.exit(failed == 0 and 0 or 1)
