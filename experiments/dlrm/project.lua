-- DLRM-Bench's kernel speedups projected onto whole DLRM training steps (issue 18).
--
--   kreach experiments/dlrm/project.lua [--config kaggle,mlperf] [--db results.db]
--       [--results DB] [--speedups 1=2.0,5=1.4] [--profile NAME=ID] [--trace NAME=FILE]
--       [--python python3] [--steps N] [--kernels] [--json FILE]
--
-- For each DLRM configuration (the runs dlrm-kaggle-train and dlrm-mlperf-train of
-- experiments/workloads/list.json) it:
--   1. profiles the PyTorch workload as `kreach profile --steps step --alternate` does (every
--      other step traced, so the report also has the steps' untraced wall time: these steps are
--      host-bound), storing the profile in --db; or reads a stored profile (--profile) or a trace
--      file (--trace) instead;
--   2. gives each kernel of the measured steps to the DLRM-Bench problem that replaces it, by
--      the table MAP below (kernel name patterns, and the grid where the name alone is not
--      enough), and checks the table against the trace: a problem whose patterns match no kernel
--      is said, and the largest kernels no problem claims are listed;
--   3. takes each problem's speedup: the fastest correct f32 candidate of the results database
--      (--results, default --db), measured against PyTorch eager (the kernels in the trace are
--      PyTorch's), or --speedups; and projects the step with Amdahl's law, on GPU time and on
--      wall time (the untraced steps' wall where the profile alternated):
--          S = 1 / ((1 - sum f_p) + sum f_p / s_p),  f_p = the problem's kernels' share.
-- The candidates were timed at the problems' shapes (docs/dlrm-bench.md), not at the step's: the
-- projection assumes the same speedup at the step's shapes, which experiments/dlrm/measure.lua
-- measures instead.
local kreach = require "kreach"
local argparse = require "argparse"
local cjson = require "cjson"
local report = require "kreach.profile.report"
local profile_run = require "kreach.profile.run"
local trace_mod = require "kreach.profile.trace"
local store = require "kreach.results.store"

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local root = here .. "/../.."
package.path = root .. "/experiments/workloads/?.lua;" .. package.path
local runs = require "runs"

local CONFIGS = { kaggle = "dlrm-kaggle-train", mlperf = "dlrm-mlperf-train" }

-- The kernels each problem replaces in PyTorch 2.11's eager DLRM training step (fp32, sparse
-- embedding gradients, SGD), found by position in each step's kernel sequence: names alone
-- cannot tell the interaction's GEMMs from the MLPs', nor the loss's fill from the interaction
-- gradient's. The anchors, in launch order, as the H200 traces of both configurations have them
-- (a step without one says so, and its problem gets nothing):
--   forward:  the bottom MLP | 26 x EmbeddingBag_updateOutputKernel | cat, bmm, index (the lower
--             triangle), cat | the top MLP | copy and GEMV (the 256 -> 1 layer), sigmoid,
--             binary_cross_entropy_out
--   backward: mean, fill, BCE backward, mul, sigmoid_backward, the head's 3 gradient kernels |
--             the top MLP's gradients | fill (dz's zeros), index_put's index arithmetic, sort and
--             indexing_backward_kernel, 2 batched GEMMs, 2 adds | 26 x vectorized_gather_kernel
--             (each bag's gradient expanded to its lookups) | the bottom MLP's gradients
--   SGD:      26 x indexFuncLargeIndex<ReduceAdd> (index_add_ of the sparse gradients) | the
--             dense parameters' adds
local MAP = {
  { problem = 10, what = "bottom MLP forward: every kernel before the first embedding bag" },
  { problem = 1, what = "the 26 embedding_bag forwards (EmbeddingBag_updateOutputKernel)" },
  { problem = 7, what = "dot interaction forward: after the last embedding bag, through the second cat" },
  { problem = 11, what = "head: the last linear layer's copy and GEMV, sigmoid, BCE; backward through sigmoid_backward and the 3 kernels after" },
  { problem = 8, what = "dot interaction backward: from the fill of dz's zeros to the kernel before the first embedding-gradient gather" },
  { problem = 5, what = "embedding gradients: the 26 gathers expanding each bag's gradient to its lookups (vectorized_gather_kernel)" },
  { problem = 6, what = "SGD's sparse update: index_add_ of the gathered gradients (indexFuncLargeIndex ReduceAdd): dlrm-bench-variants/6" },
}
-- the suite of each of the table's problems (dlrm-bench unless said)
local SUITE_OF = { [6] = "dlrm-bench-variants" }
local BENCH_PROBLEMS = { [1] = "1_EmbeddingBag_onehot_26_tables", [5] = "5_EmbeddingBag_backward",
                         [6] = "6_SparseSGD_index_add (variant)", [7] = "7_DotInteraction",
                         [8] = "8_DotInteraction_backward", [10] = "10_BottomMLP", [11] = "11_Head_BCE_fwd_bwd" }

local function find(ks, from, to, pat, pred)
  for i = from, to do
    if ks[i].name:find(pat) and (not pred or pred(ks[i])) then return i end
  end
end
local function find_last(ks, from, to, pats)
  for i = to, from, -1 do
    for _, p in ipairs(pats) do if ks[i].name:find(p) then return i end end
  end
end

-- assign(ks) -> { [i] = problem } for one step's kernels (in start order), and the anchors not
-- found ({ [problem] = why }).
local function assign(ks)
  local owner, missing = {}, {}
  local n = #ks
  local function take(p, a, b) for i = a, b do owner[i] = owner[i] or p end end
  local iE1 = find(ks, 1, n, "EmbeddingBag_updateOutputKernel")
  local iEl = find_last(ks, 1, n, { "EmbeddingBag_updateOutputKernel" })
  if not iE1 then
    for _, p in ipairs({ 1, 7, 10 }) do missing[p] = "no EmbeddingBag_updateOutputKernel" end
  else
    if iE1 > 1 then take(10, 1, iE1 - 1) else missing[10] = "no kernel before the first embedding bag" end
    for i = iE1, iEl do if ks[i].name:find("EmbeddingBag_updateOutputKernel") then owner[i] = 1 end end
    local c1 = find(ks, iEl + 1, n, "CatArrayBatchedCopy")
    local c2 = c1 and find(ks, c1 + 1, n, "CatArrayBatchedCopy")
    if c2 then take(7, iEl + 1, c2) else missing[7] = "no two cat kernels after the last embedding bag" end
  end
  local iBCE = find(ks, 1, n, "binary_cross_entropy_out")
  local iSB = iBCE and find(ks, iBCE + 1, n, "sigmoid_backward")
  if not iSB then
    missing[11] = "no binary_cross_entropy_out followed by sigmoid_backward"
  else
    local iH = find_last(ks, 1, iBCE - 1, { "gemv", "gemm", "Kernel2", "nvjet" })
    if iH then
      if iH > 1 and ks[iH - 1].name:find("direct_copy") then iH = iH - 1 end
      take(11, iH, math.min(n, iSB + 3))
    else
      missing[11] = "no GEMM before the loss"
    end
  end
  local from = iSB and iSB + 4 or 1
  local iF = find(ks, from, n, "FillFunctor", function(k) return (k.grid and k.grid[1] or 1) > 1 end)
  local iG = find(ks, iF or from, n, "vectorized_gather_kernel")
  if iF and iG then take(8, iF, iG - 1) else missing[8] = "no fill of dz followed by the embedding gradients' gathers" end
  if iG then
    local i = iG
    while i <= n and ks[i].name:find("vectorized_gather_kernel") do owner[i] = 5; i = i + 1 end
  else
    missing[5] = "no vectorized_gather_kernel after the interaction's backward"
  end
  local any6 = false
  for i = iG or 1, n do
    if ks[i].name:find("indexFuncLargeIndex") and ks[i].name:find("ReduceAdd") then owner[i] = 6; any6 = true end
  end
  if not any6 then missing[6] = "no indexFuncLargeIndex ReduceAdd (index_add_)" end
  return owner, missing
end

local function die(msg)
  io.stderr:write("project.lua: ", msg, "\n")
  os.exit(2)
end

local parser = argparse("kreach experiments/dlrm/project.lua",
  "Project DLRM-Bench's kernel speedups onto DLRM training steps (Amdahl's law over a profile).")
parser:option("--config", "Configurations, comma-separated: kaggle, mlperf.", "kaggle,mlperf")
parser:option("--db", "Where profiles are stored (and read with --profile).", os.getenv("KREACH_DB") or "results.db")
parser:option("--results", "The results database the speedups come from (default: --db).")
parser:option("--speedups", "Speedups by problem id, instead of the database's: 1=2.0,5=1.4 (6: dlrm-bench-variants/6, SGD).")
parser:option("--profile", "Use a stored profile for a configuration: NAME=ID (kaggle=3).")
  :count("*")
parser:option("--trace", "Use a trace file for a configuration: NAME=FILE (kreach, Kineto or nsys).")
  :count("*")
parser:option("--python", "The python3 that runs the workloads.", os.getenv("KREACH_PYTHON") or "python3")
parser:option("--steps", "Measured steps of each workload run (every other one traced).", "20")
  :convert(function(s) local n = math.tointeger(tonumber(s)); if n and n >= 4 then return n end
    return nil, "a whole number of at least 4 expected" end)
parser:flag("--kernels", "List every kernel of the measured steps with the problem that claims it.")
parser:option("--json", "Also write the projections as one JSON object to this file.")
local args = parser:parse(arg)

local function pairs_option(list, what)
  local out = {}
  for _, s in ipairs(list) do
    local k, v = s:match("^([%w_]+)=(.+)$")
    if not k or not CONFIGS[k] then die(("--%s %s: NAME=VALUE expected, NAME one of kaggle, mlperf"):format(what, s)) end
    out[k] = v
  end
  return out
end
local stored, files = pairs_option(args.profile, "profile"), pairs_option(args.trace, "trace")

local wanted = {}
for c in args.config:gmatch("[^,]+") do
  if not CONFIGS[c] then die(("--config: unknown configuration '%s' (kaggle, mlperf)"):format(c)) end
  wanted[#wanted + 1] = c
end

-- ---- the speedups ----

local speedups, source = {}, {}
if args.speedups then
  for item in args.speedups:gmatch("[^,]+") do
    local id, s = item:match("^(%d+)=([%d.eE+-]+)$")
    s = tonumber(s)
    if not id or not s or not (s > 0 and s < math.huge) then die(("--speedups: '%s' is not ID=SPEEDUP"):format(item)) end
    speedups[tonumber(id)] = s
    source[tonumber(id)] = "--speedups"
  end
else
  local path = args.results or args.db
  local f = io.open(path, "r")
  if not f then die(("the results database %s does not exist (evaluate candidates with `kreach eval dlrm-bench DIR --db %s`, or give --speedups)"):format(path, path)) end
  f:close()
  local db = store.open(path, { readonly = true })
  for _, r in ipairs(db:evaluations{}) do
    -- the table's problem 6 is dlrm-bench-variants/6 (SGD), not dlrm-bench/6 (Adagrad)
    local id = r.problem_id
    if (SUITE_OF[id] or "dlrm-bench") == r.suite and r.verdict == "correct" and r.dtype == "f32"
      and type(r.speedup_pytorch) == "number" and r.speedup_pytorch > 0 then
      if not speedups[id] or r.speedup_pytorch > speedups[id] then
        speedups[id] = r.speedup_pytorch
        source[id] = ("%s, evaluation %d [%.3f, %.3f]"):format(tostring(r.candidate_name or r.candidate_path),
          r.id, r.speedup_pytorch_lo or 0 / 0, r.speedup_pytorch_hi or 0 / 0)
      end
    end
  end
  db:close()
end

-- ---- the profiles ----

local function get_trace(config)
  local name = CONFIGS[config]
  if files[config] then
    local t, err = trace_mod.read(files[config])
    if not t then die(("--trace %s: %s"):format(files[config], err)) end
    local sel, serr = trace_mod.select(t, { range = "step", skip = 0 })
    if not sel then die(("--trace %s: %s"):format(files[config], serr)) end
    sel.workload = sel.workload or name
    return sel, ("trace %s"):format(files[config])
  end
  if stored[config] then
    local id = math.tointeger(tonumber(stored[config]))
    if not id then die(("--profile %s=%s: a profile id expected"):format(config, stored[config])) end
    local t, err = profile_run.load(id, args.db)
    if not t then die(("--profile %s=%s: %s"):format(config, stored[config], err)) end
    return t, ("profile %d in %s"):format(id, args.db)
  end
  kreach.skip_without_device()
  local list = runs.load(root .. "/experiments/workloads")
  local run
  for _, r in ipairs(list.runs) do if r.name == name then run = r end end
  if not run then die(("no run %s in experiments/workloads/list.json"):format(name)) end
  local argv = runs.program(run, root, args.python, { "--steps", tostring(args.steps) })
  io.stderr:write(("project.lua: profiling %s (%s steps, every other one traced)\n"):format(name, args.steps))
  local res, why, out = runs.profile(run, argv, { db = args.db, alternate = true })
  if not res then die(("profiling %s failed: %s\n%s"):format(name, why, (out or ""):sub(-2000))) end
  return res.selected, ("profiled now, profile %s in %s"):format(res.stored and res.stored.id or "?", args.db)
end

-- ---- one configuration ----

local function pct(x) return ("%.2f%%"):format(100 * x) end

local function project_one(config)
  local t, whence = get_trace(config)
  local rep = report.build(t)
  local alt = rep.alternate
  local steps = (alt and alt.traced) or (rep.selection and rep.selection.selected) or 1
  local wall_s = (alt and alt.wall_untraced_s) or rep.wall_s
  local wall_what = alt and alt.wall_untraced_s and "untraced steps' wall" or "wall"
  if alt and alt.wall_untraced_s then
    -- wall_untraced_s is the traced steps' wall less the profiler's slowdown
    wall_what = ("traced steps' wall less the profiler's %.1f%%"):format(100 * (alt.slowdown or 0))
  end
  local per = {}
  for _, e in ipairs(MAP) do per[e.problem] = { entry = e, ns = 0, count = 0, names = {} } end
  local unclaimed, claimed_of, missing_in = {}, {}, {}
  local intervals = t.meta and t.meta.selection and t.meta.selection.intervals
  if not intervals or #intervals == 0 then die(("%s: the trace has no selected 'step' ranges"):format(whence)) end
  local all = {}
  for _, k in ipairs(t.kernels or {}) do all[#all + 1] = k end
  table.sort(all, function(a, b) return a.start_ns < b.start_ns end)
  local j = 1
  for _, iv in ipairs(intervals) do
    local ks = {}
    while j <= #all and all[j].start_ns < iv[1] do j = j + 1 end
    while j <= #all and all[j].start_ns <= iv[2] do ks[#ks + 1] = all[j]; j = j + 1 end
    local owner, missing = assign(ks)
    for p, why in pairs(missing) do missing_in[p] = missing_in[p] or why end
    for i, k in ipairs(ks) do
      local d = k.end_ns - k.start_ns
      local o = owner[i]
      if o then
        local p = per[o]
        p.ns, p.count = p.ns + d, p.count + 1
        p.names[k.name] = (p.names[k.name] or 0) + d
      else
        local u = unclaimed[k.name] or { name = k.name, ns = 0, count = 0 }
        u.ns, u.count = u.ns + d, u.count + 1
        unclaimed[k.name] = u
      end
      claimed_of[#claimed_of + 1] = { k = k, problem = o }
    end
  end
  local gpu_s = rep.totals.gpu_s
  local out = { config = config, workload = CONFIGS[config], source = whence, steps = steps,
                gpu_ms_per_step = 1e3 * gpu_s / steps, wall_ms_per_step = 1e3 * wall_s / steps,
                wall_basis = wall_what, problems = {}, missing = {} }
  local sum_f = { gpu = 0, wall = 0 }
  local sum_fs = { gpu = 0, wall = 0 }
  for _, e in ipairs(MAP) do
    local p = per[e.problem]
    local s = speedups[e.problem]
    local t_s = p.ns / 1e9
    local row = { problem = e.problem, name = BENCH_PROBLEMS[e.problem], what = e.what, kernels = p.count / steps,
                  ms_per_step = 1e3 * t_s / steps, frac_gpu = gpu_s > 0 and t_s / gpu_s or 0,
                  frac_wall = wall_s > 0 and t_s / wall_s or 0, speedup = s, speedup_source = source[e.problem] }
    if p.count == 0 or missing_in[e.problem] then
      out.missing[#out.missing + 1] = { problem = e.problem, why = missing_in[e.problem] or "no kernel" }
    end
    if s then
      row.saved_ms_per_step = row.ms_per_step * (1 - 1 / s)
      for _, key in ipairs({ "gpu", "wall" }) do
        local f = key == "gpu" and row.frac_gpu or row.frac_wall
        sum_f[key], sum_fs[key] = sum_f[key] + f, sum_fs[key] + f / s
      end
    end
    local names = {}
    for n, ns in pairs(p.names) do names[#names + 1] = { name = n, ms_per_step = 1e3 * ns / 1e9 / steps } end
    table.sort(names, function(a, b) return a.ms_per_step > b.ms_per_step end)
    row.kernel_names = names
    out.problems[#out.problems + 1] = row
  end
  local all_f = { gpu = 0, wall = 0 }
  for _, r in ipairs(out.problems) do all_f.gpu, all_f.wall = all_f.gpu + r.frac_gpu, all_f.wall + r.frac_wall end
  for _, key in ipairs({ "gpu", "wall" }) do
    local S = 1 / ((1 - sum_f[key]) + sum_fs[key])
    out[key] = { share = sum_f[key], claimed = all_f[key], S = S, gain = 1 - 1 / S }
  end
  local ul = {}
  for _, u in pairs(unclaimed) do ul[#ul + 1] = u end
  table.sort(ul, function(a, b) return a.ns > b.ns end)
  out.unclaimed = {}
  for i = 1, math.min(8, #ul) do
    out.unclaimed[i] = { name = ul[i].name, per_step = ul[i].count / steps, ms_per_step = 1e3 * ul[i].ns / 1e9 / steps,
                         frac_gpu = gpu_s > 0 and ul[i].ns / 1e9 / gpu_s or 0 }
  end
  out.kernel_list = claimed_of
  return out, rep
end

-- ---- output ----

local results = {}
for _, config in ipairs(wanted) do
  local o = project_one(config)
  results[#results + 1] = o
  print(("%s (%s): %d measured steps; GPU time %.3f ms a step, %s %.3f ms a step"):format(
    o.workload, o.source, o.steps, o.gpu_ms_per_step, o.wall_basis, o.wall_ms_per_step))
  print(("  %-34s %8s %9s %8s %8s %9s %9s  %s"):format("problem", "kernels", "ms/step", "GPU %", "wall %",
    "speedup", "saved ms", "speedup from"))
  for _, r in ipairs(o.problems) do
    print(("  %-34s %8.1f %9.4f %8s %8s %9s %9s  %s"):format(r.name, r.kernels, r.ms_per_step, pct(r.frac_gpu),
      pct(r.frac_wall), r.speedup and ("%.3fx"):format(r.speedup) or "-",
      r.saved_ms_per_step and ("%.4f"):format(r.saved_ms_per_step) or "-",
      r.speedup_source or "no correct candidate: 1.0x"))
  end
  print(("  the table's problems' kernels: %s of the GPU time, %s of the wall; those with a speedup: %s and %s"):format(
    pct(o.gpu.claimed), pct(o.wall.claimed), pct(o.gpu.share), pct(o.wall.share)))
  print(("  projected: GPU time %.4fx (%s of a step's GPU time saved); wall %.4fx (%s saved)"):format(
    o.gpu.S, pct(o.gpu.gain), o.wall.S, pct(o.wall.gain)))
  for _, m in ipairs(o.missing) do
    print(("  problem %d: a step of this trace lacks the table's anchors (%s)"):format(m.problem, m.why))
  end
  print("  largest kernels no problem claims:")
  for _, u in ipairs(o.unclaimed) do
    print(("    %7.4f ms/step %6s  %5.1f a step  %s"):format(u.ms_per_step, pct(u.frac_gpu), u.per_step, report.short_name(u.name, 90)))
  end
  if args.kernels then
    print("  every kernel of the measured steps (start order; grid; problem):")
    for _, c in ipairs(o.kernel_list) do
      local g = c.k.grid or {}
      print(("    %9.3f us  [%s,%s,%s]  %-3s %s"):format((c.k.end_ns - c.k.start_ns) / 1e3, tostring(g[1] or "?"),
        tostring(g[2] or "?"), tostring(g[3] or "?"), c.problem and tostring(c.problem) or "-", report.short_name(c.k.name, 120)))
    end
  end
  print()
end

if args.json then
  for _, o in ipairs(results) do o.kernel_list = nil end
  local f = assert(io.open(args.json, "w"))
  f:write(cjson.encode({ projections = results, map = MAP }), "\n")
  f:close()
end
