-- Worker processes through Lua: a kreach worker's lines, a hung worker killed at its time
-- limit, a crash reported as a signal. This is the mechanism candidates will run under.
local kreach = require "kreach"

describe("kreach.proc", function()
  local bin = kreach.executable()

  it("reads a worker's lines and its exit status", function()
    local w = assert(kreach.proc.spawn({ bin, "-e", "print('phase load'); print('phase run'); io.stderr:write('note'); os.exit(3)" }))
    assert.equals("phase load", w:read_line(10))
    assert.equals("phase run", w:read_line(10))
    local line, why = w:read_line(10)
    assert.is_nil(line)
    assert.equals("eof", why)
    assert.same({ "exited", 3 }, { w:wait() })
    assert.equals("note", w:stderr())
    w:free()
  end)

  it("times out on a hung worker, which a kill ends", function()
    local w <close> = assert(kreach.proc.spawn({ bin, "-e", "print('started'); while true do end" }))
    assert.equals("started", w:read_line(10))
    local t0 = kreach.now()
    local line, why = w:read_line(0.3)
    assert.is_nil(line)
    assert.equals("timeout", why)
    assert.is_true(kreach.now() - t0 < 5)
    w:kill()
    local how, sig, name = w:wait()
    assert.equals("signaled", how)
    assert.equals("SIGKILL", name)
  end)

  it("reports a crash as its signal", function()
    local w = assert(kreach.proc.spawn({ "sh", "-c", "kill -ABRT $$" }))
    assert.is_nil(w:read_line(10))
    local how, _, name = w:wait()
    assert.equals("signaled", how)
    assert.equals("SIGABRT", name)
  end)

  it("says why a worker does not start", function()
    local w, err = kreach.proc.spawn({ "/nonexistent/worker" })
    assert.is_nil(w)
    assert.matches("cannot start /nonexistent/worker", err)
    assert.has_error(function() kreach.proc.spawn({}) end)
  end)

  it("collects a worker's standard error, or passes it through with pass_stderr", function()
    local w = assert(kreach.proc.spawn({ "sh", "-c", "echo to-err >&2; echo to-out" }))
    assert.equals("to-out", w:read_line(5))
    w:wait()
    assert.equals("to-err\n", w:stderr())
    w:free()
    -- passed through: a child kreach runs a worker with pass_stderr, and the worker's words
    -- arrive on the child's own standard error, not in w:stderr()
    local code = [[local w = assert(require("kreach").proc.spawn({ "sh", "-c", "echo to-err >&2; echo to-out" },
      { pass_stderr = true })); print(w:read_line(5)); w:wait(); print("collected:[" .. w:stderr() .. "]")]]
    local f = io.popen(("%q -e %q 2>&1"):format(bin, code))
    local out = f:read("a")
    f:close()
    assert.matches("to%-err\n", out)
    assert.matches("to%-out\n", out)
    assert.matches("collected:%[%]", out)
    assert.has_error(function() kreach.proc.spawn({ "true" }, { pass_stdrr = true }) end)
  end)

  -- whether /proc/<pid> is gone, waiting up to 5 s
  local function gone(pid)
    local t0 = kreach.now()
    repeat
      local f = io.open("/proc/" .. pid .. "/stat")
      if not f then return true end
      f:close()
      os.execute("sleep 0.05")
    until kreach.now() - t0 > 5
    return false
  end

  it("runs a worker under kreach's reaper: what it leaves in a session of its own ends with it", function()
    -- the worker leaves a process in a session of its own, holding its standard output
    local script = "setsid sh -c 'echo daemon $$; exec sleep 1000' & sleep 0.2; echo done; exit 5"
    local w = assert(kreach.proc.spawn({ "sh", "-c", script }, { reaper = bin }))
    local pid = assert(tonumber((w:read_line(10) or ""):match("^daemon (%d+)$")))
    assert.equals("done", w:read_line(10))
    local line, why = w:read_line(10)
    assert.is_nil(line)
    assert.equals("eof", why) -- not a timeout: nothing holds the output any more
    assert.same({ "exited", 5 }, { w:wait() })
    assert.is_true(gone(pid))
    w:free()
    -- killed: the worker's signal, as without a reaper
    w = assert(kreach.proc.spawn({ "sh", "-c", "setsid sh -c 'echo daemon $$; exec sleep 1000' & sleep 1000" }, { reaper = bin }))
    pid = assert(tonumber((w:read_line(10) or ""):match("^daemon (%d+)$")))
    w:kill()
    local how, _, name = w:wait()
    assert.equals("signaled", how)
    assert.equals("SIGKILL", name)
    assert.is_true(gone(pid))
    w:free()
    assert.has_error(function() kreach.proc.spawn({ "true" }, { reaper = "kreach" }) end, nil)
  end)

  -- A kreach worker seals itself (Landlock, signals scoped to its domain) after starting its
  -- Python worker, and may then not signal it: a kill must still end it. In a child kreach,
  -- which seals itself: a worker that ignores its standard input, killed after the seal.
  local abi = require("kreach.core.seal").landlock_abi()
  local it_scoped = abi >= 6 and it or pending
  it_scoped("ends a worker under the reaper that a sealed parent may not signal, through the watch pipe", function()
    local code = [[
      local kreach = require "kreach"
      local cs = require "kreach.core.seal"
      local reaper = %q
      local w = assert(kreach.proc.spawn({ "sh", "-c", "echo started; exec sleep " .. (reaper ~= "" and 1000 or 4) },
        { watch = true, reaper = reaper ~= "" and reaper or nil }))
      print(w:read_line(10))
      assert(cs.landlock({ { path = "/usr", access = "exec" } }) >= 6)
      w:kill()
      local t0 = kreach.now()
      local line, why = w:read_line(3)
      print(line, why)
      if why == "timeout" then os.exit(0) end
      print(w:wait())
      print(("%%.1f"):format(kreach.now() - t0))
    ]]
    local function run(reaper)
      local f = io.popen(("%q -e %q 2>&1"):format(bin, code:format(reaper)))
      local out = f:read("a")
      f:close()
      return out
    end
    local out = run(bin)
    assert.matches("^started\nnil\teof\nsignaled\t9\tSIGKILL\n", out)
    assert.is_true(tonumber(out:match("\n([%d.]+)\n$")) < 3, out)
    -- the control: without the reaper the sealed parent's kill does not reach the worker (its
    -- sleep ends by itself in 4 s). (The code above is one line for the shell: no comments.)
    out = run("")
    assert.matches("^started\nnil\ttimeout\n", out)
  end)
end)
