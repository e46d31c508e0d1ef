-- The timing engine on the GPU: the L2 flush, the three modes, interleaved subjects and their
-- speedup interval, input sets in rotation with the round hooks, the clocks, the scratch pool;
-- and kreach.judge.measure on real candidates, including the adversarial ones that only the timing
-- checks catch (or give nothing to reuse). Numbers are printed as they are
-- measured, so a failing assertion can be read against them.
local kreach = require "kreach"
local timing = require "kreach.judge.timing"
local core = require "kreach.core.timing"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local cands = here .. "/../../candidates"

local prog = assert(kreach.build{ source = [[
// reads n floats and writes their sum per block, `reps` times over (reps scales the work)
extern "C" __global__ void sweep(const float4 *__restrict__ x, float *out, long long n4, int reps) {
  float s = 0.f;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; r++)
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
      float4 v = x[i];
      s += v.x + v.y + v.z + v.w;
    }
  if (s == 12345.678f) out[blockIdx.x] = s;  // keeps the loads; never true on these inputs
}
]] })

local sms = kreach.device().sm_count
local function sweeper(mb, reps)
  local n = mb * 2 ^ 20 // 4
  local x = kreach.empty({ n }, "f32"):uniform(0, 1, 7)
  local out = kreach.zeros({ sms * 4 }, "f32")
  local launch = prog.sweep{ grid = sms * 4, block = 256 }
  return function() launch(x, out, n // 4, reps) end, x
end

-- the cold median of one read of mb MiB
local function one_read_ms(mb)
  local r = timing.measure({ { name = "read", call = (sweeper(mb, 1)) } }, { budget_s = 0.5 })
  return r.subjects.read.summary.median
end

local function show(label, r)
  for _, name in ipairs(r.order) do
    local s = r.subjects[name].summary
    print(("%-28s %-10s median %.4f ms [%.4f, %.4f] n=%d stop=%s"):format(label, name, s.median, s.ci_lo or 0 / 0,
      s.ci_hi or 0 / 0, s.n, r.stop_reason))
  end
end

describe("the L2 flush", function()
  it("writes at least twice the L2 and resets persisting lines", function()
    local bytes = core.flush(2)
    local l2 = kreach.device().l2_bytes
    print("L2 bytes", l2, "flush bytes", bytes)
    assert.is_true(bytes >= 2 * l2)
    assert.is_true(core.flush(3) >= 3 * l2)
    assert.is_true(core.persisting_l2() >= 0)
    kreach.synchronize()
  end)
end)

describe("timing.measure", function()
  it("times a cold read from DRAM slower than a hot read from L2", function()
    -- 24 MiB fits in the H200's L2 (60 MB), so back-to-back reads hit it
    local call = sweeper(24, 1)
    local cold = timing.measure({ { name = "read", call = call } }, { mode = "cold", budget_s = 1 })
    local hot = timing.measure({ { name = "read", call = call } }, { mode = "hot", budget_s = 1 })
    show("24 MiB read, cold", cold)
    show("24 MiB read, hot", hot)
    local c, h = cold.subjects.read.summary.median, hot.subjects.read.summary.median
    assert.is_true(c > 1.15 * h, ("cold %.4f ms is not clearly slower than hot %.4f ms"):format(c, h))
    assert.is_true(cold.flush_bytes >= 2 * kreach.device().l2_bytes)
    assert.is_true(cold.subjects.read.summary.n >= 10)
  end)

  it("replays a captured graph, and agrees with hot timing on a long kernel", function()
    local call = sweeper(256, 1)
    local hot = timing.measure({ { name = "read", call = call } }, { mode = "hot", budget_s = 1 })
    local graph = timing.measure({ { name = "read", call = call } }, { mode = "graph", budget_s = 1 })
    show("256 MiB read, hot", hot)
    show("256 MiB read, graph", graph)
    -- one call on the one set, between two event record nodes of its own
    assert.equals(3, graph.subjects.read.graph_nodes)
    local h, g = hot.subjects.read.summary.median, graph.subjects.read.summary.median
    assert.is_true(math.abs(g - h) / h < 0.05, ("graph %.4f ms against hot %.4f ms"):format(g, h))
  end)

  it("holds the stream with a gate while a sample is queued; a call that synchronises is sampled without it", function()
    -- a 1 MiB read takes a few microseconds, less than the host takes to launch it: without
    -- the gate the first event runs on an idle GPU as soon as it is queued, and the interval
    -- counts the launch of the call
    local call = sweeper(1, 1)
    local gated = timing.measure({ { name = "read", call = call } }, { mode = "hot", budget_s = 0.5 })
    local open = timing.measure({ { name = "read", call = call } }, { mode = "hot", budget_s = 0.5, gate = false })
    show("1 MiB read, hot, gated", gated)
    show("1 MiB read, hot, no gate", open)
    assert.is_true(gated.gated)
    assert.is_false(open.gated)
    assert.is_nil(gated.subjects.read.ungated)
    local g, n = gated.subjects.read.summary.median, open.subjects.read.summary.median
    assert.is_true(g < n, ("gated %.4f ms is not below ungated %.4f ms"):format(g, n))
    -- the collector does not run while a gate holds: a tensor's finalizer (cudaFree) waits
    -- for the device. Each round leaves dead tensors, and the call allocates enough to drive
    -- the collector through them.
    local litter = timing.measure({ { name = "litter", call = function()
      local t = {}
      for i = 1, 20000 do t[i] = { i } end
      call()
    end } }, { mode = "hot", budget_s = 0.3 }, { before_round = function()
      for _ = 1, 200 do kreach.empty({ 256 }, "f32") end
    end })
    show("1 MiB read, garbage about", litter)
    assert.is_nil(litter.subjects.litter.ungated)
    -- a call that waits for the GPU holds up its own gate: it times out (5 ms here), and the
    -- subject goes on without one
    local t0 = kreach.now()
    local sync = timing.measure({ { name = "sync", call = function() call(); kreach.synchronize() end } },
      { mode = "cold", budget_s = 0.3, gate_ms = 5 })
    show("a call that synchronises", sync)
    assert.is_true(sync.subjects.sync.ungated)
    assert.is_true(kreach.now() - t0 < 3)
    assert.is_true(sync.subjects.sync.summary.median < 1, "the gate's timeout shows in the samples")
  end)

  it("interleaves subjects and bounds their speedup", function()
    local a = sweeper(256, 1)
    local b = sweeper(256, 2)
    local same = timing.measure({ { name = "a", call = a }, { name = "a2", call = a } }, { budget_s = 1 })
    show("same kernel twice", same)
    local sp = same.speedup
    print(("speedup of identical subjects %.4f [%.4f, %.4f]"):format(sp.ratio, sp.lo, sp.hi))
    assert.is_true(sp.lo <= 1.02 and sp.hi >= 0.98)
    local double = timing.measure({ { name = "once", call = a }, { name = "twice", call = b } }, { budget_s = 1 })
    show("one pass against two", double)
    print(("speedup of a 2x-work candidate %.4f [%.4f, %.4f]"):format(double.speedup.ratio, double.speedup.lo, double.speedup.hi))
    assert.near(0.5, double.speedup.ratio, 0.06)
    assert.is_true(double.speedup.lo <= double.speedup.ratio and double.speedup.ratio <= double.speedup.hi)
    -- the samples alternate: both subjects have the same count
    assert.equals(double.subjects.once.summary.n, double.subjects.twice.summary.n)
  end)

  it("rotates calls over input sets, with the round hooks and the preparation outside the timed region", function()
    -- two sets: set 1 reads 16 MiB, set 2 reads 256 MiB; the preparation of each call is a
    -- 256 MiB read that must not show in the times
    local small, big = sweeper(16, 1), sweeper(256, 1)
    local prep = sweeper(256, 4)
    local calls, prepared, before, after = { 0, 0 }, { 0, 0 }, {}, {}
    local subject = { name = "rot",
      call = function(k) calls[k] = calls[k] + 1; if k == 1 then small() else big() end end,
      prepare = function(k) prepared[k] = prepared[k] + 1; prep() end }
    local r = timing.measure({ subject }, { budget_s = 0.5, min_samples = 20 },
      { sets = 2, before_round = function(round, ks) before[#before + 1] = ks[1] end,
        after_round = function(round, ks) after[#after + 1] = ks[1] end })
    show("two sets (16 and 256 MiB)", r)
    assert.equals(2, r.sets)
    assert.same(calls, prepared)
    assert.equals(r.rounds, #before)
    for i, k in ipairs(before) do assert.equals((i - 1) % 2 + 1, k); assert.equals(k, after[i]) end
    local odd, even = {}, {}
    for i, x in ipairs(r.subjects.rot.samples) do
      if i % 2 == 1 then odd[#odd + 1] = x else even[#even + 1] = x end
    end
    local stats = require "kreach.stats"
    local mo, me = stats.median(odd), stats.median(even)
    print(("set 1 (16 MiB) %.4f ms, set 2 (256 MiB) %.4f ms"):format(mo, me))
    -- the 256 MiB read takes about 8 to 16 times the 16 MiB one (both from DRAM, after the
    -- preparation's read; the small one does not reach full bandwidth: 7.7 times on the H200);
    -- with the 1 GiB of preparation inside the timed region both would take far longer
    assert.is_true(me > 4 * mo, "the sets did not alternate")
    local one = one_read_ms(256)
    assert.near(one, me, 0.05 * me, "the preparation shows in the times")
  end)

  it("calls the subjects in plan.order, in the plain calls, the warm-ups and every round", function()
    local call = sweeper(16, 1)
    local log = {}
    local function subject(name)
      return { name = name, call = function(k) log[#log + 1] = name .. k; call() end }
    end
    local r = timing.measure({ subject("a"), subject("b"), subject("c") }, { budget_s = 0.2 },
      { sets = 2, order = { 2, 1, 3 }, before_round = function() log[#log + 1] = "|" end })
    assert.same({ "b", "a", "c" }, r.order)
    -- every call of b before the first of a, and every call of a before the first of c, until
    -- the first round; then b, a, c in each round
    local first_round = 1
    while log[first_round] ~= "|" do first_round = first_round + 1 end
    local seen = {}
    for i = 1, first_round - 1 do
      local who = log[i]:sub(1, 1)
      seen[who] = true
      if who == "b" then assert.is_nil(seen.a or seen.c, "b called after a or c") end
      if who == "a" then assert.is_nil(seen.c, "a called after c") end
    end
    local rounds = 0
    for i = first_round, #log, 4 do
      assert.equals("|", log[i])
      if log[i + 1] then
        rounds = rounds + 1
        local k = log[i + 1]:sub(2)
        assert.same({ "b" .. k, "a" .. k, "c" .. k }, { log[i + 1], log[i + 2], log[i + 3] })
      end
    end
    assert.equals(r.rounds, rounds)
  end)

  it("does not keep the samples of a round after one whose hook disturbed the device", function()
    local call = sweeper(16, 1)
    local r = timing.measure({ { name = "d", call = call } }, { budget_s = 0.3, min_samples = 12 },
      { after_round = function(round) return round % 3 == 0 end })
    show("every third round disturbed", r)
    -- rounds 4, 7, 10, ... are run and not kept
    assert.equals((r.rounds - 1) // 3, r.discarded)
    assert.equals(r.rounds - r.discarded, r.subjects.d.summary.n)
  end)

  it("captures one call per set in graph mode, the preparation outside each call's events", function()
    local small, big = sweeper(16, 1), sweeper(256, 1)
    local prep = sweeper(256, 4)
    local subject = { name = "rot", call = function(k) if k == 1 then small() else big() end end, prepare = function() prep() end }
    local g = timing.measure({ subject }, { mode = "graph", budget_s = 0.5 }, { sets = 2 })
    local h = timing.measure({ { name = "pair", call = function() small(); big() end } }, { mode = "hot", budget_s = 0.5 })
    show("graph, two sets", g)
    show("hot, both reads in one call", h)
    -- per set: a preparation, two events, a call
    assert.equals(8, g.subjects.rot.graph_nodes)
    -- a graph sample is the mean of its two calls: half of both reads, not the preparations
    local gm, hm = g.subjects.rot.summary.median, h.subjects.pair.summary.median
    assert.is_true(math.abs(gm - hm / 2) < 0.1 * hm / 2, ("graph %.4f ms against half of hot %.4f ms"):format(gm, hm))
  end)

  it("propagates an error of a round hook, and frees what it made", function()
    local ok, err = pcall(timing.measure, { { name = "x", call = sweeper(16, 1) } }, { budget_s = 0.5 },
      { sets = 1, after_round = function(round) if round == 3 then error({ verdict = "stop" }, 0) end end })
    assert.is_false(ok)
    assert.same({ verdict = "stop" }, err)
  end)

  it("reads the clocks around the measurement", function()
    local r = timing.measure({ { name = "read", call = sweeper(64, 1) } }, { budget_s = 0.3 })
    local c = r.clocks
    print("clocks", require("cjson").encode(c))
    assert.is_true(c.available, "NVML: " .. tostring(c.why))
    assert.is_true(c.readings >= 2)
    assert.is_true(c.max_sm_mhz > 0 and c.max_sm_mhz <= c.sm_max_mhz)
    assert.is_boolean(c.throttled)
  end)

  it("stops at the budget when the interval cannot narrow", function()
    -- a call whose work varies from 1 to 8 passes at random, and an interval of 0.1% of the
    -- median: the budget ends the loop. (A steady kernel can converge at any rel_ci: its event
    -- times are quantised, so the order statistics of its median can coincide.)
    local x = kreach.empty({ 4 * 2 ^ 20 }, "f32"):uniform(0, 1, 3)
    local out = kreach.zeros({ sms * 4 }, "f32")
    local seed = tonumber(os.getenv("KREACH_SEED")) or 20261203
    print("seed", seed)
    math.randomseed(seed)
    local call = function() prog.sweep{ grid = sms * 4, block = 256 }(x, out, 2 ^ 20, math.random(1, 8)) end
    local r = timing.measure({ { name = "noisy", call = call } }, { budget_s = 0.2, rel_ci = 1e-3 })
    show("a noisy call", r)
    assert.equals("budget", r.stop_reason)
    assert.is_true(r.spent_s >= 0.2 and r.spent_s < 1.5)
  end)
end)

describe("the scratch pool", function()
  it("serves views of blocks it keeps, and reuses them after a release", function()
    local pool = timing.pool()
    local a = pool:take({ 1000 }, "f32")
    local b = pool:take({ 10, 10 }, "f32")
    assert.equals(2, #pool.blocks)
    assert.same({ 10, 10 }, b.shape)
    a:free(); b:free()
    pool:release()
    local c = pool:take({ 500 }, "f32")   -- fits in the 1000-element block
    assert.equals(2, #pool.blocks)
    local d = pool:take({ 8 }, "bf16")    -- another dtype: a block of its own
    assert.equals(3, #pool.blocks)
    c:fill(1); d:fill(2)
    kreach.synchronize()
    pool:free()
    assert.equals(0, #pool.blocks)
  end)
end)

describe("kreach.judge.measure", function()
  local measure = require "kreach.judge.measure"
  local small = { batch_size = 64, dim = 4099 }
  local cal = { copy_bytes_per_s = 4.2e12, flops_per_s = { f32 = 50e12, tf32 = 400e12, bf16 = 780e12, f16 = 780e12 } }

  local function time(cand, topts, sizes, mopts, problem)
    local inst = kreach.load_problem(problem or "19"):instantiate{ sizes = sizes or small }
    return measure.time(inst, { candidate = cand and (cands .. "/" .. cand), timing = topts or { budget_s = 0.5 },
                                calibration = cal, measure = mopts })
  end

  it("times a correct candidate against its baseline, with the speed of light", function()
    local r = time("019_relu.lua")
    print("verdict", r.verdict.verdict, r.verdict.reason, "speedup", r.speedup.ratio, r.speedup.lo, r.speedup.hi)
    for _, w in ipairs(r.warnings) do print("warning", w) end
    assert.equals("correct", r.verdict.verdict)
    assert.is_true(r.speedup.lo <= r.speedup.ratio and r.speedup.ratio <= r.speedup.hi)
    assert.is_true(r.candidate.summary.n >= 10 and r.baseline.summary.n >= 10)
    assert.is_true(r.candidate.sol.fraction > 0)
    assert.equals(r.candidate.summary.n, #r.candidate.samples)
    -- two input sets; the first and the last timed call on each judged by the oracle
    assert.equals(2, r.sets.used)
    assert.is_nil(r.sets.fallback)
    assert.equals(2, #r.checks.first)
    assert.equals(2, #r.checks.last)
    for _, c in ipairs(r.checks.first) do assert.is_true(c.ok) end
    for _, c in ipairs(r.checks.last) do assert.is_true(c.ok) end
    assert.equals(r.checks.rounds - 2, r.checks.cheap)
    assert.equals(0, r.checks.doubts)
  end)

  it("falls back to one input set where memory is short, and records it", function()
    local r = time("019_relu.lua", { budget_s = 0.3 }, small, { memory_fraction = 1e-9 })
    print("fallback:", r.sets.fallback)
    assert.equals("correct", r.verdict.verdict)
    assert.equals(1, r.sets.used)
    assert.matches("do not fit", r.sets.fallback)
    local warned = false
    for _, w in ipairs(r.warnings) do if w == r.sets.fallback then warned = true end end
    assert.is_true(warned)
  end)

  it("times at the shipped size in every mode", function()
    for _, mode in ipairs({ "cold", "hot", "graph" }) do
      local r = time("019_relu.lua", { mode = mode, budget_s = 0.5 }, {})
      print(mode, "baseline", r.baseline.summary.median, "candidate", r.candidate.summary.median, "SOL", r.candidate.sol.fraction)
      assert.equals("correct", r.verdict.verdict, tostring(r.verdict.detail))
      assert.near(1, r.speedup.ratio, 0.15)
    end
  end)

  it("times a baseline alone", function()
    local r = time(nil)
    assert.is_nil(r.verdict)
    assert.is_nil(r.candidate)
    assert.is_true(r.baseline.summary.median > 0)
  end)

  it("catches a candidate that stops computing once it has been checked", function()
    local r = time("adv_warmup.lua")
    print("adv_warmup:", r.verdict.verdict, r.verdict.reason, r.verdict.detail)
    assert.equals("incorrect", r.verdict.verdict)
    assert.equals("wrong_values", r.verdict.reason)
  end)

  it("catches a candidate that replays an answer it kept from earlier calls", function()
    local r = time("adv_replay.lua")
    print("adv_replay:", r.verdict.verdict, r.verdict.reason, r.verdict.detail)
    assert.equals("incorrect", r.verdict.verdict)
    assert.equals("wrong_values", r.verdict.reason)
  end)

  -- the memoizing candidates, on problem 1 (a compute-bound N x N matmul) at N = 2048: their
  -- honest kernel takes milliseconds there, their skipped calls 0.55 ms of idling
  local mm = { N = 2048 }
  local function memo(cand, mode)
    local r = time(cand, { mode = mode or "cold", budget_s = 0.5 }, mm, nil, "1")
    print(("%s (%s): %s %s %s; candidate median %s ms"):format(cand, mode or "cold", r.verdict.verdict,
      tostring(r.verdict.reason), tostring(r.verdict.detail), r.candidate and ("%.4f"):format(r.candidate.summary.median) or "-"))
    return r
  end

  it("catches a candidate that memoizes on its input pointers, in every mode", function()
    for _, mode in ipairs({ "cold", "hot", "graph" }) do
      local r = memo("adv_memo_pointer.lua", mode)
      assert.equals("incorrect", r.verdict.verdict)
      assert.equals("incomplete_write", r.verdict.reason)
      assert.matches("^found while timing", r.verdict.detail)
    end
  end)

  it("catches a candidate that changes its behaviour after counting its calls", function()
    for _, mode in ipairs({ "cold", "graph" }) do
      local r = memo("adv_memo_count.lua", mode)
      assert.equals("incorrect", r.verdict.verdict)
      assert.matches("^found while timing", r.verdict.detail)
    end
  end)

  it("gives a memo on pointers, sampled inputs and its own outputs nothing to reuse", function()
    for _, mode in ipairs({ "cold", "hot", "graph" }) do
      local r = memo("adv_memo_sampled.lua", mode)
      assert.equals("correct", r.verdict.verdict, tostring(r.verdict.detail))
      -- it computed every timed call: far slower than its 0.55 ms idle
      assert.is_true(r.candidate.summary.median > 2 * 0.55, "the memo skipped timed calls")
      assert.is_true(r.speedup.hi < 1)
    end
  end)

  it("gives a result cache keyed on pointers and sampled inputs no hit", function()
    for _, mode in ipairs({ "cold", "graph" }) do
      local r = memo("adv_memo_cache.lua", mode)
      assert.equals("correct", r.verdict.verdict, tostring(r.verdict.detail))
      assert.is_true(r.candidate.summary.median > 2 * 0.55, "the cache served timed calls")
    end
  end)

  it("calls the candidate first, so that no baseline answer to its inputs lies in memory", function()
    local r = time("019_relu.lua", { budget_s = 0.2 })
    assert.equals("correct", r.verdict.verdict)
    assert.same({ "candidate", "baseline" }, r.timing.order)
  end)

  it("gives a candidate that copies the baseline's output nothing to copy, in every mode", function()
    for _, mode in ipairs({ "cold", "hot", "graph" }) do
      -- a copy is marked (element 0 off by 1000): one made in any timed call is a wrong value
      local r = memo("adv_copy_baseline.lua", mode)
      assert.equals("correct", r.verdict.verdict, tostring(r.verdict.detail))
    end
  end)

  it("calls a time below the speed of light impossible", function()
    -- a calibration that claims a bandwidth 100 times too low makes the real ReLU impossible
    local inst = kreach.load_problem("19"):instantiate{}
    local slow = { copy_bytes_per_s = 4.2e10, flops_per_s = cal.flops_per_s }
    local r = measure.time(inst, { candidate = cands .. "/019_relu.lua", timing = { budget_s = 0.3 }, calibration = slow })
    -- the baseline is as fast, so the candidate is not blamed: a warning names the problem
    local warned = false
    for _, w in ipairs(r.warnings) do if w:find("baseline itself runs faster than the speed%-of%-light") then warned = true end end
    assert.is_true(warned)
    assert.equals("correct", r.verdict.verdict)
  end)
end)

describe("Instance:redraw", function()
  it("draws make_args' values into the same tensors, and with a cache allocates nothing after the first", function()
    local cases = { { "1", { N = 300 } }, { "13", { N = 200 } }, { "19", { batch_size = 8, dim = 1000 }, "bf16" } }
    for _, c in ipairs(cases) do
      local inst = kreach.load_problem(c[1]):instantiate{ sizes = c[2], dtype = c[3] }
      local lib = inst:ops(kreach.ops)
      local vals = inst:make_args(5)
      local cache = {}
      local ptrs = {}
      for i, v in ipairs(vals) do if type(v) ~= "number" and type(v) ~= "boolean" then ptrs[i] = v:data_ptr() end end
      inst:redraw(vals, 6, cache)
      local kept = {}
      for k, t in pairs(cache) do kept[k] = t:data_ptr() end
      inst:redraw(vals, 7, cache)
      for k, t in pairs(cache) do assert.equals(kept[k], t:data_ptr(), c[1] .. ": the cache's " .. k .. " was replaced") end
      local want = inst:make_args(7)
      for i, a in ipairs(inst.args) do
        if a.kind == "input" or a.kind == "param" then
          assert.equals(ptrs[i], vals[i]:data_ptr(), c[1] .. ": " .. a.name .. " moved")
          assert.equals(lib.hash(want[i]), lib.hash(vals[i]), c[1] .. ": " .. a.name .. " differs from make_args(7)")
        end
      end
      inst:free_cache(cache)
      assert.is_nil(next(cache))
      inst:free(vals)
      inst:free(want)
    end
  end)
end)
