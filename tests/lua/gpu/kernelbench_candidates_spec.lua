-- The KernelBench-format test candidates (tests/candidates/kernelbench/EXPECTED.lua) under
-- `kreach check`, each beside its native .lua equivalent: both get the expected verdict. Every
-- check runs the whole protocol in its own worker, the .py ones in the Python worker (a
-- python3 with CUDA PyTorch: KREACH_PYTHON or python3; skipped without one). A load_inline
-- candidate is built once and found built the second time (its time, cold and cached, printed).
local kreach = require "kreach"
local support = require "support"
local pytorch = require "kreach.pytorch"
local seal = require "kreach.run.seal"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local dir = here .. "/../../candidates"
local expected = dofile(dir .. "/kernelbench/EXPECTED.lua")
local found, why = pytorch.find()
if not found then print("skipped: no python3 with CUDA PyTorch: " .. tostring(why)) end
local it_py = found and it or pending

-- a compile cache of this run's own, so that the first build is cold
local cache = support.tmpdir() .. "/cache"

local function check(e, file, cache_dir)
  local cmd = { ("KREACH_CACHE_DIR=%q %q check %d %q --json --seed 1 --timeout 60"):format(cache_dir or cache, kreach.executable(),
    e.problem, dir .. "/" .. file) }
  for k, v in pairs(e.sizes or {}) do cmd[#cmd + 1] = ("--size %s=%d"):format(k, v) end
  local t0 = kreach.now()
  local res = support.json_result(table.concat(cmd, " "))
  return res, kreach.now() - t0
end

local function expect(e, res, what)
  local v = res.verdict
  local why = ("%s: got %s (%s)"):format(what, v.verdict, tostring(v.reason):sub(1, 600))
  io.stderr:write(("  %-40s %s %s\n"):format(what, v.verdict, tostring(v.reason):sub(1, 200):gsub("\n", " ")))
  assert.are.equal(e.verdict, v.verdict, why)
  if e.reasons then
    local hit = false
    for _, r in ipairs(e.reasons) do if v.reason == r then hit = true end end
    assert.is_true(hit, why)
  end
end

-- the pids of the processes named `name` (/proc/<pid>/comm), waiting up to 5 s for none
local function named(name)
  local pids, t0 = {}, kreach.now()
  repeat
    pids = {}
    local f = io.popen("grep -lx " .. name .. " /proc/[0-9]*/comm 2>/dev/null")
    for l in f:lines() do pids[#pids + 1] = l:match("^/proc/(%d+)/") end
    f:close()
    if #pids == 0 then break end
    os.execute("sleep 0.1")
  until kreach.now() - t0 > 5
  return pids
end

-- the first judge of each file, whose load_inline build (if any) was cold: file -> {res, secs}
local first = {}

describe("KernelBench-format candidates", function()
  for _, e in ipairs(expected) do
    it_py(("%s on problem %d: %s%s, as %s"):format(e.file, e.problem, e.verdict,
      e.reasons and (" / " .. table.concat(e.reasons, " or ")) or "", e.native or "(no native equivalent)"), function()
      local res, secs = check(e, "kernelbench/" .. e.file)
      first[e.file] = first[e.file] or { res = res, secs = secs }
      expect(e, res, e.file)
      if e.verdict == "correct" then
        assert.is_table(res.python)
        print(("  %s: judged in %.1f s (the candidate loaded in %.1f s), sealed: %s"):format(e.file, secs,
          res.python.load_s or -1, res.python.seal and res.python.seal.filesystem or "no"))
        if seal.landlock() >= 1 and not seal.unsealed() then
          assert.equals("landlock", res.python.seal and res.python.seal.filesystem)
        end
      end
      if e.escapee then
        local left = named(e.escapee)
        for _, pid in ipairs(left) do os.execute("kill -9 " .. pid) end
        assert.are.same({}, left, e.escapee .. " outlived the check")
        print(("  %s: judged in %.1f s, no %s left"):format(e.file, secs, e.escapee))
      end
      if e.native then expect(e, (check(e, e.native)), e.native) end
    end)
  end

  it_py("builds a load_inline candidate once: the second judge finds it built", function()
    local e = expected[1]
    local cold = assert(first[e.file], "the first test judges " .. e.file .. " first")
    local res, warm = check(e, "kernelbench/" .. e.file)
    expect(e, res, e.file .. " (cached)")
    print(("  %s: judged in %.1f s (load %.1f s: the build), then %.1f s with the build cached (load %.2f s)"):format(
      e.file, cold.secs, cold.res.python.load_s, warm, res.python.load_s))
    assert.is_true(res.python.load_s < 10, "the cached build took " .. res.python.load_s .. " s to load")
  end)
end)
