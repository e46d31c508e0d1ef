-- The paper's tables (issue 36, items 6 and 7), made from stored data alone: no GPU, nothing
-- measured here. experiments/paper/README.md says what each table is and how to remake the data.
--
-- usage: kreach experiments/paper/run.lua [--data DIR] [--out DIR]   write the tables (Markdown and CSV)
--        kreach experiments/paper/run.lua [--data DIR] --check DIR   make them in a temporary folder and
--                                                                   compare with DIR (status 1 on a difference)
--        kreach experiments/paper/run.lua --collect [--steps ...] [--model NAME] [--out DIR]
--                                                                   run the GPU parts into --data first
--                                                                   (experiments/paper/collect.lua); --dry-run prints them
--
-- --data (default experiments/paper/data): every *.jsonl there (kreach results export --format jsonl)
-- is imported into one temporary results database (kreach.results.import), whose figures
-- kreach.results.summary computes by model and by category; sources.tsv there names each file.
-- *-scale.json there (experiments/scale/run.lua --out) make the model-scale sweep's table (fitted
-- by experiments/scale/fitlib.lua), *-addressable.json there (experiments/addressable_fraction.lua
-- --json) the addressable fraction's, with the bound the models' verified speedups give.
-- The other tables read experiments/kernelbench/data and experiments/dlrm/data. Every table ends
-- with a line naming its source files; a table without data says what would fill it. The output
-- is a function of the files' contents alone (sorted, fixed formats, no dates or paths of this
-- machine), so that tests compare it with the committed tables (experiments/paper/tables).
local argparse = require "argparse"
local lfs = require "lfs"
local store = require "kreach.results.store"
local import = require "kreach.results.import"
local summary = require "kreach.results.summary"
local report = require "kreach.results.report"
local catalog = require "kreach.problem.catalog"
local stats = require "kreach.stats"
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local dlrm_tables = require "dlrm"
local trivial_tables = require "trivial"
local collect = require "collect"

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local root = here .. "/../.."
package.path = root .. "/experiments/scale/?.lua;" .. package.path
local fitlib = require "fitlib"
local kjson = require "kreach.json"
local text = require "kreach.text"
local profile_report = require "kreach.profile.report"

local parser = argparse("kreach experiments/paper/run.lua", "The paper's tables, from stored data alone.")
parser:option("--data", "The folder of the evaluations' JSON lines.", root .. "/experiments/paper/data")
parser:option("--out", "The folder to write the tables to (made when missing).")
parser:option("--check", "Make the tables in a temporary folder and compare them with this one.")
parser:flag("--collect", "First run the GPU parts that make the data, into --data (experiments/paper/collect.lua).")
parser:flag("--dry-run", "With --collect: print the commands instead of running them.")
parser:option("--steps", "With --collect: only these steps (examples,dlrm,trivial,addressable,scale,model).")
parser:option("--model", "With --collect: also generate and evaluate this model's candidates (a model API).")
parser:option("--machine", "With --collect: the files' machine tag (default from the GPU's name: h100, h200...).")
local args = parser:parse()

local CF = report.csv_field

-- ---- files ----

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function exists(path) return lfs.attributes(path) ~= nil end

local function real(path)
  local p = io.popen("realpath -e -- " .. text.shell_quote(path) .. " 2>/dev/null")
  local r = p:read("l")
  p:close()
  return r
end

-- the way a file of the repository is named in the tables: its path from the repository's root
-- (or as given, when it lies outside)
local ROOT = real(root)
local function shown(path)
  local r = real(path)
  if r and ROOT and r:sub(1, #ROOT + 1) == ROOT .. "/" then return r:sub(#ROOT + 2) end
  return path
end

local KB_DATA = root .. "/experiments/kernelbench/data"
local DLRM_DATA = root .. "/experiments/dlrm/data"

-- ---- --collect: what makes each data file ----

if args.collect then
  -- the GPU parts first (experiments/paper/collect.lua), into --data; then the tables below
  local kreach = require "kreach"
  local steps = {}
  for _, st in ipairs(collect.STEPS) do steps[st] = not args.steps end
  if args.steps then
    for w in args.steps:gmatch("[^,]+") do
      local known = false
      for _, st in ipairs(collect.STEPS) do known = known or st == w end
      if not known then parser:error(("--steps: no step %q (the steps: %s)"):format(w, table.concat(collect.STEPS, ", "))) end
      steps[w] = true
    end
  end
  local dev = kreach.device_or_nil and kreach.device_or_nil() or select(2, pcall(kreach.device))
  local has_gpu = type(dev) == "table" and dev.name
  local o = { kreach = kreach.executable(), data = args.dry_run and shown(args.data) or (real(args.data) or args.data), work = "$W", steps = steps, model = args.model,
              date = os.date("!%Y-%m-%d"), device = has_gpu and dev.name or "<device>",
              tag = args.machine or (has_gpu and collect.machine_tag(dev.name)) or "<machine>",
              sources = args.data .. "/sources.tsv", log = function(l) io.stderr:write(l, "\n") end }
  if args.dry_run then
    print("# experiments/paper/run.lua --collect --dry-run: what --collect runs, in order (W: a scratch folder)")
    for _, st in ipairs(collect.plan(o)) do
      print("\n# " .. st.step)
      for _, c in ipairs(st.cmds) do print(collect.command_text(c)) end
    end
    if not args.model then print("\n# model: kreach generate --eval for --model NAME (none given)") end
    os.exit(0)
  end
  if not has_gpu then
    io.stderr:write("experiments/paper/run.lua --collect: no GPU here (the collection measures on one); --collect --dry-run prints what it would run\n")
    os.exit(77)
  end
  local tmp = os.tmpname(); os.remove(tmp); lfs.mkdir(tmp)
  o.work = tmp
  local status = collect.run(o)
  os.execute("rm -rf '" .. tmp .. "'")
  if status ~= 0 then os.exit(status) end
  if not args.out and not args.check then os.exit(0) end
end

-- ---- Markdown and CSV ----

local function md_table(w, header, rows, right)
  local function cell(x) return (tostring(x):gsub("|", "\\|")) end
  local h, sep = {}, {}
  for i, x in ipairs(header) do h[i] = cell(x); sep[i] = (right and right[i]) and "---:" or "---" end
  w("| ", table.concat(h, " | "), " |\n| ", table.concat(sep, " | "), " |\n")
  for _, r in ipairs(rows) do
    local c = {}
    for i = 1, #header do c[i] = cell(r[i] == nil and "-" or r[i]) end
    w("| ", table.concat(c, " | "), " |\n")
  end
end

local function csv_table(w, header, rows)
  local h = {}
  for i, x in ipairs(header) do h[i] = CF(x) end
  w(table.concat(h, ","), "\n")
  for _, r in ipairs(rows) do
    local c = {}
    for i = 1, #header do c[i] = CF(r[i]) end
    w(table.concat(c, ","), "\n")
  end
end

local outputs = {} -- name -> text, in the order written
local order = {}
local function output(name)
  local parts = {}
  order[#order + 1] = name
  return function(...)
    for _, s in ipairs{ ... } do parts[#parts + 1] = s end
    outputs[name] = table.concat(parts)
  end
end

local function sources_line(list)
  local t = {}
  for i, s in ipairs(list) do t[i] = "`" .. s .. "`" end
  return "Source: " .. table.concat(t, ", ") .. "."
end

local index = {} -- { file, what, sources | "no data" }

local function fx(x) return x and ("%.3fx"):format(x) or "-" end
local function f3(x) return x and ("%.3f"):format(x) or "-" end
local function pct(x) return x and ("%.1f%%"):format(100 * x) or "-" end

-- ---- the evaluations: one temporary database ----

local DATA = args.data
local data_shown = shown(DATA)

local function jsonl_files(dir)
  local t = {}
  if not exists(dir) then return t end
  for f in lfs.dir(dir) do
    if f:match("%.jsonl$") then t[#t + 1] = f end
  end
  table.sort(t)
  return t
end

local files = jsonl_files(DATA)
local described = import.descriptions(DATA)
local data, categories, file_of = { rows = {}, models = {} }, {}, {}

if #files > 0 then
  local paths = {}
  for i, f in ipairs(files) do paths[i] = DATA .. "/" .. f; file_of[paths[i]] = f end
  local ok, err = pcall(import.into_temporary, paths, function(db_path)
    local rok, opened, d = pcall(store.read, db_path, summary.read)
    if not rok then error(opened, 0) end
    if not opened then error(d, 0) end
    data = d
  end)
  if not ok then io.stderr:write("experiments/paper/run.lua: ", tostring(err), "\n"); os.exit(3) end
  -- each problem file's category, loaded in kreach's loader (the rows' paths are the repository's)
  categories = summary.categories(data.rows, function(ps)
    local full = {}
    for i, p in ipairs(ps) do full[i] = p:sub(1, 1) == "/" and p or (root .. "/" .. p) end
    return catalog.load("problem", full)
  end)
end

-- the files (by name) a group's rows came from, and their descriptions
local function group_sources(pred)
  local seen, list = {}, {}
  for _, r in ipairs(data.rows) do
    if r.candidate_ref ~= nil and r.verdict ~= "baseline" and pred(r) then
      local f = file_of[r.source_file] or (r.source_file and r.source_file:match("[^/]+$")) or "?"
      if not seen[f] then seen[f] = true; list[#list + 1] = f end
    end
  end
  table.sort(list)
  return list
end

local function described_list(list)
  local t = {}
  for i, f in ipairs(list) do t[i] = described[f] or f end
  return table.concat(t, "; ")
end

local function data_sources()
  local t = {}
  for i, f in ipairs(files) do t[i] = data_shown .. "/" .. f end
  return t
end

-- ---- the model table ----

do
  local w = output("models.md")
  local c = output("models.csv")
  w("# Models: correctness and verified speedups\n\n")
  local header = { "model", "candidates of", "evaluations", "correct", "correct%", "problems", "solved",
                   "convolutions solved", "pass@1", "pass@5", "pass@10", "measured", "median vs baseline", "verified vs baseline",
                   "median vs PyTorch", "verified vs PyTorch", "fast_1 vs PyTorch" }
  local csv_header = { "model", "candidates_of", "evaluations", "correct", "correct_rate", "problems", "solved",
                       "convolution_problems", "convolutions_solved", "pass@1", "pass@5", "pass@10", "measured", "median_vs_baseline",
                       "verified_vs_baseline", "verified_median_vs_baseline", "median_vs_pytorch",
                       "verified_vs_pytorch", "verified_median_vs_pytorch", "fast_1_vs_pytorch" }
  if #data.rows == 0 then
    w(("no data: no evaluations in %s (kreach eval, or kreach generate --eval with a model API, on a GPU, then kreach results export --format jsonl; see experiments/paper/data/README.md)\n"):format(data_shown))
    c("# no data: no evaluations in ", data_shown, "\n")
    index[#index + 1] = { "models.md, models.csv", "the model table", "no data" }
  else
    local base = summary.compute(data, { by = { "model" }, categories = categories })
    local torch = summary.compute(data, { by = { "model" }, against = "pytorch", categories = categories })
    -- all the convolutions together: the category without its subcategory ("convolution/...")
    local top = {}
    for path, c in pairs(categories) do top[path] = c:match("^[^/]*") end
    local bycat = summary.compute(data, { by = { "model", "category" }, categories = top })
    local tg = {}
    for _, g in ipairs(torch.groups) do tg[g.key.model] = g end
    local conv = {}
    for _, g in ipairs(bycat.groups) do
      if g.key.category == "convolution" then conv[g.key.model] = g end
    end
    local rows, crows = {}, {}
    for _, g in ipairs(base.groups) do
      local m = g.key.model
      local t, cv = tg[m], conv[m]
      local function pass(x, k) for _, p in ipairs(x.pass_at) do if p.k == k then return p.value end end end
      local function fast1(x) for _, p in ipairs(x.fast_p) do if p.p == 1 then return p.value end end end
      local srcs = group_sources(function(r) return summary.model_of(r, data.models) == m end)
      rows[#rows + 1] = { m, described_list(srcs), g.evaluations, g.correct, pct(g.correct_rate), g.problems, g.solved,
        cv and ("%d of %d"):format(cv.solved, cv.problems) or "0 of 0", f3(pass(g, 1)), f3(pass(g, 5)), f3(pass(g, 10)), g.speedup.count,
        fx(g.speedup.median), ("%d (%s)"):format(g.verified.count, fx(g.verified.median)),
        fx(t.speedup.median), ("%d (%s)"):format(t.verified.count, fx(t.verified.median)), f3(fast1(t)) }
      crows[#crows + 1] = { m, described_list(srcs), g.evaluations, g.correct, g.correct_rate, g.problems, g.solved,
        cv and cv.problems or 0, cv and cv.solved or 0, pass(g, 1), pass(g, 5), pass(g, 10), g.speedup.count, g.speedup.median,
        g.verified.count, g.verified.median, t.speedup.median, t.verified.count, t.verified.median, fast1(t) }
    end
    local right = {}
    for i = 3, #header do right[i] = true end
    md_table(w, header, rows, right)
    w("\ncorrect%: of the judged evaluations; solved: problems with a correct candidate (convolutions: of those attempted); ",
      "pass@k over the problems with at least k samples (- where none has k); measured: the correct candidates timed; median: their speedup's median; ",
      "verified: the number whose 95% interval lies above 1 (their median); fast_1: the fraction of the problems ",
      "with a correct candidate faster than PyTorch eager. Conventions: docs/results.md, \"Summaries\". ",
      "A candidate without a model reads `(unknown)`; \"candidates of\" names where they came from.\n")
    local notes = summary.tables(base).notes
    if #notes > 0 then w("\n") end
    for _, l in ipairs(notes) do w("- ", l, "\n") end
    w("\n", sources_line(data_sources()), "\n")
    csv_table(c, csv_header, crows)
    c("# ", sources_line(data_sources()), "\n")
    index[#index + 1] = { "models.md, models.csv", "the model table", table.concat(data_sources(), ", ") }
  end
end

-- ---- per category ----

for _, against in ipairs{ "baseline", "pytorch" } do
  local name = against == "baseline" and "categories" or "categories-vs-pytorch"
  local w = output(name .. ".md")
  local c = output(name .. ".csv")
  w(("# Per category, against %s\n\n"):format(against == "baseline" and "kreach's baseline" or "PyTorch eager"))
  if #data.rows == 0 then
    w(("no data: no evaluations in %s (see models.md)\n"):format(data_shown))
    c("# no data: no evaluations in ", data_shown, "\n")
    index[#index + 1] = { name .. ".md, " .. name .. ".csv", "per category against " .. against, "no data" }
  else
    local s = summary.compute(data, { by = { "category" }, against = against, categories = categories })
    summary.write(s, "md", w)
    w("\nThe categories are the problem files' (problems/). ", sources_line(data_sources()), "\n")
    summary.write(s, "csv", c)
    c("# ", sources_line(data_sources()), "\n")
    index[#index + 1] = { name .. ".md, " .. name .. ".csv", "per category against " .. against,
                          table.concat(data_sources(), ", ") }
  end
end

-- ---- kreach's baselines against PyTorch (the convolutions, timed in the same run) ----

local function read_tsv(path)
  local head, rows, comments = nil, {}, {}
  for line in read_file(path):gmatch("[^\n]+") do
    if line:match("^#") then comments[#comments + 1] = line
    else
      local f = {}
      for x in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = x end
      if not head then head = f
      else
        local r = {}
        for i, h in ipairs(head) do r[h] = f[i] end
        rows[#rows + 1] = r
      end
    end
  end
  return rows, head, comments
end

do
  local w = output("baselines-vs-pytorch.md")
  local c = output("baselines-vs-pytorch.csv")
  w("# kreach's convolution baselines against PyTorch eager (H200)\n\n")
  local cudnn = KB_DATA .. "/h200_conv_parity_cudnn.tsv"
  local tf32 = KB_DATA .. "/h200_conv_parity_tf32.tsv"
  local groups, gorder = {}, {}
  local function add(key, r, pyfield)
    local g = groups[key[1] .. "\0" .. key[2] .. "\0" .. key[3]]
    if not g then
      g = { key = key, ratios = {}, faster = 0, slower = 0, neither = 0, kreach = {}, torch = {} }
      groups[key[1] .. "\0" .. key[2] .. "\0" .. key[3]] = g
      gorder[#gorder + 1] = g
    end
    local ratio, lo, hi = tonumber(r.ratio), tonumber(r.lo), tonumber(r.hi)
    g.ratios[#g.ratios + 1] = ratio
    if hi < 1 then g.faster = g.faster + 1 elseif lo > 1 then g.slower = g.slower + 1 else g.neither = g.neither + 1 end
    g.kreach[#g.kreach + 1] = tonumber(r.kreach_ms)
    g.torch[#g.torch + 1] = tonumber(r[pyfield])
  end
  local srcs = {}
  if exists(cudnn) then
    srcs[#srcs + 1] = shown(cudnn)
    for _, r in ipairs(read_tsv(cudnn)) do add({ "cuDNN TF32 off", r.selection, r.dtype }, r, "pytorch_ms") end
  end
  if exists(tf32) then
    srcs[#srcs + 1] = shown(tf32)
    for _, r in ipairs(read_tsv(tf32)) do add({ "cuDNN TF32 on (as shipped)", "pytorch", "f32" }, r, "pytorch_tf32_ms") end
  end
  if #gorder == 0 then
    w("no data: needs `kreach bench kernelbench-l1-conv` on a GPU (experiments/kernelbench/data/h200_conv_parity_*.tsv)\n")
    c("# no data\n")
    index[#index + 1] = { "baselines-vs-pytorch.md, baselines-vs-pytorch.csv", "kreach's convolution baselines against PyTorch", "no data" }
  else
    local header = { "PyTorch", "kreach's engine", "dtype", "problems", "median ratio", "geomean ratio",
                     "kreach faster", "PyTorch faster", "within noise", "kreach total ms", "PyTorch total ms" }
    local rows, crows = {}, {}
    for _, g in ipairs(gorder) do
      local sk, st = 0, 0
      for _, x in ipairs(g.kreach) do sk = sk + x end
      for _, x in ipairs(g.torch) do st = st + x end
      local med, geo = stats.median(g.ratios), stats.geomean(g.ratios)
      rows[#rows + 1] = { g.key[1], g.key[2], g.key[3], #g.ratios, ("%.3f"):format(med), ("%.3f"):format(geo),
                          g.faster, g.slower, g.neither, ("%.1f"):format(sk), ("%.1f"):format(st) }
      crows[#crows + 1] = { g.key[1], g.key[2], g.key[3], #g.ratios, tonumber(("%.4f"):format(med)),
                            tonumber(("%.4f"):format(geo)), g.faster, g.slower, g.neither,
                            tonumber(("%.4f"):format(sk)), tonumber(("%.4f"):format(st)) }
    end
    md_table(w, header, rows, { nil, nil, nil, true, true, true, true, true, true, true, true })
    w("\nratio = kreach's baseline ms / PyTorch eager ms, timed in the same run (below 1: kreach's baseline is faster); ",
      "kreach faster / PyTorch faster: the ratio's 95% bootstrap interval lies below / above 1. ",
      "kreach's engine: `pytorch` is PyTorch eager's cuDNN engine (the depthwise 82-86 the fastest timed), ",
      "`fastest` the fastest engine timed (KREACH_CUDNN_SELECT). The TF32-on rows set kreach's f32 (TF32 off) against ",
      "PyTorch as it ships, so they compare different arithmetic. One H200, 2026-12-04 (the files' headers).\n")
    w("\n", sources_line(srcs), "\n")
    csv_table(c, { "pytorch", "kreach_engine", "dtype", "problems", "median_ratio", "geomean_ratio", "kreach_faster",
                   "pytorch_faster", "within_noise", "kreach_total_ms", "pytorch_total_ms" }, crows)
    c("# ", sources_line(srcs), "\n")
    index[#index + 1] = { "baselines-vs-pytorch.md, baselines-vs-pytorch.csv", "kreach's convolution baselines against PyTorch", table.concat(srcs, ", ") }
  end
  local eager = KB_DATA .. "/h200_torch_eager_level1.tsv"
  if exists(eager) then
    w("\n`", shown(eager), "` (PyTorch eager alone, H200, 2026-12-02) makes no table: it pairs with no stored timing ",
      "of the same machine (the evaluations in ", data_shown, " are an H100's). `kreach experiments/kernelbench/baselines.lua --json FILE` ",
      "on an H200 would give kreach's baseline times to set against it.\n")
  end
end

-- ---- the stored JSON files, read alike by the tables below ----

local function json_files(dir, suffix)
  local t = {}
  if not exists(dir) then return t end
  for f in lfs.dir(dir) do
    if f:sub(-#suffix) == suffix then t[#t + 1] = f end
  end
  table.sort(t)
  return t
end

local function fail(msg)
  io.stderr:write("experiments/paper/run.lua: ", msg, "\n")
  os.exit(3)
end

-- read_json(path, field, what) -> the decoded document; a file that is not JSON, or whose `field`
-- is not a table, stops the pipeline naming the file (status 3)
local function read_json(path, field, what)
  local ok, doc = pcall(kjson.decode, read_file(path))
  if not ok then fail(("%s: not JSON: %s"):format(path, tostring(doc))) end
  if type(doc) ~= "table" or type(doc[field]) ~= "table" then
    fail(("%s: not %s (no %q)"):format(path, what, field))
  end
  return doc
end

-- no_data(name, what, why, w, c): the table <name>.md and .csv without data, saying what fills them
local function no_data(name, what, why, w, c)
  w("no data: ", why, ".\n")
  c("# no data\n")
  index[#index + 1] = { name .. ".md, " .. name .. ".csv", what, "no data: " .. why }
end

-- ---- DLRM-Bench (experiments/paper/dlrm.lua) and the trivial scan (experiments/paper/trivial.lua) ----

do
  local ctx = { data = DATA, output = output, md_table = md_table, csv_table = csv_table, sources_line = sources_line,
                shown = shown, index = index, json_files = json_files, read_json = read_json, fail = fail, no_data = no_data }
  dlrm_tables.tables(ctx)
  trivial_tables.tables(ctx)
end

-- ---- the model-scale sweep (experiments/scale/run.lua's summaries) ----

do
  local name, what = "scale-sweep", "the model-scale sweep (the addressable share against model size)"
  local w = output(name .. ".md")
  local c = output(name .. ".csv")
  w("# The model-scale sweep: the addressable share against model size\n\n")
  local list = json_files(DATA, "-scale.json")
  if #list == 0 then
    no_data(name, what, ("needs `kreach experiments/scale/run.lua --out %s/<machine>-<date>-scale.json` on a GPU (experiments/scale/README.md)"):format(data_shown), w, c)
  else
    local srcs = {}
    for k, f in ipairs(list) do
      local doc, err = fitlib.load(DATA .. "/" .. f)
      if not doc then fail(err) end
      local a = fitlib.analyse(doc)
      srcs[#srcs + 1] = data_shown .. "/" .. f
      if #list > 1 then w("## ", f, "\n\n") end
      fitlib.write_md(a, w)
      w("\n")
      fitlib.write_csv(a, c, f, k > 1)
    end
    w(sources_line(srcs), "\n")
    c("# ", sources_line(srcs), "\n")
    index[#index + 1] = { name .. ".md, " .. name .. ".csv", what, table.concat(srcs, ", ") }
  end
end

-- ---- the addressable fraction (experiments/addressable_fraction.lua --json) ----

-- bound(a, s): Amdahl's law, a share `a` of the time sped up s times: 1 / (1 - a + a / s)
local function bound(a, s)
  if not a or not s then return nil end
  return 1 / (1 - a + a / s)
end

do
  local name, what = "addressable-fraction", "the addressable fraction (the share of a workload's GPU time the problems cover)"
  local w = output(name .. ".md")
  local c = output(name .. ".csv")
  w("# The addressable fraction (the share of a workload's GPU time the problems cover)\n\n")
  local list = json_files(DATA, "-addressable.json")
  if #list == 0 then
    no_data(name, what, ("needs `kreach experiments/addressable_fraction.lua --json %s/<machine>-<date>-addressable.json` on a GPU"):format(data_shown), w, c)
  else
    -- each model's verified speedups against PyTorch eager (models.md's "verified vs PyTorch")
    local speedups = {}
    if #data.rows > 0 then
      local torch = summary.compute(data, { by = { "model" }, against = "pytorch", categories = categories })
      for _, g in ipairs(torch.groups) do
        if g.verified.count > 0 then
          speedups[#speedups + 1] = { model = g.key.model, s = g.verified.median, n = g.verified.count }
        end
      end
    end
    local srcs, rows, crows, brows, bcrows = {}, {}, {}, {}, {}
    for _, f in ipairs(list) do
      local path = DATA .. "/" .. f
      local doc = read_json(path, "rows", "experiments/addressable_fraction.lua's --json")
      srcs[#srcs + 1] = data_shown .. "/" .. f
      local device = doc.device or "?"
      for i, r in ipairs(doc.rows) do
        if type(r) ~= "table" or type(r.name) ~= "string" then fail(("%s: row %d: no name"):format(path, i)) end
        if r.error then
          rows[#rows + 1] = { r.name, device, "-", "-", "-", "-", "-", "-", "failed: " .. tostring(r.error) }
          crows[#crows + 1] = { f, r.name, device, nil, nil, nil, nil, nil, nil, nil, nil, r.error }
        else
          for _, k in ipairs({ "busy", "vendor_gpu", "addr_gpu", "addr_wall" }) do
            if type(r[k]) ~= "number" then fail(("%s: row %d (%s): no number for %s"):format(path, i, r.name, k)) end
          end
          local top = r.top and ("%s (%s, %s)"):format(profile_report.short_name(r.top.name, 60), r.top.family, pct(r.top.frac_gpu)) or "-"
          rows[#rows + 1] = { r.name, device, pct(r.busy), pct(r.vendor_gpu), pct(r.addr_gpu), pct(r.addr_wall),
                              pct(r.unclassified_gpu), r.kernels or "-", top }
          crows[#crows + 1] = { f, r.name, device, r.busy, r.vendor_gpu, r.addr_gpu, r.addr_wall, r.unclassified_gpu,
                                r.kernels, r.top and r.top.name, r.top and r.top.family, nil }
          for _, sp in ipairs(speedups) do
            local bg, bw = bound(r.addr_gpu, sp.s), bound(r.addr_wall, sp.s)
            brows[#brows + 1] = { r.name, sp.model, ("%s (%d)"):format(fx(sp.s), sp.n), pct(r.addr_gpu), fx(bg), pct(r.addr_wall), fx(bw) }
            bcrows[#bcrows + 1] = { f, r.name, sp.model, sp.s, sp.n, r.addr_gpu, bg, r.addr_wall, bw }
          end
        end
      end
    end
    md_table(w, { "workload", "device", "GPU busy", "library (GPU)", "addressable (GPU)", "addressable (wall)",
                  "unclassified (GPU)", "kernels", "largest addressable kernel (family, share of GPU time)" },
      rows, { nil, nil, true, true, true, true, true, true })
    w("\nShares of the measured steps' GPU time (kernels and memory operations; GPU busy and addressable (wall): of their wall time). ",
      "library: the vendor libraries' kernels (cuBLAS, cuDNN, ...), which no problem targets; addressable: the kernel families the ",
      "problems cover (docs/profiling.md, \"Classifying kernels\").\n\n")
    w("## The bound: the addressable share sped up by a model's verified speedup\n\n")
    if #brows == 0 then
      w(("no verified speedup against PyTorch eager is stored in %s (models.md's \"verified vs PyTorch\"): no bound.\n"):format(data_shown))
    else
      md_table(w, { "workload", "model", "s: verified vs PyTorch (n)", "addressable (GPU)", "bound on GPU time",
                    "addressable (wall)", "bound on wall time" }, brows, { nil, nil, true, true, true, true, true })
      w("\nbound = 1 / (1 - a + a / s) (Amdahl's law): a, the addressable share (of GPU time, of wall time); s, the median ",
        "of the model's verified speedups against PyTorch eager (candidates whose 95% interval lies above 1; models.md). ",
        "As if every addressable kernel ran s times faster and the rest did not change: an optimistic bound, since only the ",
        "verified candidates count and their problems' speedups are taken to carry over to the workload's kernels.\n")
    end
    local all = {}
    for _, x in ipairs(srcs) do all[#all + 1] = x end
    if #brows > 0 then for _, x in ipairs(data_sources()) do all[#all + 1] = x end end
    w("\n", sources_line(all), "\n")
    csv_table(c, { "source", "workload", "device", "busy", "vendor_gpu", "addr_gpu", "addr_wall", "unclassified_gpu",
                   "kernels", "top_kernel", "top_family", "error" }, crows)
    if #bcrows > 0 then
      c("\n")
      csv_table(c, { "source", "workload", "model", "verified_median_vs_pytorch", "verified_count", "addr_gpu",
                     "bound_gpu", "addr_wall", "bound_wall" }, bcrows)
    end
    c("# ", sources_line(all), "\n")
    index[#index + 1] = { name .. ".md, " .. name .. ".csv", what, table.concat(all, ", ") }
  end
end

-- ---- the tables that have no stored data yet ----

local MISSING = {
  { "model-study.md", "the model study (models' candidates on KernelBench level 1)",
    "needs `kreach generate --eval` with a model API (and a GPU), then `kreach results export --format jsonl` into experiments/paper/data" },
}

for _, m in ipairs(MISSING) do
  local w = output(m[1])
  w("# ", m[2]:sub(1, 1):upper(), m[2]:sub(2), "\n\nno data: ", m[3], ".\n")
  index[#index + 1] = { m[1], m[2], "no data: " .. m[3] }
end

do
  local w = output("README.md")
  w("# The paper's tables\n\n",
    "Made by `kreach experiments/paper/run.lua --data ", data_shown, " --out <this folder>` from stored data alone; ",
    "do not edit them by hand (a test compares them with the pipeline's output). experiments/paper/README.md says how to remake the data.\n\n")
  md_table(w, { "file", "table", "source" }, index)
end

-- ---- writing, or comparing ----

local function write_all(dir)
  lfs.mkdir(dir)
  if not exists(dir) then io.stderr:write("cannot make ", dir, "\n"); os.exit(2) end
  for _, name in ipairs(order) do
    local f = assert(io.open(dir .. "/" .. name, "wb"))
    f:write(outputs[name])
    f:close()
  end
end

if args.check then
  local bad = 0
  local made = {}
  for _, name in ipairs(order) do
    made[name] = true
    local p = args.check .. "/" .. name
    if not exists(p) then
      print(("%s: missing from %s"):format(name, args.check)); bad = bad + 1
    elseif read_file(p) ~= outputs[name] then
      print(("%s: differs from what the pipeline makes now"):format(name)); bad = bad + 1
      local tmp = os.tmpname()
      local f = assert(io.open(tmp, "wb")); f:write(outputs[name]); f:close()
      os.execute(("diff -u '%s' '%s' | head -40"):format(p, tmp))
      os.remove(tmp)
    end
  end
  for f in lfs.dir(args.check) do
    if f ~= "." and f ~= ".." and not made[f] then print(("%s: in %s, not made by the pipeline"):format(f, args.check)); bad = bad + 1 end
  end
  if bad > 0 then
    print(("%d table file%s differ; regenerate: kreach experiments/paper/run.lua --out %s"):format(bad, bad == 1 and "" or "s", args.check))
    os.exit(1)
  end
  print(("%d table files as committed in %s"):format(#order, args.check))
  os.exit(0)
end

if not args.out then
  io.stderr:write("experiments/paper/run.lua: --out DIR (write the tables) or --check DIR (compare with them)\n")
  os.exit(2)
end
write_all(args.out)
print(("wrote %d files to %s"):format(#order, args.out))
