-- Experiment (GPU): do builds running beside a timed call move its time? (docs/evaluation.md,
-- "Builds ahead of the GPU: --jobs"). The same candidates are timed (the time job, in a fresh
-- worker each time, as kreach eval times them) under three conditions, interleaved round by
-- round so that drift hits all three alike:
--   quiet    nothing else runs
--   beside   a build pool of `jobs` workers (default: the number of cores) builds fresh
--            candidates all the while, never paused (kreach eval --no-pause-builds)
--   paused   the same pool, stopped while the worker is in a timed phase (kreach eval's
--            default: kreach.run.pair.TIMED_PHASES)
-- The builds are KernelBench-format load_inline builds (nvcc, the heaviest a campaign runs)
-- when a python3 with CUDA PyTorch is found, else Lua candidates' NVRTC compiles. Prints each
-- candidate's median time under each condition and the difference from quiet, in percent.
--   kreach experiments/bench/builds_beside.lua [rounds] [jobs] [lua|py]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local builds = require "kreach.run.builds"
local common = require "common"
local core = require "kreach.core"
local pair = require "kreach.run.pair"
local protocol = require "kreach.run.protocol"
local worker = require "kreach.run.worker"
kreach.skip_without_device()

local root = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../.."
local rounds = math.tointeger(tonumber(arg[1] or "5")) or 5
local jobs = math.tointeger(tonumber(arg[2] or "")) or builds.cores()
local py = pair.find_python()
local load_kind = arg[3] or (py and "py" or "lua")
assert(load_kind == "lua" or (load_kind == "py" and py), "py builds need a python3 with CUDA PyTorch (KREACH_PYTHON)")

local read, write = common.read, common.write
local dir = common.tmpdir()

-- the timed candidates (those of timing_repro.lua)
local cases = {
  { problem = "19", cand = root .. "/tests/candidates/019_relu.lua", label = "019_relu" },
  { problem = "23", cand = root .. "/examples/023_softmax_online.lua", label = "023_softmax" },
  { problem = "26", cand = root .. "/examples/026_gelu_float4.lua", label = "026_gelu" },
  { problem = "1", cand = root .. "/examples/001_matmul_tiled.lua", label = "001_matmul_tiled" },
}

-- the load: fresh candidates, built one after another by the pool
local LUA_SRC = read(root .. "/examples/023_softmax_online.lua")
local PY_SRC = read(root .. "/tests/candidates/kernelbench/019_relu_load_inline.py")
local made = 0
local function next_build()
  made = made + 1
  local item
  if load_kind == "py" then
    local path = ("%s/019_load%05d.py"):format(dir, made)
    write(path, (PY_SRC:gsub("#include <torch/extension.h>", ("// load %d\n#include <torch/extension.h>"):format(made), 1)
      :gsub('name="kreach_test_relu"', ('name="kreach_load_%d"'):format(made), 1)))
    item = { problem_path = root .. "/problems/kernelbench/level1/019_ReLU.lua", candidate_path = path }
  else
    local path = ("%s/023_load%05d.lua"):format(dir, made)
    write(path, (LUA_SRC:gsub("source = %[%[", ("source = [[\n// load %d\n"):format(made), 1)))
    item = { problem_path = root .. "/problems/kernelbench/level1/023_Softmax.lua", candidate_path = path }
  end
  local dev = core.device()
  return pair.build_job(item, { dtype = "f32", arch = dev.arch, timeout_s = 600 }, load_kind == "py" and py or nil)
end

local function time_once(c, pool, pause)
  local opts = { timeout_s = 120, timeouts = { timing = 300 } }
  if pool then
    opts.idle = function()
      while pool:pending() < 2 * pool.jobs do
        local argv, o = next_build()
        pool:submit("load" .. made, argv, o)
      end
      pool:service(0)
    end
    if pause then
      opts.on_phase = function(ph) if pair.TIMED_PHASES[ph] then pool:pause() else pool:resume() end end
    end
    -- the pool is busy before the worker starts
    local t0 = kreach.now()
    while kreach.now() - t0 < 2 do opts.idle(); pool:service(0.05) end
  end
  local r, failed = worker.run(protocol.argv("time", { problem = c.problem, candidate = c.cand }), opts)
  if pool then pool:resume() end
  if not r or not r.candidate then
    error(("%s: the time job failed: %s"):format(c.label, tostring(r and r.verdict and r.verdict.reason or failed.reason)))
  end
  return r.candidate.summary.median
end

io.write(("%d rounds, %d build workers beside, building %s candidates (%s)\n"):format(rounds, jobs, load_kind,
  load_kind == "py" and "load_inline, nvcc" or "NVRTC"))
for _, c in ipairs(cases) do time_once(c) end -- warm the compile cache and the GPU
local pool = builds.new{ jobs = jobs, pause = true }
local t = {}
for _, c in ipairs(cases) do t[c.label] = { quiet = {}, beside = {}, paused = {} } end
for r = 1, rounds do
  for _, c in ipairs(cases) do
    local x = t[c.label]
    x.quiet[r] = time_once(c)
    x.beside[r] = time_once(c, pool, false)
    pool:close()
    x.paused[r] = time_once(c, pool, true)
    pool:close()
  end
end
local st = pool:stats()
io.write(("builds run: %d built, %d failed, paused %d times for %.1f s\n\n"):format(st.built, st.failed, st.paused, st.paused_s))
io.write(("%-18s %12s %12s %9s %12s %9s\n"):format("candidate", "quiet (ms)", "beside (ms)", "diff", "paused (ms)", "diff"))
for _, c in ipairs(cases) do
  local x = t[c.label]
  local q, b, pz = common.median(x.quiet), common.median(x.beside), common.median(x.paused)
  io.write(("%-18s %12.4f %12.4f %+8.2f%% %12.4f %+8.2f%%\n"):format(c.label, q, b, 100 * (b - q) / q, pz, 100 * (pz - q) / q))
  common.result("beside_" .. c.label .. "_pct", 100 * (b - q) / q, "%",
    ("candidate time with %d %s builds beside, against none (median of %d rounds; target within 1)"):format(jobs, load_kind, rounds))
  common.result("paused_" .. c.label .. "_pct", 100 * (pz - q) / q, "%",
    ("candidate time with the builds paused while timed, against none (median of %d rounds)"):format(rounds))
end
os.execute(("rm -rf %q"):format(dir))
