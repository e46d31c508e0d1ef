-- kreach.profile.run on the GPU: the injection library records real CUDA programs started from
-- Lua. tests/inject/inject_target.cu (built beside the binary, tests/inject_target) runs 5 NVTX
-- 'step' ranges of 3 add_one and 2 krt::scale<float> launches each, a memcpy each way and a
-- memset outside them (tests/inject/inject_expect.h); kreach scripts write knobs, print and fail.
local kreach = require "kreach"
local run = require "kreach.profile.run"
local support = require "support"

local TARGET = kreach.executable():match("^(.*)/[^/]*$") .. "/tests/inject_target"
local ADD, SCALE = "add_one(int*, int)", "void krt::scale<float>(float*, float, int)"

local function by_name(kernels)
  local n = {}
  for _, k in ipairs(kernels) do n[k.name] = (n[k.name] or 0) + 1 end
  return n
end

describe("kreach.profile.run on the GPU", function()
  local dirs = {}
  teardown(function()
    for _, d in ipairs(dirs) do os.execute("rm -rf '" .. d .. "'") end
  end)

  it("records every kernel, memory operation and range of a CUDA program", function()
    local res = assert(run.run({ TARGET }))
    assert.is_true(res.ok)
    local t = res.trace
    assert.same({ [ADD] = 15, [SCALE] = 10 }, by_name(t.kernels))
    local kinds = {}
    for _, m in ipairs(t.memops) do kinds[#kinds + 1] = m.kind .. (m.copy_kind and (" " .. m.copy_kind) or "") end
    table.sort(kinds)
    assert.same({ "memcpy DtoH", "memcpy HtoD", "memset" }, kinds)
    local steps = 0
    for _, r in ipairs(t.ranges) do if r.name == "step" then steps = steps + 1 end end
    assert.equals(5, steps)
    assert.equals(0, t.dropped)
    assert.same({ TARGET }, t.command)
    assert.same({ how = "exit", status = 0 }, t.meta.exit)
  end)

  it("profiles a program's steps and stores them", function()
    local d = support.tmpdir()
    dirs[#dirs + 1] = d
    local res = assert(run.profile({ TARGET }, { steps = "step", skip = 1, db = d .. "/r.db", workload = "target" }))
    local rep = res.report
    assert.same({ range = "step", skip = 1, selected = 4, total = 5 }, rep.selection)
    assert.equals(20, rep.totals.kernels)
    assert.equals(0, rep.totals.memops) -- the copies and the memset are outside the steps
    assert.equals("target", rep.workload)
    assert.same({ id = 1, db = d .. "/r.db" }, res.stored)
    assert.same({ [ADD] = 12, [SCALE] = 8 }, by_name(assert(run.load(1, d .. "/r.db")).kernels))
  end)

  it("traces every other step with alternate", function()
    local res = assert(run.profile({ TARGET }, { steps = "step", alternate = "step" }))
    local rep = res.report
    assert.equals("step", rep.alternate.range)
    assert.equals(3, rep.alternate.traced)
    assert.equals(2, rep.alternate.untraced)
    assert.equals(15, rep.totals.kernels)
  end)

  it("leaves out the kinds it is not asked for", function()
    local res = assert(run.run({ TARGET }, { kinds = { "kernel", "marker" } }))
    assert.same({ "kernel", "marker" }, res.trace.meta.header.kinds)
    assert.equals(25, #res.trace.kernels)
    assert.equals(0, #res.trace.memops)
  end)

  it("reads a program's knobs and output, and reports its failure with its trace", function()
    local code = [[
      local f = assert(io.open(os.getenv("KREACH_PROFILE_KNOBS"), "w"))
      f:write('{"n": 3, "mode": "fast"}')
      f:close()
      local k = require "kreach"
      k.zeros({ 1 << 16 })
      k.synchronize()
      print("done")
      io.stderr:write("to stderr\n")
      os.exit(3)
    ]]
    local res = assert(run.run({ kreach.executable(), "-e", code }))
    assert.is_false(res.ok)
    assert.same({ how = "exit", status = 3 }, res.exit)
    assert.equals("done\n", res.stdout)
    assert.equals("to stderr\n", res.stderr)
    assert.same({ n = 3, mode = "fast" }, res.trace.knobs)
    assert.is_true(#res.trace.kernels > 0)
  end)
end)
