-- The model-scale sweep (issue 36, item 8): GPT-2 small, medium, large and xl (and the
-- Llama-3.2 1B and 3B shapes) profiled at one fixed batch and sequence length, in inference and
-- in training, each as experiments/addressable_fraction.lua profiles a run (the program under
-- the CUPTI injection library, its `step` ranges stored in the results database under the run's
-- name; workloads/runs.lua), and one summary JSON written: a row per run (model, parameters,
-- mode, batch, seq, precision, steps, GPU-busy share, addressable share of GPU and wall time,
-- vendor-library share, unclassified share, kernel count, every kernel family's share of GPU
-- time) with the device, driver and torch version and the date. A run that fails (out of
-- memory) is a row with status "failed" and its reason; the sweep goes on. experiments/scale/
-- fit.lua fits the addressable share against the parameter count (no GPU needed).
-- usage: kreach experiments/scale/run.lua [--out FILE.json] [--db DB] [--only NAME,...]
--            [--python python3] [--sizes small,medium,large,xl] [--llama 1b,3b|none]
--            [--modes infer,train] [--batch 4] [--seq 1024] [--warmup 2] [--steps 3]
--            [--timeout S (300, a run)] [--list] [--append]
-- --append keeps the rows of an existing --out file whose runs this call does not make (a sweep
-- split over several calls, or a failed run made again with --only), when its batch, seq,
-- warm-up and steps are this call's.
-- --list prints the runs' command lines and profiles nothing (no GPU needed); without a GPU the
-- sweep exits 77.
local kreach = require "kreach"
local json = require "kreach.json"

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local root = here == "experiments/scale" and "." or here .. "/../.."
package.path = here .. "/?.lua;" .. here .. "/../workloads/?.lua;" .. package.path
local sweep = require "sweep"
local runs = require "runs"

local function usage(msg)
  io.stderr:write("experiments/scale/run.lua: ", msg, "\n")
  os.exit(2)
end
local function words(s)
  local t = {}
  if s ~= "none" then for w in s:gmatch("[^,]+") do t[#t + 1] = w end end
  return t
end
local function int(opt, s)
  local n = math.tointeger(tonumber(s))
  if not n then usage(("%s wants an integer, not '%s'"):format(opt, tostring(s))) end
  return n
end

local out_path, db, only, python, timeout_s, list_only, append = nil, "results.db", nil, "python3", 300, false, false
local opts = {}
local i = 1
while i <= #arg do
  local a, v = arg[i], arg[i + 1]
  local function take() if v == nil then usage(a .. " wants a value") end; i = i + 1; return v end
  if a == "--out" then out_path = take()
  elseif a == "--db" then db = take()
  elseif a == "--only" then only = {}; for _, n in ipairs(words(take())) do only[n] = true end
  elseif a == "--python" then python = take()
  elseif a == "--sizes" then opts.gpt2 = words(take())
  elseif a == "--llama" then opts.llama = words(take())
  elseif a == "--modes" then opts.modes = words(take())
  elseif a == "--batch" or a == "--seq" or a == "--warmup" or a == "--steps" then opts[a:sub(3)] = int(a, take())
  elseif a == "--timeout" then
    timeout_s = int(a, take())
    if timeout_s < 1 then usage("--timeout wants a number of seconds >= 1") end
  elseif a == "--list" then list_only = true
  elseif a == "--append" then append = true
  else usage("unknown option " .. a) end
  i = i + 1
end

local ok, list = pcall(sweep.runs, opts)
if not ok then usage(tostring(list):gsub("^[^:]*:%d+: ", "")) end
local chosen = {}
for _, run in ipairs(list) do
  if not only or only[run.name] then chosen[#chosen + 1] = run end
end
if only then
  local known = {}
  for _, run in ipairs(list) do known[run.name] = true end
  for n in pairs(only) do if not known[n] then usage("--only: no run named " .. n) end end
end

if list_only then
  for _, run in ipairs(chosen) do
    print(("%-26s %s"):format(run.name, table.concat(runs.program(run, root, python), " ")))
  end
  os.exit(0)
end

kreach.skip_without_device()
local dev = kreach.device()
local versions = kreach.versions()

local rows = {}
if append then
  if not out_path then usage("--append needs --out FILE") end
  local f = io.open(out_path, "rb")
  if f then
    local text = f:read("a")
    f:close()
    local ok, old = pcall(json.decode, text)
    if not ok or type(old) ~= "table" or type(old.rows) ~= "table" then
      usage(("--append: %s is not a sweep's summary"):format(out_path))
    end
    for _, k in ipairs({ "batch", "seq", "warmup", "steps" }) do
      if list[1] and old[k] ~= list[1][k] then
        usage(("--append: %s has %s %s, this call %s"):format(out_path, k, tostring(old[k]), tostring(list[1][k])))
      end
    end
    local was = type(old.device) == "table" and old.device.name
    if was ~= dev.name then
      usage(("--append: %s was measured on %s, this is %s"):format(out_path, tostring(was), tostring(dev.name)))
    end
    local now = {}
    for _, run in ipairs(chosen) do now[run.name] = true end
    for _, r in ipairs(old.rows) do
      if not now[r.name] then rows[#rows + 1] = r end
    end
  end
end
local doc = {
  experiment = "model-scale sweep (experiments/scale/run.lua)",
  date = os.date("!%Y-%m-%d"),
  device = { name = dev.name, memory_gib = dev.memory_bytes and math.floor(dev.memory_bytes / 2 ^ 30 + 0.5),
             driver = versions.driver or nil, cuda_runtime = versions.runtime },
  batch = list[1] and list[1].batch, seq = list[1] and list[1].seq,
  warmup = list[1] and list[1].warmup, steps = list[1] and list[1].steps,
  rows = json.array(rows),
}
-- The summary is rewritten after every run, so a sweep stopped half-way keeps what it measured.
local function save()
  if not out_path then return end
  for _, r in ipairs(rows) do doc.torch = doc.torch or r.torch end
  local tmp = out_path .. ".tmp"
  local f, err = io.open(tmp, "w")
  if not f then io.stderr:write("experiments/scale/run.lua: ", err, "\n"); os.exit(1) end
  f:write(json.encode(doc), "\n")
  f:close()
  assert(os.rename(tmp, out_path))
end

for n, run in ipairs(chosen) do
  local t0 = kreach.now()
  local res, why, out = runs.profile(run, runs.program(run, root, python), { db = db, timeout_s = timeout_s })
  local text = res and res.output or out
  local row = sweep.row(run, res and runs.figures(res.report), runs.program_line(text, "summary"),
                        runs.program_line(text, "knobs"))
  row.run_s = math.floor((kreach.now() - t0) * 10 + 0.5) / 10
  if not res then
    row.status = "failed"
    row.error = ("%s: %s"):format(why, sweep.failure_reason(text))
  end
  rows[#rows + 1] = row
  save()
  io.stderr:write(("[%d/%d] %s: %s in %.1f s%s\n"):format(n, #chosen, run.name, row.status, row.run_s,
    row.error and (" (" .. row.error .. ")") or (" addressable %.1f%% of GPU time"):format(100 * row.addr_gpu)))
end

local function pct(x) return x and ("%.1f%%"):format(100 * x) or "-" end
print(("%-26s %14s %7s %8s %8s %9s %8s %8s"):format("run", "params", "busy", "library", "addr/GPU", "addr/wall",
  "unclass", "kernels"))
for _, r in ipairs(rows) do
  if r.status ~= "ok" then
    print(("%-26s %14s FAILED %s"):format(r.name, r.params and tostring(r.params) or "-", r.error))
  else
    print(("%-26s %14d %7s %8s %8s %9s %8s %8d"):format(r.name, r.params or 0, pct(r.busy), pct(r.vendor_gpu),
      pct(r.addr_gpu), pct(r.addr_wall), pct(r.unclassified_gpu), r.kernels))
  end
end
if out_path then io.stderr:write("wrote ", out_path, "\n") end
