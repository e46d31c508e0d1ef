-- kreach.timing.measure's protocol without a GPU: the real engine, given device operations
-- (plan.device, in place of kreach.timing.DEVICE's) that log what was done and events that read
-- a virtual clock its subjects advance. What a sample does, in which order; the order of the
-- subjects; the rounds, their input sets and hooks; the discarded rounds; the stopping rule at
-- the options' level; and the speedup's direction and interval, with answers worked out here.
-- (tests/lua/gpu/timing_spec.lua times real kernels.) Run on the host device by ctest (every
-- protocol_ spec is), though nothing here touches a device.
local timing = require "kreach.timing"

-- fake_device() -> device operations for plan.device, and the test's view of them:
-- t.clock (ms, advanced by the subjects' calls), t.log (what was done, in order).
local function fake_device()
  local t = { clock = 0, log = {}, flushes = 0 }
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
    now = function() return 0 end, -- the budgets never run out: the rule on the samples decides
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
