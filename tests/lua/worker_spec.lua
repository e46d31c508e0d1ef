-- kreach.run.worker: every way a worker can end becomes one verdict or its result.
local kreach = require "kreach"
local worker = require "kreach.run.worker"

describe("a worker", function()
  local bin = kreach.executable()
  local function lua(code) return { bin, "-e", "local w = require 'kreach.run.worker'; " .. code } end

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

  it("starts without the parent's environment, in a private directory removed afterwards", function()
    local r = assert(worker.run(lua([[
      local env = {}
      for _, k in ipairs({ "HOME", "TMPDIR", "KREACH_WORKER_DIR", "KREACH_CACHE_DIR", "KREACH_WORKER_MEMORY", "LANG", "USER", "SHELL" }) do
        env[k] = os.getenv(k) or false
      end
      w.result(env)]]), { memory_bytes = 3 * 1024 * 1024 * 1024 }))
    local lfs = require "lfs"
    assert.matches("/kreach%-worker%-", r.KREACH_WORKER_DIR)
    assert.equals(r.KREACH_WORKER_DIR, r.HOME)
    assert.equals(r.KREACH_WORKER_DIR, r.TMPDIR)
    assert.equals("C", r.LANG)
    assert.equals("3221225472", r.KREACH_WORKER_MEMORY)
    assert.is_false(r.USER)
    assert.is_false(r.SHELL)
    assert.is_truthy(r.KREACH_CACHE_DIR)
    assert.is_nil(lfs.attributes(r.KREACH_WORKER_DIR))
  end)

  it("gives start-up the harness's limit, and a candidate's phase only its own", function()
    local spin = "local t = os.clock(); while os.clock() - t < 1 do end; "
    -- a second in start-up, before any phase, is not the candidate's time
    local r, v = worker.run(lua(spin .. "w.phase('setup'); " .. spin .. "w.phase('load'); w.result({ ok = true })"), { timeout_s = 0.5 })
    assert.is_nil(v)
    assert.is_true(r.ok)
    -- a second in the candidate's phase is
    r, v = worker.run(lua("w.phase('load'); " .. spin .. "w.result({ ok = true })"), { timeout_s = 0.5 })
    assert.equals("timeout", v.verdict)
    assert.matches("phase 'load' ran past its limit of 0%.5 s", v.reason)
    -- a phase named "setup" after the candidate's has begun gets no more
    r, v = worker.run(lua("w.phase('load'); w.phase('setup'); " .. spin .. "w.result({ ok = true })"), { timeout_s = 0.5 })
    assert.equals("timeout", v.verdict)
    assert.equals("setup", v.phase)
  end)

  it("bounds and cleans what a worker says, and refuses a line longer than the protocol allows", function()
    local r = assert(worker.run(lua([[w.result({ reason = "\r\27[1A\27[2Kok", long = ("x"):rep(1000000) })]])))
    assert.equals("\\x0d\\x1b[1A\\x1b[2Kok", r.reason)
    assert.is_true(#r.long < 300000)
    local t0 = kreach.now()
    local _, v = worker.run(lua([[io.write("result ", ("x"):rep(80 * 1024 * 1024)); io.flush(); while true do end]]))
    assert.equals("runtime_error", v.verdict)
    assert.matches("longer than the protocol allows %(64 MiB%)", v.reason)
    assert.is_true(kreach.now() - t0 < 30)
  end)

  it("takes one result line, and only from a worker that exits 0", function()
    local _, v = worker.run(lua("w.result({ verdict = 'forged' }); w.result({ ok = true })"))
    assert.equals("runtime_error", v.verdict)
    assert.matches("wrote 2 result lines", v.reason)
    _, v = worker.run(lua("w.result({ ok = true }); os.exit(7)"))
    assert.equals("runtime_error", v.verdict)
    assert.equals(7, v.status)
  end)

  it("says which memory limit a worker that ran out of memory had", function()
    local _, v = worker.run(lua("w.phase('forward'); io.stderr:write('not enough memory'); os.exit(99)"), { memory_bytes = 2 * 2^30 })
    assert.equals("runtime_error", v.verdict)
    assert.matches("out of memory: the worker's memory %(RLIMIT_DATA%) is limited to 2%.0 GiB %(%-%-worker%-memory", v.reason)
  end)

  it("runs kreach lint's phases: a hang the step limit cannot stop times out", function()
    local protocol = require "kreach.run.protocol"
    local argv = protocol.argv("lint", { problem = "19", candidate = "tests/candidates/bad_hang.lua", arch = "sm_90",
                                         sizes = { batch_size = 2, dim = 8 } })
    local r, v = worker.run(argv, { timeout_s = 30, timeouts = { forward = 1 } })
    assert.is_nil(r)
    assert.equals("timeout", v.verdict)
    assert.equals("forward", v.phase)
    local ok = worker.run(protocol.argv("lint", { problem = "19", candidate = "tests/candidates/019_relu.lua",
                                                  arch = "sm_90", sizes = { batch_size = 2, dim = 8 } }))
    assert.equals(1, ok.report.launches)
  end)

  it("sends the worker one spec, checked on both sides", function()
    local protocol = require "kreach.run.protocol"
    local argv = protocol.argv("time", { problem = "19", dtype = "f32", sizes = { dim = 8 }, timing = { budget_s = 1, warmup_s = 0.5 } })
    assert.equals("worker", argv[2])
    assert.equals("time", argv[3])
    assert.equals(4, #argv)
    local spec = assert(protocol.decode_spec("time", argv[4]))
    assert.same({ dim = 8 }, spec.sizes)
    assert.same({ timing = 10 * (1 + 2 * 0.5) + 30 }, protocol.timeouts("time", spec, 5))
    -- what the harness could get wrong is refused at once, by name
    assert.has_error(function() protocol.argv("check", { problem = "19" }) end, "worker spec: job 'check' needs field 'candidate'")
    assert.has_error(function() protocol.argv("time", { problem = "19", polcy = {} }) end, "worker spec: unknown field 'polcy'")
    assert.has_error(function() protocol.argv("time", { problem = "19", sizes = { dim = 0 } }) end,
      "worker spec: size 'dim' must be a positive integer")
    assert.is_nil((protocol.decode_spec("time", "{not json")))
    -- the timed inputs' salt (kreach.run.evaluate.draw_salt) crosses exactly
    local salt = require("kreach.run.evaluate").draw_salt()
    local sspec = assert(protocol.decode_spec("time", protocol.argv("time", { problem = "19", draw_salt = salt })[4]))
    assert.equals(salt, sspec.draw_salt)
    assert.equals("integer", math.type(sspec.draw_salt))
    assert.has_error(function() protocol.argv("time", { problem = "19", draw_salt = "7" }) end,
      "worker spec: field 'draw_salt' must be a number, got string")
    -- a worker given a bad spec says so and exits 2 before any setup
    local r, v = worker.run({ bin, "worker", "time", '{"problem": 19}' })
    assert.is_nil(r)
    assert.matches("exited with status 2", v.reason)
    assert.matches("field 'problem' must be a string", v.reason)
    -- results cross exactly, non-finite numbers included
    local line = protocol.result_line({ x = 0 / 0, y = math.huge, z = 0.1 })
    local t = assert(protocol.decode_result(line:match("^result (.*)$")))
    assert.is_true(t.x ~= t.x)
    assert.equals(math.huge, t.y)
    assert.equals(0.1, t.z)
  end)
end)
