-- The end-to-end gain of DLRM-Bench candidates, measured (issue 18): a DLRM training step
-- written with kreach's operators (experiments/dlrm/step.lua) timed with and without each
-- candidate in place of its problem's operator, against the gain Amdahl's law projects.
--
--   kreach experiments/dlrm/measure.lua [--config kaggle,mlperf] [--results results.db]
--       [--budget S] [--steps N] [--check-max-rows N] [--python python3] [--no-torch] [--json FILE]
--
-- For each configuration (experiments/workloads/dlrm.py's kaggle and mlperf):
--   1. The candidates: for each problem with a part in the step (1, 5, 7, 8, 10, 11), the
--      fastest correct f32 candidate of the results database. A candidate replaces its
--      operator only where the problem's shapes are the step's at some sizes
--      (step.lua's problem_sizes), and only after `kreach check` (the whole protocol, in a
--      worker) found it correct at those sizes; otherwise the table says why not.
--   2. The numerical cross-check: the step's initial parameters and data batches are written to
--      a directory; N steps of the Lua step and N of PyTorch's (experiments/dlrm/torch_step.py,
--      dlrm.py's model and SGD on the same values) give two loss sequences, compared step by
--      step; and each side's GPU time a step. The cross-check runs on tables capped at
--      --check-max-rows rows (default 100000), to keep the files small: the arithmetic is the
--      same at any table size.
--   3. The measurement: kreach.judge.timing (cold L2, interleaved, bootstrap intervals) times the
--      plain step against the step with one substitution, for each, and with all together.
--      Before and after each measurement the substituted step is compared with the plain one
--      (the timed calls' outputs are checked, as kreach eval checks them): one step of each from
--      the same parameters, every output within relative L2 1e-3 (step.lua's Step:differs). A substitution that
--      differs before is not measured; one that differs after (a candidate that changed its
--      behaviour while timed) has its measurement void.
--   4. The projection: the operator's own time in the step and the candidate's speedup over it,
--      both timed at the step's shapes (kreach.judge.timing again), through Amdahl's law:
--      S = 1 / ((1 - f) + f / s). The table puts it beside the measured S and its interval.
local kreach = require "kreach"
local argparse = require "argparse"
local cjson = require "cjson"
local candidate = require "kreach.candidate.lua"
local store = require "kreach.results.store"
local timing = require "kreach.judge.timing"

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local dlrm = dofile(here .. "/step.lua")

local parser = argparse("kreach experiments/dlrm/measure.lua",
  "Measure the end-to-end gain of DLRM-Bench candidates in a Lua DLRM training step.")
parser:option("--config", "Configurations, comma-separated: kaggle, mlperf.", "kaggle,mlperf")
parser:option("--results", "The results database the candidates come from.", os.getenv("KREACH_DB") or "results.db")
parser:option("--budget", "Seconds of sampling per timing.", "2"):convert(tonumber)
parser:option("--steps", "Steps of the loss cross-check.", "10"):convert(math.tointeger)
parser:option("--check-max-rows", "Cap on the tables' rows for the cross-check's copy.", "100000"):convert(math.tointeger)
parser:option("--python", "The python3 with CUDA PyTorch.", os.getenv("KREACH_PYTHON") or "python3")
parser:flag("--no-torch", "Skip the PyTorch cross-check.")
parser:option("--json", "Also write the results as one JSON object to this file.")
local args = parser:parse(arg)

local function die(msg)
  io.stderr:write("measure.lua: ", msg, "\n")
  os.exit(2)
end

local configs = {}
for c in args.config:gmatch("[^,]+") do
  if not dlrm.CONFIGS[c] then die(("--config: unknown configuration '%s' (kaggle, mlperf)"):format(c)) end
  configs[#configs + 1] = c
end
if not (args.budget and args.budget > 0) then die("--budget: a positive number of seconds expected") end
if not (args.steps and args.steps >= 1) then die("--steps: a positive whole number expected") end

kreach.skip_without_device()

-- ---- the candidates ----

local best = {}
do
  local f = io.open(args.results, "r")
  if not f then die(("the results database %s does not exist (kreach eval dlrm-bench DIR --db %s)"):format(args.results, args.results)) end
  f:close()
  local db = store.open(args.results, { readonly = true })
  for _, r in ipairs(db:evaluations{}) do
    if r.suite == "dlrm-bench" and r.verdict == "correct" and r.dtype == "f32" and type(r.speedup) == "number"
      and r.candidate_path then
      local b = best[r.problem_id]
      if not b or r.speedup > b.speedup then best[r.problem_id] = r end
    end
  end
  db:close()
end

local shell_quote = require("kreach.text").shell_quote

-- `kreach check` of a candidate at the step's sizes: correct, or nil and why
local function check_at(id, path, sizes)
  local cmd = { shell_quote(kreach.executable()), "check", "dlrm-bench/" .. id, shell_quote(path), "--json", "--timeout", "120" }
  local keys = {}
  for k in pairs(sizes) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do cmd[#cmd + 1] = ("--size %s=%d"):format(k, sizes[k]) end
  local p = io.popen(table.concat(cmd, " ") .. " 2>&1")
  local out = p:read("a")
  p:close()
  local line = out:match("(%b{})%s*$")
  local ok, res = pcall(cjson.decode, line or "")
  if not ok or type(res) ~= "table" or type(res.verdict) ~= "table" then
    return nil, "kreach check printed no result: " .. out:sub(-300)
  end
  if res.verdict.verdict ~= "correct" then
    return nil, ("kreach check at the step's sizes: %s (%s)"):format(res.verdict.verdict, tostring(res.verdict.reason))
  end
  return true
end

local function load_sub(path, pool)
  local cand = candidate.load(path)
  local prog, err = kreach.build{ source = cand.source, name = (path:match("([^/]+)%.lua$") or "candidate") .. ".cu",
                                  options = cand.options }
  if not prog then error(("%s: does not compile: %s"):format(path, err), 0) end
  local k, ctl = candidate.kit(prog, { pool = pool })
  return { path = path, call = function(a)
    local ok, why = candidate.call_forward(cand, k, a)
    ctl.release()
    return ok, why
  end }
end

-- ---- the PyTorch cross-check ----

local function cross_check(name, steps)
  local s = dlrm.new(name, { seed = 1, max_rows = math.min(args.check_max_rows, dlrm.CONFIGS[name].max_rows > 0
    and dlrm.CONFIGS[name].max_rows or args.check_max_rows) })
  local pool = timing.pool()
  s.lib.pool = pool
  local res = s:cross_check{ steps = steps, python = args.python, no_torch = args.no_torch }
  pool:free()
  return res
end

-- ---- one configuration ----

local topts = { mode = "cold", budget_s = args.budget }

local function measure_config(name)
  local out = { config = name, subs = {} }
  io.stderr:write(("measure.lua: %s: the cross-check (%d steps)\n"):format(name, args.steps))
  out.cross_check = cross_check(name, args.steps)

  io.stderr:write(("measure.lua: %s: building the step\n"):format(name))
  local s = dlrm.new(name, { seed = 2 })
  local pool = timing.pool()
  s.lib.pool = pool
  local function step_subject(label)
    return { name = label, call = function(set) s:step(set); pool:release() end }
  end
  -- the plain step alone: its GPU time a step
  local plain = timing.measure({ step_subject("step") }, topts, { sets = #s.data })
  out.step_ms = plain.subjects.step.summary.median
  out.step_ci = { plain.subjects.step.summary.ci_lo, plain.subjects.step.summary.ci_hi }
  -- the same step replayed as a CUDA graph: its GPU time without the host's launch gaps
  local gok, g = pcall(timing.measure, { step_subject("step") }, { mode = "graph", budget_s = args.budget }, { sets = #s.data })
  if gok then out.step_graph_ms = g.subjects.step.summary.median else out.step_graph_why = tostring(g) end

  local usable = {}
  for _, id in ipairs(dlrm.SLOTS) do
    local row = { problem = id }
    out.subs[#out.subs + 1] = row
    local b = best[id]
    local sizes, why = s:problem_sizes(id)
    if not b then row.skip = "no correct f32 candidate in " .. args.results
    elseif not sizes then row.skip = why
    else
      row.candidate, row.db_speedup = b.candidate_path, b.speedup
      io.stderr:write(("measure.lua: %s: kreach check of %s at the step's sizes\n"):format(name, b.candidate_path))
      local ok, cwhy = check_at(id, b.candidate_path, sizes)
      if not ok then row.skip = cwhy
      else
        local lok, sub = pcall(load_sub, b.candidate_path, pool)
        if not lok then row.skip = tostring(sub)
        else
          row.sub = sub
          local dwhy = s:differs({ row })
          if dwhy then row.skip = dwhy; row.sub = nil else usable[#usable + 1] = row end
        end
      end
    end
  end

  for _, row in ipairs(usable) do
    local id = row.problem
    io.stderr:write(("measure.lua: %s: timing problem %d's substitution\n"):format(name, id))
    -- the operator alone at the step's shapes: baseline against candidate
    local d = s.data[1]
    local a = s:args_of(id, d)
    local base_call = {
      [1] = function() for t = 1, s.T do s.lib.embedding_bag(a[s.T + t], a[t], nil, s.emb, { col = (t - 1) * s.D }) end end,
      [7] = function() s.lib.dot_interaction(a[1], a[2], a[3]) end,
      [8] = function() s.lib.dot_interaction_backward(a[1], a[2], a[3], a[4], a[5]) end,
      [10] = function()
        local x = a[1]
        for l, layer in ipairs(s.bot) do s.lib.linear(x, a[2 * l], a[2 * l + 1], layer.y, { activation = "relu" }); x = layer.y end
      end,
      [11] = function() s.lib.bce_head(a[1], a[3], a[4], a[2], a[5], a[6], a[7], a[8]) end,
    }
    local op = timing.measure({
      { name = "baseline", call = function() base_call[id](); pool:release() end },
      { name = "candidate", call = function()
          local ok, why = row.sub.call(a)
          pool:release()
          if not ok then error(why, 0) end
        end },
    }, topts)
    row.op_ms = op.subjects.baseline.summary.median
    row.op_speedup, row.op_lo, row.op_hi = op.speedup.ratio, op.speedup.lo, op.speedup.hi
    row.share = row.op_ms / out.step_ms
    row.projected = 1 / ((1 - row.share) + row.share / row.op_speedup)
    -- the whole step, plain against substituted, interleaved
    local m = timing.measure({
      step_subject("plain"),
      { name = "substituted", call = function(set) s:substitute(id, row.sub); s:step(set); pool:release(); s:substitute(id, nil) end },
    }, topts, { sets = #s.data })
    row.measured, row.measured_lo, row.measured_hi = m.speedup.ratio, m.speedup.lo, m.speedup.hi
    row.plain_ms, row.sub_ms = m.subjects.plain.summary.median, m.subjects.substituted.summary.median
    -- the candidate once timed: still the plain step's outputs, or the measurement is void
    row.void = s:differs({ row })
  end
  -- all together: only the substitutions still valid after their own measurement
  local valid = {}
  for _, row in ipairs(usable) do if not row.void then valid[#valid + 1] = row end end
  usable = valid
  if #usable > 1 then
    local all = { problem = "all" }
    local inv = 0
    for _, row in ipairs(usable) do inv = inv + row.share / row.op_speedup - row.share end
    all.projected = 1 / (1 + inv)
    local m = timing.measure({
      step_subject("plain"),
      { name = "substituted", call = function(set)
          for _, row in ipairs(usable) do s:substitute(row.problem, row.sub) end
          s:step(set); pool:release()
          for _, row in ipairs(usable) do s:substitute(row.problem, nil) end
        end },
    }, topts, { sets = #s.data })
    all.measured, all.measured_lo, all.measured_hi = m.speedup.ratio, m.speedup.lo, m.speedup.hi
    all.void = s:differs(usable)
    out.all = all
  end
  pool:free()
  for _, row in ipairs(out.subs) do row.sub = nil end
  return out
end

local function fmt(x, f) return x and (f or "%.4f"):format(x) or "-" end

local results = {}
for _, name in ipairs(configs) do
  local o = measure_config(name)
  results[#results + 1] = o
  local cc = o.cross_check
  print(("%s: the Lua step %.4f ms a step on the GPU (cold, median [%.4f, %.4f]); replayed as a CUDA graph %s"):format(
    name, o.step_ms, o.step_ci[1] or 0 / 0, o.step_ci[2] or 0 / 0,
    o.step_graph_ms and ("%.4f ms"):format(o.step_graph_ms) or ("not timed: " .. tostring(o.step_graph_why))))
  if cc.torch then
    print(("  cross-check on tables capped at %d rows, %d steps: losses Lua %.6f -> %.6f, PyTorch %.6f -> %.6f, worst relative difference %.2e; PyTorch %.4f ms a step"):format(
      args.check_max_rows, #cc.lua, cc.lua[1], cc.lua[#cc.lua], cc.torch[1], cc.torch[#cc.torch], cc.max_rel_diff, cc.torch_step_ms or 0 / 0))
  else
    print(("  cross-check: Lua losses %.6f -> %.6f; PyTorch: %s"):format(cc.lua[1], cc.lua[#cc.lua], cc.torch_error or "skipped (--no-torch)"))
  end
  print(("  %-8s %-40s %10s %9s %10s %7s %10s %26s"):format("problem", "candidate", "op ms", "op x", "share", "proj.", "measured", "[95% CI]"))
  for _, r in ipairs(o.subs) do
    if r.skip then
      print(("  %-8s %s"):format(tostring(r.problem), "not measured: " .. r.skip))
    elseif r.void then
      print(("  %-8s %-40s void: after its measurement (%.4f), %s"):format(tostring(r.problem),
        (r.candidate or ""):match("[^/]*$"), r.measured, r.void))
    else
      print(("  %-8s %-40s %10s %9s %9.2f%% %7s %10s %26s"):format(tostring(r.problem), (r.candidate or ""):match("[^/]*$"),
        fmt(r.op_ms), fmt(r.op_speedup, "%.3fx"), 100 * r.share, fmt(r.projected, "%.4f"), fmt(r.measured, "%.4f"),
        ("[%s, %s]"):format(fmt(r.measured_lo), fmt(r.measured_hi))))
    end
  end
  if o.all and o.all.void then
    print(("  all together: void: after its measurement (%.4f), %s"):format(o.all.measured, o.all.void))
  elseif o.all then
    print(("  all together: projected %.4f, measured %.4f [%.4f, %.4f]"):format(o.all.projected, o.all.measured, o.all.measured_lo, o.all.measured_hi))
  end
  print()
end
if args.json then
  local f = assert(io.open(args.json, "w"))
  local dev = kreach.device()
  f:write(cjson.encode({ device = { name = dev.name, uuid = dev.uuid }, date = os.date("!%Y-%m-%d"), results = results }), "\n")
  f:close()
end
