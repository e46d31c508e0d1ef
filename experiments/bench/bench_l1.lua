-- Benchmark: `kreach bench kernelbench-l1` (every ported problem's baseline, each in a fresh
-- process, cold mode, default options) and its wall time. Target: at most 10 minutes.
-- usage: kreach experiments/bench/bench_l1.lua [dtype]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
kreach.skip_without_device()

local dtype = arg[1] or "f32"
local db = os.getenv("KREACH_BENCH_DB") or os.tmpname()
local t0 = kreach.now()
local ok = os.execute(("%q bench kernelbench-l1 --dtype %s --db %q"):format(kreach.executable(), dtype, db))
local wall = kreach.now() - t0
if not os.getenv("KREACH_BENCH_DB") then os.remove(db); os.remove(db .. "-wal"); os.remove(db .. "-shm") end
assert(ok, "kreach bench failed")
common.result("bench_l1_wall_s", wall, "s", ("kreach bench kernelbench-l1 at %s (target <= 600)"):format(dtype))
