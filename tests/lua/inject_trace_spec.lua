-- The injection library's writer against kreach's reader, on the CPU: tests/inject/inject_write.c
-- (built beside the binary, tests/inject_write) writes traces with libkreach_inject's own record
-- functions (runtime/inject/kr_inject_fmt.c), and kreach.profile.trace.read reads those very
-- files. Every value below is one inject_write.c wrote; a key renamed, a number rounded or a
-- string escaped differently on either side fails here, which the writer's own strings
-- (tests/c/test_inject.c) and the reader's hand-written fixtures (profile_trace_spec.lua) cannot
-- notice. The GPU test (gpu/profile_run_spec.lua) checks what CUPTI itself records.
local kreach = require "kreach"
local trace = require "kreach.profile.trace"
local report = require "kreach.profile.report"
local support = require "support"

local WRITER = kreach.executable():match("^(.*)/[^/]*$") .. "/tests/inject_write"
local B = 1733000000000000000 -- the full trace's clock origin (ns)
local SCALE = "void krt::scale<float>(float*, float, int)"
local ADD = "add_one(int*, int)"

describe("a trace the injection library's writer wrote, read by kreach.profile.trace", function()
  local dir = support.tmpdir()
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  -- write(scenario) -> the path of the trace inject_write wrote for it
  local function write(scenario)
    local path = dir .. "/" .. scenario .. ".jsonl"
    local out, rc = support.sh(("'%s' %s '%s'"):format(WRITER, scenario, path))
    assert(rc == 0, ("%s %s failed (rc %s; is the build up to date?): %s"):format(WRITER, scenario, tostring(rc), out))
    return path
  end

  describe("every kind of record", function()
    local path = write("full")
    local t, err = trace.read(path)

    it("reads as a kreach trace, its header and footer kept", function()
      assert(t, err)
      assert.equals("kreach", trace.detect(path))
      assert.equals("cupti", t.source)
      assert.same({ version = 1, pid = 4242, cupti_version = 130001, start_ns = B,
                    kinds = { "kernel", "memcpy", "memset", "marker" } }, t.meta.header)
      assert.equals("integer", math.type(t.meta.header.start_ns))
      assert.same({ buffers = 2, end_ns = B + 9000 }, t.meta.footer)
      assert.equals(3, t.dropped)
      assert.is_nil(t.meta.partial)
      assert.is_nil(t.meta.unknown_records)
      assert.same({ kernels = 3, memcpys = 3, memsets = 1, ranges = 4, dropped = 3 }, trace.summary(t))
    end)

    it("gives each kernel with every field, demangled, sorted by start then end, the untimed one left out", function()
      assert(t, err)
      assert.equals(1, t.meta.untimed) -- the fourth kernel: CUPTI gave it no times
      assert.same({
        { name = "relu_kernel", mangled = "relu_kernel", start_ns = B + 1000, end_ns = B + 1500, device = 0,
          stream = 7, grid = { 8, 1, 1 }, block = { 256, 1, 1 }, registers = 24, shared_bytes = 128, correlation = 2 },
        { name = ADD, mangled = "_Z7add_onePii", start_ns = B + 1000, end_ns = B + 2001, device = 1, stream = 7,
          grid = { 2147483647, 1, 1 }, block = { 32, 1, 1 }, registers = 16, shared_bytes = 0, correlation = 1 },
        { name = SCALE, mangled = "_ZN3krt5scaleIfEEvPT_S1_i", start_ns = B + 3000, end_ns = B + 3001, device = 0,
          stream = 14, grid = { 65535, 2, 3 }, block = { 1024, 1, 1 }, registers = 255, shared_bytes = 49152 + 16384,
          correlation = 4294967295 },
      }, t.kernels)
      -- nanosecond times exact: as doubles, B + 3000 and B + 3001 are the same number
      for _, k in ipairs(t.kernels) do
        assert.equals("integer", math.type(k.start_ns))
        assert.equals("integer", math.type(k.end_ns))
      end
      assert.equals(1, t.kernels[3].end_ns - t.kernels[3].start_ns)
      assert.equals(500, t.kernels[1].end_ns - t.kernels[1].start_ns)
      assert.equals(1001, t.kernels[2].end_ns - t.kernels[2].start_ns)
    end)

    it("gives each memory operation, its copy kind named and its byte count exact", function()
      assert(t, err)
      assert.same({
        { kind = "memcpy", start_ns = B + 500, end_ns = B + 900, bytes = 16384, copy_kind = "HtoD", device = 0,
          stream = 7, correlation = 4 },
        { kind = "memset", start_ns = B + 4000, end_ns = B + 4100, bytes = 16384, device = 0, stream = 7 },
        { kind = "memcpy", start_ns = B + 5000, end_ns = B + 7000, bytes = 9007199254740993, copy_kind = "DtoH",
          device = 0, stream = 7, correlation = 3 },
        { kind = "memcpy", start_ns = B + 8000, end_ns = B + 8100, bytes = 64, copy_kind = "unknown", device = 1,
          stream = 13, correlation = 5 },
      }, t.memops)
      -- 2^53 + 1: a double holds 2^53
      assert.equals("integer", math.type(t.memops[3].bytes))
      assert.is_true(t.memops[3].bytes ~= 9007199254740992)
    end)

    it("gives each NVTX range, its domain kept and its name as the program wrote it", function()
      assert(t, err)
      assert.same({
        { name = 'say "start":1,"end":2}\\ caf\u{E9}\n\u{FFFD}!', start_ns = B + 100, end_ns = B + 200 },
        { name = "step", start_ns = B + 900, end_ns = B + 3500 },
        { name = "step", start_ns = B + 3600, end_ns = B + 8000 },
        { name = "AllReduce", domain = "NCCL", start_ns = B + 4000, end_ns = B + 4500 },
      }, t.ranges)
    end)

    it("selects the 'step' ranges and reports their kernels by time", function()
      assert(t, err)
      local s = assert(trace.select(t, { range = "step" }))
      assert.same({ B + 900, B + 8000 }, s.window)
      assert.equals(2, s.meta.selection.selected)
      assert.equals(7000e-9, s.wall_s)
      local names = {}
      for i, k in ipairs(s.kernels) do names[i] = k.name end
      assert.same({ "relu_kernel", ADD, SCALE }, names)
      assert.equals(2, #s.memops) -- the memset and the DtoH copy; the HtoD one is before, the last at the end
      assert.equals("memset", s.memops[1].kind)
      assert.equals("DtoH", s.memops[2].copy_kind)
      local rep = report.build(s)
      assert.same({ kernels = 3, memops = 2, dropped = 3 },
        { kernels = rep.totals.kernels, memops = rep.totals.memops, dropped = rep.totals.dropped })
      local rows = {}
      for i, r in ipairs(rep.kernels) do rows[i] = { r.name, r.count, math.floor(r.time_s * 1e9 + 0.5) } end
      assert.same({ { "[memcpy DtoH]", 1, 2000 }, { ADD, 1, 1001 }, { "relu_kernel", 1, 500 },
                    { "[memset]", 1, 100 }, { SCALE, 1, 1 } }, rows)
    end)
  end)

  it("keeps an alternating trace's range name and switch counts, and measures its traced steps", function()
    local t = assert(trace.read(write("alternate")))
    assert.same({ version = 1, pid = 77, cupti_version = 130001, start_ns = 1000, kinds = { "kernel", "marker" },
                  alternate = "step" }, t.meta.header)
    assert.same({ buffers = 1, end_ns = 20000, alternate_ranges = 4, switches_on = 1, switches_off = 2,
                  switch_on_ns = 250, switch_off_ns = 375 }, t.meta.footer)
    assert.equals(2, #t.kernels)
    assert.equals(4, #t.ranges)
    local s = assert(trace.select(t, { range = "step" }))
    assert.same({ traced = 2, untraced = 2, steps_ns = { 1100, 1100, 1100, 1100 }, from = 1 }, s.meta.selection.alternate)
    assert.same({ 10500, 14500 }, { s.kernels[1].start_ns, s.kernels[2].start_ns })
    assert.equals(2200e-9, s.wall_s)
  end)

  it("refuses a trace cut off before its footer, unless partial traces are allowed", function()
    local path = write("partial")
    local t, err, why = trace.read(path)
    assert.is_nil(t)
    assert.equals(path .. ":2: no footer: the program did not exit normally (killed or crashed?), so the trace may be incomplete (--allow-partial analyses what it holds)", err)
    assert.equals("partial", why)
    t = assert(trace.read(path, { allow_partial = true }))
    assert.is_true(t.meta.partial)
    assert.is_nil(t.meta.footer)
    assert.same({ { name = ADD, mangled = "_Z7add_onePii", start_ns = 2000, end_ns = 2500, device = 0, stream = 7,
                    grid = { 1, 1, 1 }, block = { 32, 1, 1 }, registers = 16, shared_bytes = 0, correlation = 1 } },
      t.kernels)
  end)
end)
