-- Benchmark: the slowdown of a PyTorch program profiled by `kreach profile` against the same
-- program unprofiled (issue 6; target under 3%). Runs experiments/profiler_check.lua without its
-- torch.profiler runs on three workloads of experiments/workloads/list.json: a GPU-bound
-- inference step (GPT-2 small), a GPU-bound training step (ResNet-50) and a host-bound one
-- (DLRM at the Criteo Kaggle configuration), 3 rounds of a plain and a profiled run each, and
-- prints one result line a workload: the slowdown of the median step, with the run-to-run noise
-- and the verdict against the target. Needs python3 with torch (and torchvision) beside the GPU.
-- KREACH_BENCH_PROFILER_RUNS overrides the workloads (comma-separated run names).
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
local cjson = require "cjson"
kreach.skip_without_device()

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local runs = os.getenv("KREACH_BENCH_PROFILER_RUNS")
if not runs or runs == "" then runs = "gpt2-small-infer,resnet50-train,dlrm-kaggle-train" end
if not os.execute("python3 -c 'import torch' >/dev/null 2>&1") then
  io.stderr:write("profiler_slowdown: python3 cannot import torch here; skipped\n")
  os.exit(77)
end
local json = os.tmpname()
local cmd = ("%q %q --only %q --rounds 3 --no-torch --json %q 2>&1"):format(kreach.executable(),
  here .. "/../profiler_check.lua", runs, json)
local p = io.popen(cmd)
io.write(p:read("a"))
local ok = p:close()
local f = io.open(json)
local data = f and cjson.decode(f:read("a"))
if f then f:close() end
os.remove(json)
for _, r in ipairs(data and data.rows or {}) do
  if r.slowdown then
    common.result("profiler_slowdown_" .. r.name:gsub("%-", "_"), 100 * r.slowdown, "%",
      ("median step profiled vs plain, 3 rounds, noise %.1f%%; against the 3%% target: %s"):format(100 * r.noise, r.verdict))
  end
end
if not ok or not data then
  io.stderr:write("profiler_slowdown: experiments/profiler_check.lua failed (see above)\n")
  os.exit(1)
end
