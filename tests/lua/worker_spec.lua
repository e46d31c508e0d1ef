-- kreach.worker: every way a worker can end becomes one verdict or its result.
local kreach = require "kreach"
local worker = require "kreach.worker"

describe("a worker", function()
  local bin = kreach.executable()
  local function lua(code) return { bin, "-e", "local w = require 'kreach.worker'; " .. code } end

  it("that announces its phases and gives a result returns that result", function()
    local r, v = worker.run(lua("w.phase('load'); w.phase('run'); w.result({ answer = 42, list = { 1, 2 } })"))
    assert.is_nil(v)
    assert.same({ answer = 42, list = { 1, 2 } }, r)
  end)

  it("that runs past its phase's limit is killed: timeout, naming the phase", function()
    local t0 = kreach.now()
    local r, v = worker.run(lua("w.phase('compile'); while true do end"), { timeouts = { compile = 0.5 } })
    assert.is_nil(r)
    assert.equals("timeout", v.verdict)
    assert.equals("compile", v.phase)
    assert.matches("phase 'compile' ran past its limit of 0%.5 s", v.reason)
    assert.is_true(kreach.now() - t0 < 10)
  end)

  it("that dies of a signal is a runtime error naming the signal, the phase and its last words", function()
    local r, v = worker.run({ "sh", "-c", "echo 'phase forward'; echo 'illegal memory access' >&2; kill -SEGV $$" })
    assert.is_nil(r)
    assert.equals("runtime_error", v.verdict)
    assert.equals("SIGSEGV", v.signal)
    assert.matches("died of SIGSEGV in phase 'forward':\nillegal memory access", v.reason)
  end)

  it("that exits without a result is a runtime error with its status", function()
    local r, v = worker.run(lua("w.phase('trials'); io.stderr:write('boom'); os.exit(5)"))
    assert.is_nil(r)
    assert.equals("runtime_error", v.verdict)
    assert.equals(5, v.status)
    assert.matches("exited with status 5 in phase 'trials' without a result:\nboom", v.reason)
  end)

  it("that cannot start is a runtime error", function()
    local r, v = worker.run({ "/nonexistent/kreach" })
    assert.is_nil(r)
    assert.equals("runtime_error", v.verdict)
    assert.matches("cannot start the worker", v.reason)
  end)

  it("runs kreach lint's phases: a hang the step limit cannot stop times out", function()
    local argv = { bin, "worker", "lint", "19", "tests/candidates/bad_hang.lua", "--arch", "sm_90",
                   "--size", "batch_size=2", "--size", "dim=8" }
    local r, v = worker.run(argv, { timeout_s = 30, timeouts = { forward = 1 } })
    assert.is_nil(r)
    assert.equals("timeout", v.verdict)
    assert.equals("forward", v.phase)
    local ok = worker.run({ bin, "worker", "lint", "19", "tests/candidates/019_relu.lua", "--arch", "sm_90",
                            "--size", "batch_size=2", "--size", "dim=8" })
    assert.equals(1, ok.report.launches)
  end)
end)
