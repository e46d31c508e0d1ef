-- Benchmark: the wall time of `kreach eval` on one candidate of 19_ReLU at its full size
-- (the correctness protocol's 5 trials in one worker, timing in another, the database write),
-- with a warm compile cache: a first evaluation warms it, the second (--force) is timed.
-- Target: at most 5 s.
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
kreach.skip_without_device()

local root = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../.."
local db = os.tmpname()
local cmd = ("%q eval 19 %q --db %q"):format(kreach.executable(), root .. "/tests/candidates/019_relu.lua", db)
-- the first run also calibrates the device (kept in the database, so not part of the second)
assert(os.execute(cmd .. " >/dev/null 2>&1"), "the first evaluation failed")
local walls = {}
for i = 1, 3 do
  local t0 = kreach.now()
  local p = io.popen(cmd .. " --force 2>&1")
  local out = p:read("a")
  p:close()
  walls[i] = kreach.now() - t0
  if i == 1 then io.write(out) end
end
os.remove(db); os.remove(db .. "-wal"); os.remove(db .. "-shm")
print(("wall time of one evaluation with a warm cache: %.2f s (runs: %.2f, %.2f, %.2f)"):format(common.median(walls), walls[1], walls[2], walls[3]))
common.result("eval_relu_wall_s", common.median(walls), "s", "kreach eval of one 19_ReLU candidate at full size, warm cache (target <= 5)")
