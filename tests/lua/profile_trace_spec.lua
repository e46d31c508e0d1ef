-- kreach.profile.trace and its readers: the committed PyTorch profiler trace and kreach JSON
-- Lines trace, an Nsight Systems export built here with the sqlite3 command, format detection,
-- step selection, and malformed files reported as <file>:<line>: <what>.
-- The JSON Lines here are written by hand; inject_trace_spec.lua reads files the injection
-- library's own record writer wrote.
local support = require "support"
local trace = require "kreach.profile.trace"

local KINETO = "tests/data/profile/kineto_small.json"
local JSONL = "tests/data/profile/kreach_small.jsonl"
local B = 1733000000000000000 -- the JSON Lines trace's clock origin (ns)

local tmp = {}
local function tmpfile(text)
  local p = support.tmpfile()
  local f = assert(io.open(p, "wb"))
  f:write(text)
  f:close()
  tmp[#tmp + 1] = p
  return p
end

local function lines(t) return table.concat(t, "\n") .. "\n" end

local HEADER = '{"type":"header","version":1,"pid":7,"cupti_version":130001,"start_ns":1000}'
local K1 = '{"type":"kernel","name":"ampere_sgemm_128x64_tn","mangled":"ampere_sgemm_128x64_tn","start":2000,"end":3000,"device":0,"context":1,"stream":7,"grid":[4,1,1],"block":[128,1,1],"registers":32,"static_shared":0,"dynamic_shared":0,"correlation":5}'
local FOOTER1 = '{"type":"footer","kernels":1,"memcpys":0,"memsets":0,"ranges":0,"dropped":0,"buffers":1,"end_ns":9000}'

describe("kreach.profile.trace", function()
  teardown(function() for _, p in ipairs(tmp) do os.remove(p) end end)

  describe("a PyTorch profiler (Kineto) Chrome trace", function()
    local t = assert(trace.read(KINETO))

    it("gives the kernels, memory operations and annotations, sorted, in nanoseconds", function()
      assert.equals("kineto", t.source)
      assert.equals(12, #t.kernels)
      assert.equals(2, #t.memops)
      assert.equals(7, #t.ranges) -- three ProfilerStep ranges, their GPU projections, one record_function
      assert.equals(0, t.dropped)
      local k = t.kernels[1]
      assert.equals("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", k.name)
      assert.equals(4300105000, k.start_ns)
      assert.equals(4300125000, k.end_ns)
      assert.equals("integer", math.type(k.start_ns))
      assert.same({ 66, 1, 1 }, k.grid)
      assert.same({ 384, 1, 1 }, k.block)
      assert.equals(168, k.registers)
      assert.equals(213248, k.shared_bytes)
      assert.equals(0, k.device)
      assert.equals(7, k.stream)
      assert.equals(1002, k.correlation)
      for i = 2, #t.kernels do assert.is_true(t.kernels[i - 1].start_ns <= t.kernels[i].start_ns) end
      local custom
      for _, x in ipairs(t.kernels) do if x.name:match("^my_custom_kernel") then custom = x end end
      assert.equals(13, custom.stream)
      local m = t.memops[1]
      assert.equals("memcpy", m.kind)
      assert.equals("HtoD", m.copy_kind)
      assert.equals(4194304, m.bytes)
      assert.equals(2000, m.end_ns - m.start_ns)
      assert.equals("DtoH", t.memops[2].copy_kind)
      assert.equals("NVIDIA H100 80GB HBM3", t.device.name)
      local host, gpu = 0, 0
      for _, r in ipairs(t.ranges) do
        if r.name:match("^ProfilerStep#%d$") then if r.gpu then gpu = gpu + 1 else host = host + 1 end end
      end
      assert.equals(3, host)
      assert.equals(3, gpu)
    end)

    it("selects profiler steps by name, after skipping the first", function()
      local s = assert(trace.select(t, { range = "ProfilerStep", skip = 1 }))
      assert.equals(8, #s.kernels)
      assert.equals(1, #s.memops)
      assert.equals("DtoH", s.memops[1].copy_kind)
      assert.same({ 4300200000, 4300400000 }, s.window)
      assert.near(200e-6, s.wall_s, 1e-15)
      assert.equals(2, s.meta.selection.selected)
      assert.equals(3, s.meta.selection.total)
      assert.equals(12, #t.kernels) -- the trace itself is unchanged
      -- without a range: first kernel start to last kernel end; memory operations outside drop
      local all = assert(trace.select(t))
      assert.same({ 4300105000, 4300345000 }, all.window)
      assert.near(240e-6, all.wall_s, 1e-15)
      assert.equals(12, #all.kernels)
      assert.equals(0, #all.memops)
    end)

    it("falls back to the GPU projections of the steps when there are no host ranges", function()
      local copy = {}
      for k, v in pairs(t) do copy[k] = v end
      copy.ranges = {}
      for _, r in ipairs(t.ranges) do if r.gpu then copy.ranges[#copy.ranges + 1] = r end end
      local s = assert(trace.select(copy, { range = "ProfilerStep", skip = 2 }))
      assert.equals(4, #s.kernels)
      assert.equals(1, #s.memops)
    end)

    it("says which ranges there are when the one asked for is not", function()
      local s, err = trace.select(t, { range = "step" })
      assert.is_nil(s)
      assert.equals("no range named 'step' in the trace (its ranges: ProfilerStep, ## forward ##)", err)
      s, err = trace.select(t, { range = "ProfilerStep", skip = 3 })
      assert.is_nil(s)
      assert.equals("skipping 3 leaves none of the 3 'ProfilerStep' ranges", err)
      assert.has_error(function() trace.select(t, { range = "ProfilerStep", skip = -1 }) end)
    end)

    it("reports JSON syntax errors with their line, and events missing a field by index", function()
      local p = tmpfile('{\n  "traceEvents": [\n    {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2},\n    {"ph": "X", "cat": "kernel" "name": "k"}\n  ]\n}\n')
      local r, err = trace.read(p)
      assert.is_nil(r)
      assert.matches(p:gsub("%p", "%%%0") .. ":4: not JSON", err)
      p = tmpfile('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}, {"ph": "X", "cat": "kernel", "name": "k2", "ts": 5}]}')
      r, err = trace.read(p)
      assert.is_nil(r)
      assert.matches("traceEvents%[2%] %(kernel 'k2'%): no numeric 'dur'", err)
      p = tmpfile('{"schemaVersion": 1, "events": []}')
      r, err = trace.read(p, { format = "kineto" })
      assert.is_nil(r)
      assert.matches(":1: not a Chrome trace", err)
      -- the reader takes NaN and Infinity: times that are not finite, or absurd, are refused
      for _, c in ipairs({ { '"ts": NaN, "dur": 2', "'ts' is NaN" }, { '"ts": 1, "dur": NaN', "'dur' is NaN" },
                           { '"ts": 1, "dur": Infinity', "'dur' is inf" }, { '"ts": 1e300, "dur": 2', "'ts' is 1e%+300" },
                           { '"ts": 1, "dur": 1e20', "'dur' is 1e%+20, not a duration in microseconds %(finite, at most a day%)" } }) do
        r, err = trace.read(tmpfile('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", ' .. c[1] .. '}]}'))
        assert.is_nil(r, c[1])
        assert.matches("traceEvents%[1%] %(kernel 'k'%): " .. c[2], err)
      end
    end)

    it("reads older traces (category Kernel, absolute microseconds) and bare event arrays", function()
      local p = tmpfile('[{"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1600000000000000.5, "dur": 12.25, "args": {"device": 0, "stream": 7}},\n' ..
                        ' {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1600000000000020, "dur": 1, "args": {"bytes": 64}}]')
      local r = assert(trace.read(p))
      assert.equals(1, #r.kernels)
      assert.equals(12250, r.kernels[1].end_ns - r.kernels[1].start_ns)
      assert.equals("HtoD", r.memops[1].copy_kind)
    end)
  end)

  describe("the injection library's JSON Lines", function()
    local t = assert(trace.read(JSONL))

    it("gives every record, with CUPTI's nanosecond timestamps exact", function()
      assert.equals("cupti", t.source)
      assert.equals(6, #t.kernels)
      assert.equals(2, #t.memops)
      assert.equals(2, #t.ranges)
      assert.equals(0, t.dropped)
      local k = t.kernels[1]
      assert.equals(B + 5000, k.start_ns)
      assert.equals("integer", math.type(k.start_ns))
      assert.equals(20123, k.end_ns - k.start_ns) -- a double would round this to a multiple of 256
      assert.equals(213248, k.shared_bytes)
      assert.same({ 132, 1, 1 }, k.grid)
      assert.equals(12, k.correlation)
      assert.equals("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_", t.kernels[2].mangled)
      assert.equals("memcpy", t.memops[1].kind)
      assert.equals("HtoD", t.memops[1].copy_kind)
      assert.equals(1048576, t.memops[1].bytes)
      assert.equals("memset", t.memops[2].kind)
      assert.equals(48213, t.meta.header.pid)
      assert.equals(B, t.meta.header.start_ns)
      assert.equals("step", t.ranges[1].name)
    end)

    it("selects the NVTX steps", function()
      local s = assert(trace.select(t, { range = "step", skip = 1 }))
      assert.equals(3, #s.kernels)
      assert.equals(1, #s.memops)
      assert.equals("memset", s.memops[1].kind)
      assert.same({ B + 101000, B + 201000 }, s.window)
      assert.near(100e-6, s.wall_s, 1e-15)
      s = assert(trace.select(t, { range = "step" }))
      assert.equals(6, #s.kernels)
      assert.near(200e-6, s.wall_s, 1e-15) -- the summed length of the two steps
    end)

    it("keeps the kinds the library traced, and a report names those left out", function()
      local report = require "kreach.profile.report"
      local h = HEADER:gsub("}$", ',"kinds":["kernel","marker"]}')
      local r = assert(trace.read(tmpfile(lines({ h, K1, FOOTER1 }))))
      assert.same({ "kernel", "marker" }, r.meta.header.kinds)
      local rep = report.build(r)
      assert.same({ "memcpy", "memset" }, rep.not_traced)
      assert.matches("note: memcpy, memset not traced %(KREACH_TRACE_KINDS%)", report.text(rep))
      -- all four, or a trace from before the field: nothing to note
      local all = HEADER:gsub("}$", ',"kinds":["kernel","memcpy","memset","marker"]}')
      assert.is_nil(report.build(assert(trace.read(tmpfile(lines({ all, K1, FOOTER1 }))))).not_traced)
      rep = report.build(assert(trace.read(tmpfile(lines({ HEADER, K1, FOOTER1 })))))
      assert.is_nil(rep.not_traced)
      assert.not_matches("not traced", report.text(rep))
    end)

    -- kreach profile --alternate: six "step" ranges; the library traced the 1st, 3rd and 5th (one
    -- elementwise kernel of 100 ns each). Each switch took 100 ns inside the step it starts: on at
    -- the 3rd and 5th, off at the 2nd, 4th and 6th. Less switching, traced steps take 1100 ns and
    -- untraced ones 1000 ns: tracing costs 10%.
    local EW = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
    local function alternating(opts)
      opts = opts or {}
      local out = { (HEADER:gsub("}$", ',"alternate":"step"}')) }
      local at, nk = 10000, 0
      for i = 1, 6 do
        local len = i % 2 == 1 and (i == 1 and 1100 or 1200) or 1100
        out[#out + 1] = ('{"type":"range","name":"%s","start":%d,"end":%d}'):format(opts.name or "step", at, at + len)
        if i % 2 == 1 then
          nk = nk + 1
          out[#out + 1] = ('{"type":"kernel","name":"%s","mangled":"x","start":%d,"end":%d,"device":0,"context":1,"stream":7,"grid":[1,1,1],"block":[32,1,1],"registers":8,"static_shared":0,"dynamic_shared":0,"correlation":%d}'):format(
            EW, at + 500, at + 600, i)
        end
        at = at + 2000
      end
      out[#out + 1] = ('{"type":"footer","kernels":%d,"memcpys":0,"memsets":0,"ranges":6,"dropped":0,"buffers":1,"end_ns":30000,"alternate_ranges":%d,"switches_on":2,"switches_off":3,"switch_on_ns":200,"switch_off_ns":300}'):format(
        nk, opts.pushes or 6)
      return assert(trace.read(tmpfile(lines(out))))
    end

    it("measures an alternating trace over its traced steps, and the tracing's cost from the others", function()
      local report = require "kreach.profile.report"
      local r = alternating()
      assert.equals("step", r.meta.header.alternate)
      local s = assert(trace.select(r, { range = "step" }))
      assert.equals(3, #s.kernels)
      assert.near((1100 + 1200 + 1200) / 1e9, s.wall_s, 1e-18)
      assert.same({ traced = 3, untraced = 3, steps_ns = { 1100, 1100, 1200, 1100, 1200, 1100 }, from = 1 }, s.meta.selection.alternate)
      local rep = report.build(s)
      local a = rep.alternate
      assert.equals(3, a.traced)
      assert.equals(2, a.pairs) -- the 2nd and 4th steps: the 6th has no traced step after it
      assert.near(0.10, a.slowdown, 1e-12)
      assert.is_nil(a.slowdown_lo) -- two pairs bound no median
      assert.near(1.2e-6, a.traced_step_s, 1e-18)
      assert.near(1.1e-6, a.untraced_step_s, 1e-18)
      assert.near(1e-7, a.switch_on_s, 1e-18)
      assert.near(1e-7, a.switch_off_s, 1e-18)
      -- the shares are over the traced steps; the untraced wall is theirs less the slowdown
      assert.near(300 / 3500, rep.addressable.frac_wall, 1e-12)
      assert.near(300 / 3500 * 1.1, rep.addressable.frac_wall_untraced, 1e-12)
      local text = report.text(rep)
      assert.matches("6 of 6 'step' ranges %(0 skipped, 3 traced%); wall 3%.500 us", text)
      assert.matches("median step traced 1%.200 us, untraced 1%.100 us", text)
      assert.matches("alternate: kernels and memory operations traced in every other 'step' range only", text)
      assert.matches("tracing slowed a step by %+10%.00%% %(the median over 2 untraced steps", text)
      assert.matches("of the untraced steps' wall%)", text)
      assert.matches("\ntotal,addressable_untraced,,true,", "\n" .. report.csv(rep))
      -- after skipping one, the 2nd (untraced) is measured and the comparison starts at the 3rd
      s = assert(trace.select(r, { range = "step", skip = 1 }))
      assert.equals(2, #s.kernels)
      assert.same({ traced = 2, untraced = 3, steps_ns = { 1200, 1100, 1200, 1100 }, from = 3 }, s.meta.selection.alternate)
      assert.near(0.10, report.build(s).alternate.slowdown, 1e-12)
      -- a trace that traced every step has no alternation to show
      rep = report.build(assert(trace.read(tmpfile(lines({ HEADER, K1, FOOTER1 })))))
      assert.is_nil(rep.alternate)
      assert.not_matches("alternate", report.text(rep))
    end)

    it("refuses to measure an alternating trace over anything but its alternating steps", function()
      local report = require "kreach.profile.report"
      local r = alternating()
      local s, err = trace.select(r, { range = "phase" })
      assert.is_nil(s)
      assert.equals("the trace traced kernels in every other 'step' range only (KREACH_TRACE_ALTERNATE): measure it over those steps (--steps step)", err)
      assert.is_nil((trace.select(r)))
      assert.has_error(function() report.build(r) end,
        "the trace traced kernels in every other 'step' range only (KREACH_TRACE_ALTERNATE): measure it over those steps (--steps step)")
      s, err = trace.select(alternating({ pushes = 4 }), { range = "step" })
      assert.is_nil(s)
      assert.equals("the library saw 4 pushes of 'step' but the trace holds 6 such ranges, so which were traced is not known", err)
      s, err = trace.select(r, { range = "step", skip = 5 })
      assert.is_nil(s)
      assert.matches("no traced 'step' range is left after the skip", err)
    end)

    it("sorts records, which CUPTI delivers out of order", function()
      local K0 = K1:gsub('"start":2000,"end":3000', '"start":1500,"end":1600'):gsub("ampere_sgemm_128x64_tn", "early")
      local p = tmpfile(lines({ HEADER, K1, K0, (FOOTER1:gsub('"kernels":1', '"kernels":2')) }))
      local r = assert(trace.read(p))
      assert.equals("early", r.kernels[1].name)
    end)

    local function fails(text, pattern, opts)
      local p = tmpfile(text)
      local r, err = trace.read(p, opts)
      assert.is_nil(r)
      assert.matches(p:gsub("%p", "%%%0") .. pattern, err)
    end

    it("reports a malformed line as <file>:<line>: <what>", function()
      fails(lines({ HEADER, K1, '{"type":"kernel", "name": }', FOOTER1 }), ":3: not JSON")
      fails(lines({ HEADER, '[1, 2]', FOOTER1 }), ":2: not a JSON object")
      fails(lines({ HEADER, '{"type":"kernel","name":"k","end":5}', FOOTER1 }), ":2: kernel without an integer 'start'")
      fails(lines({ HEADER, '{"type":"kernel","name":"k","start":9,"end":5}', FOOTER1 }), ":2: kernel ends %(5%) before it starts %(9%)")
      fails(lines({ HEADER, '{"type":"kernel","start":1001,"end":1005}', FOOTER1 }), ":2: kernel without a 'name'")
      -- times the library cannot have written: before the trace's start, a key of a nested
      -- object read as the record's, a footer's dropped count that is not a count
      fails(lines({ HEADER, '{"type":"kernel","name":"k","start":-5,"end":1005}', FOOTER1 }), ":2: kernel starts %(%-5%) before the trace does %(the header's start_ns, 1000%)")
      fails(lines({ HEADER, '{"type":"kernel","name":"k","x":{"start":1,"end":2},"start":1500,"end":1600}', FOOTER1 }), ":2: kernel without an integer 'start'")
      fails(lines({ HEADER, K1, (FOOTER1:gsub('"dropped":0', '"dropped":-5')) }), ":3: the footer's 'dropped' is %-5, not a count")
      fails(lines({ HEADER, K1, (FOOTER1:gsub('"dropped":0', '"dropped":"lots"')) }), ":3: the footer's 'dropped' is lots, not a count")
      fails(lines({ HEADER, '{"name":"x"}', FOOTER1 }), ":2: a record without a 'type'")
      fails(lines({ K1, FOOTER1 }), ":1: not a kreach trace: the first record is not a header", { format = "kreach" })
      fails(lines({ (HEADER:gsub('"version":1', '"version":2')), FOOTER1 }), ":1: trace format version 2, this kreach reads version 1")
      fails(lines({ (HEADER:gsub('"version":1', '"version":"1"')), FOOTER1 }), ':1: trace format version "1" %(not a number%), this kreach reads version 1')
      fails(lines({ (HEADER:gsub('"version":1', '"version":1.0')), FOOTER1 }), ":1: trace format version 1%.0 %(not an integer%), this kreach reads version 1")
      fails(lines({ HEADER, K1, FOOTER1, K1 }), ":4: a record after the footer")
      fails(lines({ HEADER, HEADER, K1, FOOTER1 }), ":2: a second header")
      fails(lines({ (HEADER:gsub("}$", ',"kinds":["kernel",3]}')), FOOTER1 }), ":1: the header's 'kinds' is not a list of names")
      fails(lines({ (HEADER:gsub("}$", ',"alternate":""}')), FOOTER1 }), ":1: the header's 'alternate' is not a range name")
    end)

    it("checks the footer's counts against the records", function()
      fails(lines({ HEADER, K1, K1, FOOTER1 }), ":4: the footer counts 1 kernels, the file has 2")
      fails(lines({ HEADER, K1, '{"type":"footer","kernels":1,"memsets":0,"ranges":0,"dropped":0}' }), ":3: the footer has no 'memcpys' count")
    end)

    it("refuses a trace without its footer unless partial traces are allowed", function()
      fails(lines({ HEADER, K1 }), ":2: no footer: the program did not exit normally")
      local p = tmpfile(lines({ HEADER, K1 }))
      local r = assert(trace.read(p, { allow_partial = true }))
      assert.is_true(r.meta.partial)
      assert.equals(1, #r.kernels)
      -- a last line cut off mid-write (no newline after it) is a partial trace too: refused
      -- with "partial", and with allow_partial read up to it
      local cut = lines({ HEADER, K1 }) .. K1:sub(1, 40)
      p = tmpfile(cut)
      local none, err, why = trace.read(p)
      assert.is_nil(none)
      assert.matches(":3: the last line is cut off %(not JSON", err)
      assert.equals("partial", why)
      r = assert(trace.read(p, { allow_partial = true }))
      assert.is_true(r.meta.partial)
      assert.equals(3, r.meta.cut_line)
      assert.equals(1, #r.kernels)
      -- a malformed line that ends with its newline is not a cut: an error, partial or not
      fails(lines({ HEADER, K1, K1:sub(1, 40) }), ":3: not JSON", { allow_partial = true })
    end)

    it("skips record types it does not know, and kernels CUPTI could not time", function()
      local untimed = K1:gsub('"start":2000,"end":3000', '"start":0,"end":0')
      local p = tmpfile(lines({ HEADER, '{"type":"device","ordinal":0}', K1, untimed,
        (FOOTER1:gsub('"kernels":1', '"kernels":2')) }))
      local r = assert(trace.read(p))
      assert.equals(1, #r.kernels)
      assert.equals(1, r.meta.unknown_records)
      assert.equals(1, r.meta.untimed)
    end)

    it("keeps the dropped-record count and a range's NVTX domain", function()
      local p = tmpfile(lines({ HEADER, K1, '{"type":"range","name":"AllReduce","domain":"NCCL","start":2000,"end":2500}',
        '{"type":"footer","kernels":1,"memcpys":0,"memsets":0,"ranges":1,"dropped":12,"buffers":1,"end_ns":9000}' }))
      local r = assert(trace.read(p))
      assert.equals(12, r.dropped)
      assert.equals("NCCL", r.ranges[1].domain)
    end)
  end)

  describe("format detection", function()
    it("tells the formats apart and refuses what it cannot read", function()
      assert.equals("kineto", trace.detect(KINETO))
      assert.equals("kreach", trace.detect(JSONL))
      local gz = tmpfile("\31\139\8\0\0\0\0\0")
      local f, err = trace.detect(gz)
      assert.is_nil(f)
      assert.matches("gzip%-compressed: kreach reads plain JSON only", err)
      f, err = trace.read(tmpfile("hello\n"))
      assert.is_nil(f)
      assert.matches("not a trace kreach knows", err)
      f, err = trace.read("/nonexistent/trace.json")
      assert.is_nil(f)
      assert.matches("/nonexistent/trace.json", err)
      assert.has_error(function() trace.read(KINETO, { format = "perfetto" }) end)
    end)
  end)

  describe("an Nsight Systems SQLite export", function()
    local have_sqlite = pcall(require, "kreach.core.sqlite")
    local have_cli = os.execute("command -v sqlite3 >/dev/null 2>&1")
    if not have_sqlite then
      pending("kreach.core.sqlite is not in this build: the nsys reader is untested")
      return
    end
    if not have_cli then
      pending("no sqlite3 command to build the fixture with")
      return
    end

    -- A subset of the schema nsys 2024/2025 exports, with its column names.
    local SQL = [[
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT'),
  (2, 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)'),
  (3, 'vectorized_elementwise_kernel'),
  (4, '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_'),
  (5, 'step'), (6, 'cudaLaunchKernel_v7000');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL REFERENCES StringIds(id), shortName INTEGER NOT NULL REFERENCES StringIds(id),
  mangledName INTEGER REFERENCES StringIds(id), launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (3000500, 3020500, 0, 1, NULL, 7, 42, 1234, 1, 1, 1, 0, 0, 168, 66, 1, 1, 384, 1, 1, 0, 213248, 0, 0, 11, 213248, NULL, 1),
  (3100000, 3105000, 0, 1, NULL, 7, 43, 1234, 2, 3, 4, 0, 0, 16, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 12, 0, NULL, 1),
  (2000000, 2020000, 0, 1, NULL, 7, 40, 1234, 1, 1, 1, 0, 0, 168, 66, 1, 1, 384, 1, 1, 1024, 212224, 0, 0, 10, 213248, NULL, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
  srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER, virtualAddress INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1990000, 1995000, 0, 1, NULL, 7, 39, 1234, 4194304, 1, NULL, 0, 3, NULL, NULL, 0, 1, NULL, NULL, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (3200000, 3200400, 0, 1, NULL, 7, 44, 1234, 0, 4096, NULL, 3);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER REFERENCES StringIds(id),
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) VALUES
  (1900000, 2900000, 59, NULL, 281474976710656, 5, 0),
  (2900000, 3900000, 59, 'step', 281474976710656, NULL, 0),
  (2950000, NULL, 34, 'a mark', 281474976710656, NULL, 0),
  (1000000, 5000000, 60, 'whole run', 281474976710656, NULL, 0);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
  l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H200', '0000:19:00.0', 1, 62914560, 150754820096, 4800000000000, 1980000000, 132, 9, 0);
]]
    local path = support.tmpfile(".sqlite")
    local sql = tmpfile(SQL)
    assert(os.execute(("sqlite3 %q < %q"):format(path, sql)), "sqlite3 could not build the fixture")
    tmp[#tmp + 1] = path

    it("gives the kernels (demangled names, sorted), memory operations, NVTX ranges and the device", function()
      assert.equals("nsys", trace.detect(path))
      local t = assert(trace.read(path))
      assert.equals("nsys", t.source)
      assert.equals(3, #t.kernels)
      local k = t.kernels[1]
      assert.equals("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", k.name)
      assert.equals(2000000, k.start_ns)
      assert.equals(2020000, k.end_ns)
      assert.same({ 66, 1, 1 }, k.grid)
      assert.same({ 384, 1, 1 }, k.block)
      assert.equals(168, k.registers)
      assert.equals(213248, k.shared_bytes)
      assert.equals(40, k.correlation)
      assert.equals(7, k.stream)
      assert.matches("^void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor", t.kernels[3].name)
      assert.equals("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", t.kernels[3].mangled)
      assert.equals(2, #t.memops)
      assert.equals("memcpy", t.memops[1].kind)
      assert.equals("HtoD", t.memops[1].copy_kind)
      assert.equals(4194304, t.memops[1].bytes)
      assert.equals("memset", t.memops[2].kind)
      assert.equals(3, #t.ranges) -- the two push/pop steps and the start/end range; not the mark
      assert.equals("whole run", t.ranges[1].name)
      assert.equals("step", t.ranges[2].name)
      assert.equals("step", t.ranges[3].name)
      assert.equals("NVIDIA H200", t.device.name)
      local s = assert(trace.select(t, { range = "step", skip = 1 }))
      assert.equals(2, #s.kernels)
      assert.equals(1, #s.memops)
    end)

    it("refuses a database that is not an nsys export", function()
      local other = support.tmpfile(".sqlite")
      assert(os.execute(("sqlite3 %q 'CREATE TABLE t(x)'"):format(other)))
      tmp[#tmp + 1] = other
      local r, err = trace.read(other)
      assert.is_nil(r)
      assert.matches("not an Nsight Systems export", err)
    end)
  end)
end)
