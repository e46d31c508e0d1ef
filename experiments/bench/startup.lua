-- Benchmark: what starting kreach costs, which every worker process pays: the wall time of
-- `kreach --version` (median of 20 runs, each a fresh process) and its peak resident memory
-- (from /usr/bin/time where the machine has it). cuBLAS is loaded on first use, not at start.
-- Targets: under 30 ms and under 60 MB on the CI machine. Needs no GPU.
-- usage: kreach experiments/bench/startup.lua [runs]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"

local runs = tonumber(arg[1]) or 20
local exe = kreach.executable()
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local times = {}
for i = 1, runs do
  local t0 = kreach.now()
  local ok = os.execute(q(exe) .. " --version >/dev/null 2>&1")
  times[i] = (kreach.now() - t0) * 1e3
  if not ok then error("kreach --version failed") end
end
local med = common.median(times)
print(("kreach --version: median %.1f ms, min %.1f ms over %d runs"):format(med, common.min(times), runs))
common.result("startup_version_ms", med, "ms", "wall time of kreach --version, a fresh process (target < 30)")

local f = io.popen("/usr/bin/time -f '%M' " .. q(exe) .. " --version 2>&1 >/dev/null")
local kb = f and tonumber((f:read("a") or ""):match("(%d+)%s*$"))
if f then f:close() end
if kb then
  print(("peak resident memory: %.1f MB"):format(kb / 1024))
  common.result("startup_version_rss_mb", kb / 1024, "MB", "peak resident memory of kreach --version (target < 60)")
else
  print("peak resident memory: not measured (no /usr/bin/time here)")
end
