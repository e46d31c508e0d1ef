-- Benchmark: the slowdown of a PyTorch program's steps traced by `kreach profile` against the same
-- steps untraced (issue 6; target under 3%). Runs experiments/profiler_check.lua --alternate:
-- each run traces every other step (KREACH_TRACE_ALTERNATE=step) and compares each untraced step
-- with the traced steps either side of it, within one process, because step times of host-bound
-- programs drift by tens of percent from process to process on the GPU machine (which hides a
-- few percent between separate plain and profiled runs). Workloads of
-- experiments/workloads/list.json: the launch-bound probe (launch-loop, 2000 tiny kernels a step,
-- the worst case), GPT-2 small inference and ResNet-50 training (GPU-bound), and DLRM at the
-- Criteo Kaggle and MLPerf configurations (host-bound); 2 rounds of 41 steps each. Prints one
-- result line a workload: the median slowdown, its 95% interval and the verdict against the
-- target. Needs python3 with torch (and torchvision) beside the GPU.
-- KREACH_BENCH_PROFILER_RUNS overrides the workloads (comma-separated run names).
-- profiler_check.lua runs in a kreach process of its own (it ends with os.exit), started from an
-- argv list (kreach.proc: no shell); its standard output is copied here line by line as it comes,
-- its standard error (the last 64 KiB) after it ends.
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
local cjson = require "cjson"
kreach.skip_without_device()

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local runs = os.getenv("KREACH_BENCH_PROFILER_RUNS")
if not runs or runs == "" then runs = "launch-loop,gpt2-small-infer,resnet50-train,dlrm-kaggle-train,dlrm-mlperf-train" end
-- whether argv runs and exits 0; its output, when `copy`, is copied to ours
local function execute(argv, copy)
  local w = kreach.proc.spawn(argv)
  if not w then return false end
  while true do
    local line = w:read_line()
    if not line then break end
    if copy then io.write(line, "\n"); io.flush() end
  end
  local how, code = w:wait()
  if copy then io.write(w:stderr()) end
  w:free()
  return how == "exited" and code == 0
end

if not execute({ "python3", "-c", "import torch" }) then
  io.stderr:write("profiler_slowdown: python3 cannot import torch here; skipped\n")
  os.exit(77)
end
local json = os.tmpname()
local ok = execute({ kreach.executable(), here .. "/../profiler_check.lua", "--only", runs, "--alternate", "--rounds", "2",
                     "--steps", "41", "--json", json }, true)
local f = io.open(json)
local data = f and cjson.decode(f:read("a"))
if f then f:close() end
os.remove(json)
for _, r in ipairs(data and data.rows or {}) do
  if r.slowdown then
    common.result("profiler_slowdown_" .. r.name:gsub("%-", "_"), 100 * r.slowdown, "%",
      ("traced steps vs untraced ones in the same run, 95%% interval [%+.2f%%, %+.2f%%], %.2f us a kernel; against the 3%% target: %s; a run under --alternate: %+.2f%% a step"):format(
        100 * r.slowdown_lo, 100 * r.slowdown_hi, r.us_per_kernel or 0, r.verdict, 100 * (r.run_cost or 0)))
  end
end
if not ok or not data then
  io.stderr:write("profiler_slowdown: experiments/profiler_check.lua failed (see above)\n")
  os.exit(1)
end
