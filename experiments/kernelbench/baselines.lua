-- Benchmark and accuracy table of the KernelBench level-1 baselines on this GPU: for each
-- problem at each dtype, the baseline's relative L2 and maximum error against the fp64 oracle,
-- and its time against PyTorch eager (data/h200_torch_eager_level1.tsv, measured on an H200:
-- median of 20 calls after 3 warm-ups, CUDA events, no L2 flush; the same method is used here).
--
-- usage: kreach experiments/kernelbench/baselines.lua [--dtypes f32,bf16] [--json FILE]
--                                                     [--no-oracle] [--no-time] [problem ...]
-- With no problems, every problem of the kernelbench-l1 suite that has a file.
--
-- Each problem is measured in a process of its own, and timed before its oracle runs: on the
-- H200, a 6.4 GB ReLU timed after the fp64 oracle had allocated and freed 25 GB ran 11% slower
-- (3.37 against 3.02 ms) than in a fresh process, the same kernel on the same sizes. The
-- history of the allocator must not be part of a baseline's time. (--child: measure the given
-- problem files here and print one "row <json>" line per dtype; the parent starts one process
-- per problem and dtype.)
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../bench/?.lua;" .. package.path
local kreach = require "kreach"
local oracle = require "kreach.judge.oracle"
local stats = require "kreach.stats"
kreach.skip_without_device()

local dtypes, json_path, do_oracle, do_time, picks, child = { "f32", "bf16" }, nil, true, true, {}, false
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--dtypes" then i = i + 1; dtypes = {}; for d in arg[i]:gmatch("[^,]+") do dtypes[#dtypes + 1] = d end
  elseif a == "--json" then i = i + 1; json_path = arg[i]
  elseif a == "--no-oracle" then do_oracle = false
  elseif a == "--no-time" then do_time = false
  elseif a == "--child" then child = true
  else picks[#picks + 1] = a end
  i = i + 1
end

-- PyTorch's times by problem id
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local torch_ms = {}
for line in io.lines(here .. "/data/h200_torch_eager_level1.tsv") do
  local id, _, f32, bf16 = line:match("^(%d+)\t([^\t]+)\t([%d.]+)\t([%d.]+)")
  if id then torch_ms[tonumber(id)] = { f32 = tonumber(f32), bf16 = tonumber(bf16) } end
end

local files = {}
if #picks == 0 then
  local lfs = require "lfs"
  local dir
  for _, root in ipairs(require("kreach.problem").roots()) do
    if lfs.attributes(root .. "/kernelbench/level1", "mode") == "directory" then dir = root .. "/kernelbench/level1"; break end
  end
  for f in lfs.dir(dir) do if f:match("^%d+_.*%.lua$") then files[#files + 1] = dir .. "/" .. f end end
  table.sort(files)
else
  for _, p in ipairs(picks) do files[#files + 1] = require("kreach.problem").resolve(p) end
end

local cjson = require "cjson"
local rows = {}
local function fmt_e(x) return x and ("%.2e"):format(x) or "-" end

-- Measures one problem file at every dtype: the time first, then the oracle.
local function measure(f)
  local out = {}
  local ok, p = pcall(kreach.load_problem, f)
  if not ok then return { { file = f, error = "LOAD FAILED: " .. tostring(p) } } end
  for _, dt in ipairs(dtypes) do
    local row = { id = p.id, name = p.name, dtype = dt }
    local ok2, err = pcall(function()
      local inst = p:instantiate{ dtype = dt }
      inst:validate()
      if do_time then
        row.kreach_ms, row.kreach_min_ms = oracle.time_ms(inst)
        row.torch_ms = torch_ms[p.id] and torch_ms[p.id][dt]
        if row.torch_ms then row.ratio = row.kreach_ms / row.torch_ms end
        row.bytes, row.flops = inst.bytes, inst.flops
      end
      if do_oracle then
        local r = oracle.check(inst, { seed = 1 })
        row.outputs = r.outputs
        local o = r.outputs[1]
        row.rel_l2, row.max_abs, row.mismatches = o.rel_l2, o.max_abs, o.mismatches
        row.nonfinite = o.nonfinite
      end
    end)
    if not ok2 then row.error = tostring(err) end
    out[#out + 1] = row
    collectgarbage()
  end
  return out
end

if child then
  for _, f in ipairs(files) do
    for _, row in ipairs(measure(f)) do io.write("row ", cjson.encode(row), "\n") end
  end
  os.exit(0)
end

local function child_rows(f, dt)
  local argv = { ("%q"):format(kreach.executable()), ("%q"):format(arg[0]), "--child", "--dtypes", dt }
  if not do_oracle then argv[#argv + 1] = "--no-oracle" end
  if not do_time then argv[#argv + 1] = "--no-time" end
  argv[#argv + 1] = ("%q"):format(f)
  local pipe = io.popen(table.concat(argv, " ") .. " 2>&1")
  local out, other = {}, {}
  for line in pipe:lines() do
    local j = line:match("^row (.*)$")
    if j then out[#out + 1] = cjson.decode(j) else other[#other + 1] = line end
  end
  pipe:close()
  if #out == 0 then out[1] = { file = f, error = "the measuring process printed no result: " .. table.concat(other, " | "):sub(1, 400) } end
  return out
end

print(("%-4s %-42s %-5s %10s %10s %10s %10s %7s"):format("id", "problem", "dtype", "rel_l2", "max_abs",
  "kreach_ms", "torch_ms", "ratio"))
for _, f in ipairs(files) do
  for _, row in ipairs((function() local all = {}
      for _, dt in ipairs(dtypes) do for _, r in ipairs(child_rows(f, dt)) do all[#all + 1] = r end end
      return all end)()) do
    for k, v in pairs(row) do if v == cjson.null then row[k] = nil end end
    rows[#rows + 1] = row
    if row.error then
      print(("%-4s %-42s %-5s FAILED: %s"):format(tostring(row.id or "?"), tostring(row.name or row.file):sub(1, 42),
        tostring(row.dtype or "-"), row.error:gsub("\n", " | "):sub(1, 300)))
    else
      print(("%-4d %-42s %-5s %10s %10s %10s %10s %7s"):format(row.id, row.name:sub(1, 42), row.dtype,
        row.mismatches and (row.mismatches .. " diff") or fmt_e(row.rel_l2), fmt_e(row.max_abs),
        row.kreach_ms and ("%.4f"):format(row.kreach_ms) or "-", row.torch_ms and ("%.4f"):format(row.torch_ms) or "-",
        row.ratio and ("%.3f"):format(row.ratio) or "-"))
    end
    io.flush()
  end
end

-- geometric mean of kreach/PyTorch per dtype, and the worst ratio
for _, dt in ipairs(dtypes) do
  local ratios, worst, wid = {}, 0, nil
  for _, r in ipairs(rows) do
    if r.dtype == dt and r.ratio then
      ratios[#ratios + 1] = r.ratio
      if r.ratio > worst then worst, wid = r.ratio, r.id end
    end
  end
  local n, gm = #ratios, stats.geomean(ratios)
  if n > 0 then
    print(("%s: geometric mean kreach/PyTorch %.3f over %d problems; worst %.3f (problem %s)"):format(dt,
      gm, n, worst, tostring(math.tointeger(wid) or wid)))
    io.write(("result baseline_geomean_%s %.4g ratio kreach/PyTorch over %d problems (target 0.9 to 1.1)\n"):format(dt, gm, n))
    io.write(("result baseline_worst_%s %.4g ratio problem %s (target <= 1.5)\n"):format(dt, worst, tostring(math.tointeger(wid) or wid)))
  end
end
if json_path then
  local f = assert(io.open(json_path, "w"))
  f:write(require("cjson").encode({ device = kreach.device().name, rows = rows }), "\n")
  f:close()
end
