-- Benchmark: reproducibility of kreach's timing across processes. Each candidate is timed
-- against its baseline (cold mode, the default options) in 5 separate worker processes; the
-- spread of its medians, (max - min) / median, must stay within 2% for kernels of 100 us or
-- more. Prints one line per candidate and `result` lines for tools/h200.
-- usage: kreach experiments/bench/timing_repro.lua [processes]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
kreach.skip_without_device()

local procs = tonumber(arg[1]) or 5
local root = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../.."
local cases = {
  { problem = "19", cand = root .. "/tests/candidates/019_relu.lua", label = "019_relu" },
  { problem = "23", cand = root .. "/examples/023_softmax_online.lua", label = "023_softmax" },
  { problem = "26", cand = root .. "/examples/026_gelu_float4.lua", label = "026_gelu" },
  { problem = "1", cand = root .. "/examples/001_matmul_tiled.lua", label = "001_matmul_tiled" },
}

print(("%-18s %-10s %s"):format("candidate", "spread", "medians (ms), one per process"))
for _, c in ipairs(cases) do
  local meds, bmeds, sps = {}, {}, {}
  for i = 1, procs do
    local r, failed = require("kreach.run.worker").run(require("kreach.run.protocol").argv("time", { problem = c.problem, candidate = c.cand }),
      { timeout_s = 120, timeouts = { timing = 300 } })
    if not r or not r.candidate then
      print(("%-18s failed in process %d: %s %s"):format(c.label, i, r and r.verdict and r.verdict.verdict or failed.verdict,
        tostring(r and r.verdict and r.verdict.detail or failed.reason)))
      break
    end
    meds[#meds + 1] = r.candidate.summary.median
    bmeds[#bmeds + 1] = r.baseline.summary.median
    sps[#sps + 1] = r.speedup.ratio
  end
  if #meds == procs then
    local function spread(xs)
      local lo, hi = math.huge, -math.huge
      for _, x in ipairs(xs) do lo = math.min(lo, x); hi = math.max(hi, x) end
      return (hi - lo) / common.median(xs)
    end
    local parts = {}
    for _, m in ipairs(meds) do parts[#parts + 1] = ("%.4f"):format(m) end
    print(("%-18s %8.2f%%  %s  (baseline spread %.2f%%, speedup spread %.2f%%)"):format(c.label, 100 * spread(meds),
      table.concat(parts, " "), 100 * spread(bmeds), 100 * spread(sps)))
    common.result("repro_spread_" .. c.label, 100 * spread(meds), "%",
      ("(max-min)/median of the candidate's median over %d processes, %.3f ms (target <= 2 at >= 0.1 ms)"):format(procs, common.median(meds)))
  end
end
