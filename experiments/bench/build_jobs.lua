-- Benchmark (CPU, no GPU needed): the build stage of a campaign alone, `kreach eval --build-only`,
-- on a directory of N Lua candidates (default 100) made from examples/: copies of the five
-- KernelBench level-1 example candidates, each with a distinguishing comment in its CUDA
-- source, so that no two share an NVRTC cache entry. Every run starts from an empty compile
-- cache (KREACH_CACHE_DIR, a fresh directory) and compiles for an explicit architecture, as a
-- machine without a GPU must. Prints the wall time for each --jobs value given (default 1 and
-- 2) and the candidates built per hour.
--   kreach experiments/bench/build_jobs.lua [n_candidates] [jobs ...]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
local json = require "kreach.json"

local root = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../.."
local n = math.tointeger(tonumber(arg[1] or "100")) or 100
local jobs = {}
for i = 2, #arg do jobs[#jobs + 1] = assert(math.tointeger(tonumber(arg[i])), "jobs must be whole numbers") end
if #jobs == 0 then jobs = { 1, 2 } end
local ARCH = "sm_90"

local EXAMPLES = common.LUA_EXAMPLES

local sh = common.sh

local dir = sh("mktemp -d"):gsub("%s+$", "")
-- the candidates: variant v of example e as <id>_v<v>.lua
local made = 0
for v = 1, n do
  local name = EXAMPLES[(v - 1) % #EXAMPLES + 1]
  local f = assert(io.open(root .. "/examples/" .. name, "rb"))
  local text = f:read("a")
  f:close()
  local changed, k = text:gsub("source = %[%[", ("source = [[\n// build_jobs variant %d\n"):format(v), 1)
  assert(k == 1, name .. ": no 'source = [[' to mark")
  local id = name:match("^(%d+)_")
  local out = assert(io.open(("%s/%s_v%03d.lua"):format(dir, id, v), "wb"))
  out:write(changed)
  out:close()
  made = made + 1
end
io.write(("%d Lua candidates in %s (from examples/), compiled for %s\n"):format(made, dir, ARCH))

local rows = {}
for _, j in ipairs(jobs) do
  local cache = sh("mktemp -d"):gsub("%s+$", "")
  local cmd = ("KREACH_CACHE_DIR=%q %q eval kernelbench-l1 %q --build-only --arch %s --jobs %d --json 2>/dev/null"):format(
    cache, kreach.executable(), dir, ARCH, j)
  local t0 = kreach.now()
  local out, ok = sh(cmd)
  local wall = kreach.now() - t0
  assert(ok, "kreach eval --build-only failed: " .. cmd)
  local res = json.decode(out)
  local built = 0
  for _, b in ipairs(res.builds) do if b.verdict == "built" then built = built + 1 end end
  assert(built == made, ("%d of %d candidates built"):format(built, made))
  rows[#rows + 1] = { jobs = j, wall = wall, build_wall = res.wall_s }
  io.write(("--jobs %-3d %d built in %.2f s (the command: %.2f s): %.0f candidates per hour\n"):format(j, built,
    res.wall_s, wall, 3600 * built / res.wall_s))
  common.result(("build_only_lua_jobs%d_s"):format(j), res.wall_s, "s",
    ("kreach eval --build-only, %d Lua candidates, cold NVRTC cache, --jobs %d"):format(made, j))
  sh(("rm -rf %q"):format(cache))
end
sh(("rm -rf %q"):format(dir))
if #rows >= 2 then
  io.write(("speed-up of --jobs %d over --jobs %d: %.2fx\n"):format(rows[2].jobs, rows[1].jobs, rows[1].build_wall / rows[2].build_wall))
end
