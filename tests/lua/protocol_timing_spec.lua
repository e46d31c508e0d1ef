-- kreach.judge.timing.measure's protocol without a GPU: the real engine, given device operations
-- (plan.device, in place of kreach.judge.timing.DEVICE's) that log what was done and events that read
-- a virtual clock its subjects advance. What a sample does, in which order; the order of the
-- subjects; graph mode's capture and replay; the rounds, their input sets and hooks; the
-- discarded rounds; the stopping rule at the options' level; and the speedup's direction and
-- interval, with answers worked out here.
-- (tests/lua/gpu/timing_spec.lua times real kernels.) Run on the host device by ctest (every
-- protocol_ spec is), though nothing here touches a device.
local timing = require "kreach.judge.timing"

-- fake_device() -> device operations for plan.device, and the test's view of them:
-- t.clock (ms, advanced by the subjects' calls), t.log (what was done, in order).
local function fake_device()
  local t = { clock = 0, log = {}, flushes = 0, now_s = 0 }
  local function log(s) t.log[#t.log + 1] = s end
  t.log_call = log
  t.device = {
    event = function()
      local e = {}
      function e.record(self) self.at = t.clock; log("record") end
      function e.elapsed_ms(self, later) return later.at - self.at end
      function e.free() end
      return e
    end,
    gate = function()
      return { hold = function() log("hold") end, release = function() log("release") end,
               timeouts = function() return 0 end, free = function() end }
    end,
    flush = function() t.flushes = t.flushes + 1; log("flush"); return 4096 end,
    clocks = function() return nil, "no clocks in this test" end,
    synchronize = function() end,
    -- the budgets' clock: 1 ms a reading, so that within these tests' few rounds the rule on
    -- the samples decides, and a rule that never stops ends on the budget (2 s by default)
    -- rather than looping for ever
    now = function() t.now_s = t.now_s + 1e-3; return t.now_s end,
  }
  return t
end

-- subject(t, name, times): a subject whose call on set k takes times(i, k) ms of the virtual
-- clock (i: its i-th call), and logs "<name> call k" and "<name> prepare k".
local function subject(t, name, times)
  local n = 0
  return { name = name,
    call = function(k) n = n + 1; t.log_call(("%s call %d"):format(name, k)); t.clock = t.clock + times(n, k) end,
    prepare = function(k) t.log_call(("%s prepare %d"):format(name, k)) end }
end
local function const(ms) return function() return ms end end

-- the log from the first round's hook on
local function rounds_log(t)
  for i, s in ipairs(t.log) do
    if s:match("^before ") then return { table.unpack(t.log, i) } end
  end
  return {}
end

describe("timing.measure's sample, on a logging device", function()
  local function one_round(mode, gate)
    local t = fake_device()
    local r = timing.measure({ subject(t, "a", const(1)) },
      { mode = mode, gate = gate, min_samples = 1, max_samples = 1, warmup_min = 1, warmup_max = 1 },
      { device = t.device, before_round = function(round, ks) t.log_call("before " .. round .. " " .. ks[1]) end,
        after_round = function(round, ks) t.log_call("after " .. round .. " " .. ks[1]) end })
    return r, rounds_log(t), t
  end

  it("in cold mode: prepares, flushes, holds the gate, then the call between its two events", function()
    local r, log = one_round("cold", true)
    assert.same({ "before 1 1", "a prepare 1", "flush", "hold", "record", "a call 1", "record", "release", "after 1 1" }, log)
    assert.equals(1, r.rounds)
    assert.equals(4096, r.flush_bytes)
    assert.is_true(r.gated)
    assert.same({ 1 }, r.subjects.a.samples)
  end)

  it("in hot mode: no flush", function()
    local r, log = one_round("hot", true)
    assert.same({ "before 1 1", "a prepare 1", "hold", "record", "a call 1", "record", "release", "after 1 1" }, log)
    assert.is_nil(r.flush_bytes)
  end)

  it("without the gate: nothing held", function()
    local r, log = one_round("cold", false)
    assert.same({ "before 1 1", "a prepare 1", "flush", "record", "a call 1", "record", "after 1 1" }, log)
    assert.is_false(r.gated)
  end)

  it("makes a plain call on each set, then the warm-up, before the first round", function()
    local t = fake_device()
    timing.measure({ subject(t, "a", const(1)) },
      { mode = "hot", gate = false, min_samples = 1, max_samples = 1, warmup_min = 2, warmup_max = 2 },
      { device = t.device, sets = 3, before_round = function(round) t.log_call("before " .. round) end })
    assert.same({ "a prepare 1", "a call 1", "a prepare 2", "a call 2", "a prepare 3", "a call 3",
                  -- the warm-up: sets 1, 2, timed like samples
                  "a prepare 1", "record", "a call 1", "record", "a prepare 2", "record", "a call 2", "record",
                  "before 1", "a prepare 1", "record", "a call 1", "record" }, t.log)
  end)
end)

describe("timing.measure's graph mode, on a logging device", function()
  -- graph_begin starts a capture: what events and calls do until graph_end is kept, and a
  -- launch of the graph does it again
  local function graph_device()
    local t = fake_device()
    local function later(f) if t.capture then t.capture[#t.capture + 1] = f else f() end end
    t.later = later
    local event = t.device.event
    t.device.event = function()
      local e = event()
      local record = e.record
      e.record = function(self) later(function() record(self) end) end
      return e
    end
    t.device.graph_begin = function() t.log_call("graph_begin"); t.capture = {} end
    t.device.graph_end = function()
      local ops = t.capture
      t.capture = nil
      t.log_call("graph_end")
      return { launch = function() t.log_call("launch"); for _, f in ipairs(ops) do f() end end,
               nodes = function() return #ops end, free = function() t.log_call("graph_free") end }
    end
    t.device.graph_abort = function() t.capture = nil end
    return t
  end

  it("captures each set's preparation, events and call once, and times a replay as the mean of its calls", function()
    local t = graph_device()
    local TIMES = { 1, 3 }
    local subj = { name = "g",
      call = function(k) t.later(function() t.log_call("g call " .. k); t.clock = t.clock + TIMES[k] end) end,
      prepare = function(k) t.later(function() t.log_call("g prepare " .. k) end) end }
    local r = timing.measure({ subj }, { mode = "graph", min_samples = 3, max_samples = 3, warmup_min = 1, warmup_max = 1 },
      { device = t.device, sets = 2, before_round = function(round, ks) t.log_call(("before %d %s"):format(round, table.concat(ks, ","))) end })
    -- per set: a preparation, two events, a call
    assert.equals(8, r.subjects.g.graph_nodes)
    -- a sample is the mean of the replay's two calls, 1 and 3 ms
    assert.same({ 2, 2, 2 }, r.subjects.g.samples)
    assert.is_nil(r.flush_bytes)
    assert.is_false(r.gated)
    local replay = { "launch", "g prepare 1", "record", "g call 1", "record", "g prepare 2", "record", "g call 2", "record" }
    local want = { "g prepare 1", "g call 1", "g prepare 2", "g call 2", "graph_begin", "graph_end" }
    for _, x in ipairs(replay) do want[#want + 1] = x end -- the warm-up
    for round = 1, 3 do
      want[#want + 1] = ("before %d 1,2"):format(round)
      for _, x in ipairs(replay) do want[#want + 1] = x end
    end
    want[#want + 1] = "graph_free"
    assert.same(want, t.log)
  end)
end)

describe("timing.measure's rounds, on a logging device", function()
  it("calls the subjects in plan.order in every round, rotating over the sets, the hooks around", function()
    local t = fake_device()
    local r = timing.measure({ subject(t, "base", const(2)), subject(t, "cand", const(1)) },
      { mode = "cold", min_samples = 5, max_samples = 5, warmup_min = 1, warmup_max = 1 },
      { device = t.device, sets = 2, order = { 2, 1 },
        before_round = function(round, ks) t.log_call(("before %d %s"):format(round, table.concat(ks, ","))) end,
        after_round = function(round, ks) t.log_call(("after %d %s"):format(round, table.concat(ks, ","))) end })
    assert.same({ "cand", "base" }, r.order)
    local calls = {}
    for _, s in ipairs(rounds_log(t)) do
      if s:match("^before") or s:match("^after") or s:match(" call ") then calls[#calls + 1] = s end
    end
    local want = {}
    for round = 1, 5 do
      local k = (round - 1) % 2 + 1
      for _, s in ipairs({ "before %d %d", "cand call %d", "base call %d", "after %d %d" }) do
        want[#want + 1] = s:find("%%d %%d") and s:format(round, k) or s:format(k)
      end
    end
    assert.same(want, calls)
    -- every call prepared just before it, on its own set
    local log = t.log
    for i, s in ipairs(log) do
      local who, k = s:match("^(%a+) call (%d)")
      if who then
        local j = i - 1
        while not log[j]:match(" prepare ") do j = j - 1 end
        assert.equals(("%s prepare %s"):format(who, k), log[j])
      end
    end
    assert.equals(5, r.rounds)
    assert.equals("max_samples", r.stop_reason)
  end)

  it("takes all the sets in each graph round", function()
    assert.same({ 1, 2 }, timing.round_sets("graph", 1, 2))
    assert.same({ 2 }, timing.round_sets("cold", 2, 2))
    assert.same({ 1 }, timing.round_sets("hot", 3, 2))
  end)

  it("keeps no sample of a round after one whose hook disturbed the device", function()
    local t = fake_device()
    -- the i-th call takes i ms: the samples kept say which rounds were kept
    local r = timing.measure({ subject(t, "a", function(i) return i end) },
      { mode = "hot", gate = false, min_samples = 6, max_samples = 6, warmup_min = 1, warmup_max = 1 },
      { device = t.device, after_round = function(round) return round == 2 or round == 3 end })
    -- calls 1 (plain) and 2 (warm-up) come first: round j is call j + 2. Rounds 3 and 4 follow
    -- disturbing rounds and are not kept; 6 samples need 8 rounds.
    assert.same({ 3, 4, 7, 8, 9, 10 }, r.subjects.a.samples)
    assert.equals(8, r.rounds)
    assert.equals(2, r.discarded)
  end)

  it("samples a subject whose call timed its gate out without the gate from then on", function()
    local t = fake_device()
    local timeouts = 0
    t.device.gate = function()
      return { hold = function() t.log_call("hold") end, release = function() t.log_call("release") end,
               timeouts = function() return timeouts end, free = function() end }
    end
    -- the subject's 3rd call (its first round's) waits for the GPU from the host: the gate times out
    local calls = 0
    local subj = { name = "sync", call = function() calls = calls + 1; if calls == 3 then timeouts = timeouts + 1 end; t.clock = t.clock + 1 end }
    local r = timing.measure({ subj }, { mode = "hot", min_samples = 3, max_samples = 3, warmup_min = 1, warmup_max = 1 },
      { device = t.device })
    assert.is_true(r.subjects.sync.ungated)
    -- held for the warm-up call and the first round's, not for the two rounds after
    local holds = 0
    for _, x in ipairs(t.log) do if x == "hold" then holds = holds + 1 end end
    assert.equals(2, holds)
    assert.same({ 1, 1, 1 }, r.subjects.sync.samples)
  end)

  it("lets an optional subject that fails leave, and goes on with the others", function()
    local t = fake_device()
    local n = 0
    local flaky = { name = "torch", optional = true,
      call = function() n = n + 1; if n == 4 then error("worker gone", 0) end; t.clock = t.clock + 3 end }
    local r = timing.measure({ subject(t, "base", const(2)), subject(t, "cand", const(1)), flaky },
      { mode = "hot", gate = false, min_samples = 5, max_samples = 50, warmup_min = 1, warmup_max = 1 },
      { device = t.device })
    -- its calls: 1 plain, 2 warm-up, then rounds 1 and 2 (3 ms each); round 3's failed
    assert.equals("worker gone", r.subjects.torch.dropped)
    assert.same({ 3 }, r.subjects.torch.samples)
    -- the others converge (constant times) as soon as they have a 95% interval: not at
    -- min_samples = 5 (n = 5 has none), at 6; the dropped one does not hold them
    assert.same({ "converged", 6 }, { r.stop_reason, r.rounds })
    assert.same({ 2, 2, 2 }, { r.speedup.ratio, r.speedup.lo, r.speedup.hi })
  end)

  it("lets an error raised in a hook end the measurement, as it was raised", function()
    local t = fake_device()
    local found = { verdict = "incorrect" }
    local ok, err = pcall(timing.measure, { subject(t, "a", const(1)) }, { warmup_max = 1 },
      { device = t.device, after_round = function(round) if round == 3 then error(found, 0) end end })
    assert.is_false(ok)
    assert.equals(found, err)
  end)
end)

describe("timing.measure's stopping rule and figures, known answers", function()
  -- eleven samples whose order statistics 2 and 10 lie 8 apart and 3 and 9 0.5 apart, median
  -- 100: n = 11 is 95%'s X(2)..X(10) and 90%'s X(3)..X(9) (binomial(11, 1/2): 12/2048 = 0.0059
  -- of the mass lies below X(2), 67/2048 = 0.0327 below X(3), 232/2048 = 0.113 below X(4)).
  -- Binary fractions, so that the virtual clock's sums and differences are exact.
  local ELEVEN = { 112, 96, 99.75, 99.875, 99.9375, 100, 100.0625, 100.125, 100.25, 104, 88 }
  local function eleven(i) return ELEVEN[(i - 1) % 11 + 1] end

  local function run(level, max_samples)
    local t = fake_device()
    -- the subject's first call is the plain one and its second the warm-up: the samples start
    -- at its third call
    return timing.measure({ subject(t, "a", function(i) return eleven(i - 2) end) },
      { mode = "hot", gate = false, min_samples = 11, max_samples = max_samples or 100, level = level,
        warmup_min = 1, warmup_max = 1 }, { device = t.device })
  end

  it("stops at 11 samples at level 0.90, where the interval is within 1% of the median", function()
    local r = run(0.90)
    assert.equals("converged", r.stop_reason)
    assert.equals(11, r.rounds)
    local s = r.subjects.a.summary
    assert.same({ 11, 100, 99.75, 100.25 }, { s.n, s.median, s.ci_lo, s.ci_hi })
  end)

  it("does not stop there at level 0.95, whose interval is 8 wide", function()
    local r = run(0.95, 11)
    assert.equals("max_samples", r.stop_reason)
    local s = r.subjects.a.summary
    assert.same({ 11, 100, 96, 104 }, { s.n, s.median, s.ci_lo, s.ci_hi })
    -- and the default level is 0.95
    local d = run(nil, 11)
    assert.equals("max_samples", d.stop_reason)
    assert.same({ 96, 104 }, { d.subjects.a.summary.ci_lo, d.subjects.a.summary.ci_hi })
  end)

  it("states the speedup as the baseline's time over the candidate's, with its interval", function()
    local t = fake_device()
    -- baseline 4 ms; candidate 1 and 3 ms in turn (median 2): a speedup of 2. Resampled, the
    -- candidate's median of 10 is 1 (6 or more ones: 37.7% of resamples), 2 (5 ones: 24.6%) or
    -- 3 (37.7%), so the resampled ratios are 4, 2 or 4/3, and the 2.5% and 97.5% points 4/3 and 4.
    local r = timing.measure({ subject(t, "baseline", const(4)), subject(t, "candidate", function(i) return i % 2 == 1 and 1 or 3 end) },
      { mode = "hot", gate = false, min_samples = 10, max_samples = 10, warmup_min = 1, warmup_max = 1 },
      { device = t.device, order = { 2, 1 } })
    assert.same({ 4, 2 }, { r.subjects.baseline.summary.median, r.subjects.candidate.summary.median })
    assert.equals(2, r.speedup.ratio)
    assert.near(4 / 3, r.speedup.lo, 1e-12)
    assert.equals(4, r.speedup.hi)
    assert.same({ "baseline", "candidate" }, { r.speedup.baseline, r.speedup.candidate })
  end)

  it("stops for convergence only when every subject has converged; a dropped one counts as converged", function()
    local o = timing.options{ min_samples = 10 }
    local steady, noisy = {}, {}
    for i = 1, 10 do steady[i] = 1; noisy[i] = i end
    assert.equals("converged", timing.stop_reason({ { samples = steady }, { samples = steady } }, 0, o))
    assert.is_nil(timing.stop_reason({ { samples = steady }, { samples = noisy } }, 0, o))
    assert.equals("budget", timing.stop_reason({ { samples = steady }, { samples = noisy } }, 2, o))
    assert.equals("converged", timing.stop_reason({ { samples = steady }, { samples = noisy, dropped = "gone" } }, 0, o))
    assert.is_nil(timing.stop_reason({ { samples = { 1, 1, 1 } }, { samples = steady } }, 5, o)) -- n < min_samples
    -- with the options' level: ELEVEN converges at 0.90, not at 0.95
    local e = {}
    for i = 1, 11 do e[i] = ELEVEN[i] end
    assert.equals("converged", timing.stop_reason({ { samples = e } }, 0, timing.options{ level = 0.9 }))
    assert.is_nil(timing.stop_reason({ { samples = e } }, 0, timing.options{ level = 0.95 }))
  end)

  it("refuses a device operation it does not know", function()
    assert.has_error(function() timing.measure({ { name = "a", call = function() end } }, {}, { device = { evnt = function() end } }) end,
      "timing.measure: plan.device has no operation 'evnt'")
  end)
end)
