-- kreach.judge.job in this process, its process side stubbed (ctx): the seal asked for at the
-- end of the setup with what the job needs, a worker that cannot be sealed ending the job (nil),
-- the candidate's bytes checked against the recorded hash (invalid_candidate, nothing run), and
-- a KernelBench-format candidate refused before the seal when its Python worker cannot start.
-- No GPU: the lint job's sm_90 compile is a dry run; the other jobs end before any GPU work.
local campaign = require "kreach.run.campaign"
local job = require "kreach.judge.job"
local support = require "support"

local SIZES = { batch_size = 2, dim = 8 }
local RELU = "tests/candidates/019_relu.lua"
local PY = "tests/candidates/kernelbench/019_relu_load_inline.py"

-- a ctx whose seal answers `sealed` and records what it was asked
local function ctx(sealed, sandbox)
  local c = { phases = {}, sealed = {} }
  c.phase = function(p) c.phases[#c.phases + 1] = p end
  c.seal = function(o) c.sealed[#c.sealed + 1] = o; return sealed end
  c.python_sandbox = sandbox or function() error("no Python sandbox expected") end
  c.close_fd = function() error("no ruleset expected") end
  return c
end

describe("kreach.judge.job", function()
  it("ends calibrate when the worker cannot be sealed, having asked for the device and NVML", function()
    local c = ctx(false)
    assert.is_nil(job.run("calibrate", { options = {} }, c))
    assert.same({ { device = true, nvml = true } }, c.sealed)
  end)

  it("lints a candidate after sealing with its file and the problem's, the device left out with an arch", function()
    local c = ctx(true)
    local r = job.run("lint", { problem = "19", candidate = RELU, sizes = SIZES, arch = "sm_90" }, c)
    assert.is_nil(r.verdict)
    assert.equals(1, r.report.launches)
    assert.equals(1, #c.sealed)
    assert.same({ RELU, false, false }, { c.sealed[1].candidate, c.sealed[1].device, c.sealed[1].nvml })
    assert.matches("019_ReLU%.lua$", c.sealed[1].problem)
  end)

  it("ends lint when the worker cannot be sealed", function()
    assert.is_nil(job.run("lint", { problem = "19", candidate = RELU, sizes = SIZES, arch = "sm_90" }, ctx(false)))
  end)

  it("refuses bytes whose hash is not the recorded one: invalid_candidate, and nothing else", function()
    local path = support.tmpfile("_relu.lua")
    support.spit(path, support.slurp(RELU))
    local hash = campaign.hash(support.slurp(RELU) .. "\n-- another version")
    local r = job.run("lint", { problem = "19", candidate = path, sizes = SIZES, arch = "sm_90", candidate_hash = hash }, ctx(true))
    assert.same({ "verdict" }, (function() local k = {} for n in pairs(r) do k[#k + 1] = n end return k end)())
    assert.equals("invalid_candidate", r.verdict.verdict)
    assert.matches("the file changed after it was recorded", r.verdict.reason, 1, true)
  end)

  it("refuses a KernelBench-format candidate without a Python before the seal: runtime_error, no trials", function()
    local c = ctx(true)
    local r = job.run("check", { problem = "19", candidate = PY, sizes = SIZES }, c)
    assert.same({ "19_ReLU", PY, 0, "runtime_error" }, { r.problem, r.candidate, #r.trials, r.verdict.verdict })
    assert.matches("needs a python3 with CUDA PyTorch", r.verdict.reason, 1, true)
    assert.same({}, c.sealed)
  end)

  it("checks a KernelBench-format candidate's hash before its sandbox, and says why a sandbox failed", function()
    local spec = { problem = "19", candidate = PY, sizes = SIZES, python = { python = "/nonexistent/python3", dirs = {} },
                   candidate_hash = campaign.hash("not these bytes") }
    local r = job.run("time", spec, ctx(true))
    assert.equals("invalid_candidate", r.verdict.verdict)
    spec.candidate_hash = nil
    local asked
    r = job.run("time", spec, ctx(true, function(key, dirs) asked = { key, dirs }; return nil, "no build directory" end))
    assert.same({ "runtime_error", "no build directory" }, { r.verdict.verdict, r.verdict.reason })
    assert.equals("string", type(asked[1]))
    assert.equals(spec.python.dirs, asked[2])
  end)
end)
