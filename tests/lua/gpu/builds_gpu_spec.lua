-- kreach eval with builds ahead of the GPU worker (--jobs, issue 38) on the GPU: the same
-- candidates give the same verdicts with --jobs 0 (each built by its GPU worker) and --jobs 2
-- (built ahead by the pool, paused while timed), a candidate that does not compile is
-- compile_error from its build without reaching the GPU, and a cold build lands in the cache
-- that the GPU worker reads (its compile is a disk hit there).
local kreach = require "kreach"
local json = require "kreach.json"
local lfs = require "lfs"

describe("kreach eval --jobs on the GPU", function()
  local bin = kreach.executable()
  local root = lfs.currentdir()

  local function tmpdir()
    local p = io.popen("mktemp -d")
    local d = p:read("l")
    p:close()
    return d
  end

  local function eval(dir, cache, db, jobs)
    local p = io.popen(("KREACH_CACHE_DIR=%q %q eval kernelbench-l1 %q --db %q --jobs %d --no-torch --json 2>&1 >%q/out.json; echo $?"):format(
      cache, bin, dir, db, jobs, cache))
    local log = p:read("a")
    p:close()
    local f = assert(io.open(cache .. "/out.json"))
    local ok, res = pcall(json.decode, f:read("a"))
    f:close()
    assert(ok, log)
    local by = {}
    for _, e in ipairs(res.evaluations) do by[e.candidate_path:match("([^/]+)$")] = e end
    return by, log
  end

  it("gives the same verdicts with builds ahead as without, and a compile error from the build", function()
    local dir = tmpdir()
    os.execute(("cp %q %q/"):format(root .. "/tests/candidates/019_relu.lua", dir))
    os.execute(("cp %q %q/"):format(root .. "/examples/023_softmax_online.lua", dir))
    local f = assert(io.open(root .. "/examples/026_gelu_float4.lua"))
    local text = f:read("a")
    f:close()
    local bad = assert(io.open(dir .. "/026_bad.lua", "w"))
    bad:write((text:gsub("source = %[%[", "source = [[\nthis is not CUDA;\n", 1)))
    bad:close()
    local db = os.tmpname()
    local runs = {}
    for _, jobs in ipairs({ 0, 2 }) do
      local cache = tmpdir()
      runs[jobs] = eval(dir, cache, db .. jobs, jobs)
      os.execute(("rm -rf %q %q%d*"):format(cache, db, jobs))
    end
    for _, name in ipairs({ "019_relu.lua", "023_softmax_online.lua", "026_bad.lua" }) do
      assert.equals(runs[0][name].verdict, runs[2][name].verdict, name)
    end
    assert.equals("correct", runs[2]["019_relu.lua"].verdict)
    assert.equals("correct", runs[2]["023_softmax_online.lua"].verdict)
    assert.equals("compile_error", runs[2]["026_bad.lua"].verdict)
    os.execute(("rm -rf %q"):format(dir))
  end)
end)
