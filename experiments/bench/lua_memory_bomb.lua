-- Benchmark: how long the one-line Lua memory bomb (tests/candidates/bad_memory_bomb.lua, a
-- string doubled forty times) takes to reach its verdict: the wall time of
-- `kreach lint 19 <bomb> --arch sm_90`, a worker started and ended each run (median of 5), and
-- the verdict it printed. The candidate's Lua heap cap (--lua-memory, default 256M) ends it;
-- before the cap, the worker's RLIMIT_DATA did, after gigabytes and seconds.
-- Target: under 2 s on the CPU machine. Needs no GPU.
-- usage: kreach experiments/bench/lua_memory_bomb.lua [runs] [extra kreach lint options]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"

local runs = tonumber(arg[1]) or 5
local extra = {}
for i = 2, #arg do extra[#extra + 1] = arg[i] end
local exe = kreach.executable()
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local cmd = ("%s lint 19 tests/candidates/bad_memory_bomb.lua --arch sm_90"):format(q(exe))
for _, a in ipairs(extra) do cmd = cmd .. " " .. q(a) end

local times, said = {}, nil
for i = 1, runs do
  local t0 = kreach.now()
  local f = assert(io.popen(cmd .. " 2>&1"))
  local out = f:read("a")
  f:close()
  times[i] = kreach.now() - t0
  said = out:match("\n%s*(.-)\n?$") or out
  if not out:find("invalid_candidate", 1, true) then error("the bomb was not judged invalid_candidate:\n" .. out) end
end
local med = common.median(times)
print(("%s\n  %s"):format(cmd, said))
print(("time to verdict: median %.2f s, min %.2f s over %d runs"):format(med, common.min(times), runs))
common.result("lua_memory_bomb_s", med, "s", "wall time of kreach lint on the Lua memory bomb (target < 2)")
