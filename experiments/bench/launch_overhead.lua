-- Benchmark: host-side cost of launching a kernel from Lua, through the checked path
-- (k{grid=, block=}(args...): configuration table, argument checks, cudaLaunchKernel).
-- Measured as wall time over a batch of launches, before the final synchronisation.
-- Target: under 10 us per launch.
-- usage: kreach experiments/bench/launch_overhead.lua [launches]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
kreach.skip_without_device()

local n = tonumber(arg[1]) or 20000
local p = assert(kreach.build{ source = [[
extern "C" __global__ void empty() {}
extern "C" __global__ void four(float *y, const float *x, int n, float a) {}
]] })
local y, x = kreach.empty({ 256 }), kreach.empty({ 256 })

local function per_launch_us(fn)
  for _ = 1, 1000 do fn() end
  kreach.synchronize()
  local runs = {}
  for r = 1, 5 do
    local t0 = kreach.now()
    for _ = 1, n do fn() end
    local t1 = kreach.now()
    kreach.synchronize()
    runs[r] = (t1 - t0) / n * 1e6
  end
  return common.median(runs)
end

local empty = p.empty
local four = p.four
local e_us = per_launch_us(function() empty{ grid = 1, block = 32 }() end)
local f_us = per_launch_us(function() four{ grid = 1, block = 32 }(y, x, 256, 2.0) end)
local l = four{ grid = 1, block = 32 }
local r_us = per_launch_us(function() l(y, x, 256, 2.0) end)
print(("empty kernel, k{cfg}():          %.2f us per launch (median of 5 x %d)"):format(e_us, n))
print(("4-argument kernel, k{cfg}(...):   %.2f us per launch"):format(f_us))
print(("4-argument kernel, reused launch: %.2f us per launch"):format(r_us))
common.result("launch_empty_us", e_us, "us", "host cost of k{grid,block}() for an empty kernel (target < 10)")
common.result("launch_4args_us", f_us, "us", "host cost with 2 tensors, an int and a float")
