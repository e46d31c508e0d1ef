-- kreach.judge.timing: the timing engine's policy (docs/timing.md). Each sample is one call of a
-- subject, timed with CUDA events on the harness stream. Before it, outside the timed region,
-- the subject prepares it (the caller poisons the call's outputs), and then what the timing mode
-- does (kreach.judge.modes: one table a mode, judge/modes/<name>.lua): cold (the default) flushes
-- the L2, hot does nothing more, graph captures one call on each input set in a CUDA graph and
-- replays it.
-- The calls rotate over the caller's input sets (plan.sets), and the caller may run hooks
-- before and after each sampling round (new values into the round's inputs, checks of its
-- outputs), outside the timed region. In cold and hot modes a gate holds the stream while
-- the events and the call are queued, so that the call runs right after its first event and
-- the host's launch time stays out of the interval (a call that waits for the GPU from the
-- host makes the gate time out; that subject is then sampled without it). Each subject is
-- warmed up until its times settle; then subjects are sampled in turn (A B A B) until every
-- subject's 95% interval of the median is narrower than rel_ci of it, or the time budget is
-- spent (at least min_samples each). The clocks are read around and during the measurement.
-- Every option has a default in M.DEFAULTS, and the options used are returned with the results.
local core = require "kreach.core"
local ctiming = require "kreach.core.timing"
local tensor = require "kreach.core.tensor"
local event = require "kreach.core.event"
local kinds = require "kreach.kinds"
local jpolicy = require "kreach.judge.policy"
local modes = require "kreach.judge.modes"
local stats = require "kreach.stats"

local M = {}

M.DEFAULTS = jpolicy.TIMING
M.options = jpolicy.timing
M.MODES = kinds.set(kinds.MODES)


-- The device operations the engine uses, each the GPU's by default. A plan's `device` table
-- (measure's plan) replaces any of them, so that the engine's protocol (the order of
-- preparations, flushes, gates, events and calls, the rounds and their hooks, the stopping
-- rule, the speedup) runs without a GPU: tests/lua/protocol_timing_spec.lua gives it events
-- that read a clock its subjects advance.
M.DEVICE = {
  event = event.new,              -- () -> an event: :record(), :elapsed_ms(later), :free()
  gate = ctiming.gate,            -- () -> the stream's gate: :hold(ms), :release(), :timeouts(), :free()
  flush = ctiming.flush,          -- (flush_factor) -> bytes written (cold mode's L2 flush)
  clocks = ctiming.clocks,        -- () -> a reading of the clocks, or nil and why
  reason_names = ctiming.reason_names,
  graph_begin = ctiming.graph_begin, graph_end = ctiming.graph_end, graph_abort = ctiming.graph_abort,
  synchronize = core.synchronize,
  now = core.now,                 -- () -> seconds (the budgets' clock)
}

-- device(over) -> M.DEVICE with the operations `over` gives in place of the GPU's
local function device(over)
  if over == nil then return M.DEVICE end
  local d = {}
  for k, v in pairs(M.DEVICE) do d[k] = v end
  for k, v in pairs(over) do
    if M.DEVICE[k] == nil then error(("timing.measure: plan.device has no operation '%s'"):format(tostring(k)), 3) end
    d[k] = v
  end
  return d
end


-- ---- scratch memory without allocations in the timed region ----
-- A pool hands out views of device blocks it keeps; a view's :free() drops the view only, so
-- no cudaFree (which synchronises the device) happens inside a call, and a captured graph's
-- memory stays valid. :release() makes every block available again (between calls).

local Pool = {}
Pool.__index = Pool

function M.pool()
  return setmetatable({ blocks = {}, bytes = 0 }, Pool)
end

function Pool:take(shape, dtype)
  dtype = dtype or "f32"
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local best
  for _, b in ipairs(self.blocks) do
    if not b.busy and b.dtype == dtype and b.n >= n and (not best or b.n < best.n) then best = b end
  end
  if not best then
    best = { dtype = dtype, n = math.max(n, 1), t = tensor.empty({ math.max(n, 1) }, dtype) }
    self.blocks[#self.blocks + 1] = best
    self.bytes = self.bytes + best.n * tensor.dtype_size(dtype)
  end
  best.busy = true
  if n == 0 then return tensor.empty(shape, dtype) end
  return best.t:narrow(1, 1, n):view(shape)
end

function Pool:release()
  for _, b in ipairs(self.blocks) do b.busy = false end
end

function Pool:free()
  for _, b in ipairs(self.blocks) do if b.t:is_live() then b.t:free() end end
  self.blocks, self.bytes = {}, 0
end

-- ---- clocks ----

local Clocks = {}
Clocks.__index = Clocks

local function new_clocks(dev)
  local c = setmetatable({ dev = dev, readings = 0, reason_bits = 0, throttled = false }, Clocks)
  local first, why = dev.clocks()
  if not first then
    c.available, c.why = false, why
  else
    c.available = true
    c:add(first)
    c.before = first
  end
  return c
end

function Clocks:add(r)
  r = r or self.dev.clocks()
  if not r then return end
  self.readings = self.readings + 1
  self.min_sm_mhz = math.min(self.min_sm_mhz or math.huge, r.sm_mhz)
  self.max_sm_mhz = math.max(self.max_sm_mhz or 0, r.sm_mhz)
  self.sm_max_mhz = r.sm_max_mhz
  self.reason_bits = self.reason_bits | r.reason_bits
  if r.throttled then self.throttled = true end
  if r.temperature_c then self.max_temperature_c = math.max(self.max_temperature_c or 0, r.temperature_c) end
  if r.power_w then self.max_power_w = math.max(self.max_power_w or 0, r.power_w) end
  self.last = r
end

-- A plain table for results: the readings' range, the union of the reasons, throttled or not.
function Clocks:report()
  if not self.available then return { available = false, why = self.why } end
  return { available = true, readings = self.readings, before = self.before, after = self.last,
           min_sm_mhz = self.min_sm_mhz, max_sm_mhz = self.max_sm_mhz, sm_max_mhz = self.sm_max_mhz,
           reasons = self.dev.reason_names(self.reason_bits & ~1), -- gpu_idle between samples is normal
           throttled = self.throttled, max_temperature_c = self.max_temperature_c, max_power_w = self.max_power_w }
end

-- ---- one sample of a subject, by mode ----

local function events(n, dev)
  local ev = {}
  for i = 1, n do ev[i] = dev.event() end
  return ev
end

local function free_events(ev)
  for _, e in ipairs(ev or {}) do e:free() end
end

local Sampler = {}
Sampler.__index = Sampler

local function new_sampler(o, sets, dev)
  local mode = modes.get(o.mode)
  local self = setmetatable({ o = o, mode = mode, sets = sets, dev = dev, ev = events(2, dev), timeouts = 0 }, Sampler)
  if o.gate and mode.gated then self.gate = dev.gate() end
  return self
end

-- Times one sample of subject s on input set `set`, as the mode takes it (its sample: one call
-- of s, or in graph mode one replay of its graph, one call on each set). Before each call,
-- outside the timed region: s.prepare(set) (the caller poisons the outputs there), then what
-- the mode adds (cold: the L2 flush). Returns the milliseconds of the sample.
function Sampler:sample(s, set)
  local o, dev = self.o, self.dev
  -- a subject in another process (PyTorch's worker) times itself, with the same flush
  if s.sample then
    if s.prepare then s.prepare(set) end
    if self.mode.flush and not self.flush_bytes then self.flush_bytes = dev.flush(o.flush_factor) end
    return s.sample(set, { flush_bytes = self.mode.flush and self.flush_bytes or nil })
  end
  return self.mode.sample(self, s, set)
end

-- The call of subject s on set `set` between the sampler's two events, under the gate where
-- there is one (the modes' sample uses it). Returns its milliseconds.
function Sampler:timed_call(s, set)
  local o, ev = self.o, self.ev
  local gate = not s.ungated and self.gate
  -- while the gate holds, no finalizer may run: a tensor collected there is freed with
  -- cudaFree, which waits for the device, and so for the gate
  local gc = gate and collectgarbage("isrunning")
  if gc then collectgarbage("stop") end
  if gate then gate:hold(o.gate_ms) end
  ev[1]:record()
  local ok, err = pcall(s.call, set)
  if ok then ev[2]:record() end
  if gate then gate:release() end
  if gc then collectgarbage("restart") end
  if not ok then error(err, 0) end
  local ms = ev[1]:elapsed_ms(ev[2])
  if gate then
    local n = gate:timeouts()
    -- the call waited for the GPU from the host (it synchronised), so the gate opened only
    -- at its timeout: this subject is sampled without the gate from now on
    if n > self.timeouts then self.timeouts = n; s.ungated = true end
  end
  return ms
end

local function median_of(xs, from, to)
  local w = {}
  for i = from, to do w[#w + 1] = xs[i] end
  return stats.median(w)
end

-- Warm-up: calls (timed like samples, on the sets in turn) until the times settle. Returns
-- the times and whether they settled.
function Sampler:warmup(s)
  local o, now = self.o, self.dev.now
  local times, t0 = {}, now()
  local settled = false
  local K = o.settle_window
  while #times < o.warmup_max do
    times[#times + 1] = self:sample(s, #times % self.sets + 1)
    local n = #times
    if n >= math.max(o.warmup_min, 2 * K) then
      local last, prev = median_of(times, n - K + 1, n), median_of(times, n - 2 * K + 1, n - K)
      if math.abs(last - prev) <= o.settle_rel * prev then settled = true; break end
    end
    if now() - t0 >= o.warmup_s and #times >= o.warmup_min then break end
  end
  return times, settled
end

-- round_sets(mode, round, sets) -> the input sets a sampling round uses: the mode's round_sets
-- (graph mode: all of them, a replay calls each once), else one in turn (cold and hot modes).
local function round_sets(mode, round, sets)
  local m = modes.get(mode)
  if m.round_sets then return m.round_sets(round, sets) end
  return { (round - 1) % sets + 1 }
end
M.round_sets = round_sets

-- stop_reason(subjects, spent_s, o) -> why the sampling ends now ("converged", "budget",
-- "max_samples"), or nil to go on. subjects: a list of { samples =, dropped = }. Every subject
-- still measured must have converged (kreach.stats.should_stop with the options: level,
-- rel_ci, the sample bounds and the budget) for "converged"; a dropped one counts as converged;
-- otherwise the reason of the last subject stopped for another reason.
function M.stop_reason(subjects, spent_s, o)
  local why, all_converged = nil, true
  for _, s in ipairs(subjects) do
    local stop, reason = stats.should_stop(s.samples, spent_s, o)
    if s.dropped then stop, reason = true, "converged" end
    if stop and reason ~= "converged" then why = reason end
    if not (stop and reason == "converged") then all_converged = false end
  end
  if all_converged then why = "converged" end
  return why
end

-- measure(subjects, opts, plan) -> result.
-- subjects: a list of { name =, call(set), prepare(set) } (functions):
--   call(set) queues one call on input set `set` (1..plan.sets); prepare(set), optional, runs
--   before each call outside the timed region (the caller poisons that call's outputs there,
--   so that nothing a call leaves behind can stand in for the next call's work).
--   A subject in another process has sample(set, {flush_bytes}) -> ms instead: it
--   prepares, flushes (the same bytes) and times the call itself (PyTorch's worker). An
--   optional subject that fails leaves the measurement (result.subjects[name].dropped says
--   why); any other failure ends it.
-- plan (optional): { sets = n (default 1), order = {indices}, before_round(round, sets),
--   after_round(round, sets), device = {operations in place of M.DEVICE's} }: order (default
--   1, 2, ...: the list's) is the
--   order in which the subjects are called, in the plain calls and warm-ups and in every round
--   (kreach.judge.measure calls the candidate first: while candidate code runs, no other subject has
--   left an answer to the round's inputs in device memory). A sampling round calls every
--   subject once on its sets (round_sets); before_round runs first and after_round last, both outside the timed
--   region (the caller draws new values into the round's inputs before, and checks the
--   outputs after; an error raised there ends the measurement and propagates). after_round
--   returns true when it disturbed the device (it allocated and freed large buffers, which
--   slows the next calls: 8% on problem 23 on the H200): the next round runs, with its hooks,
--   but its samples are not kept (counted in result.discarded). Warm-up calls rotate over the
--   sets too, without the round hooks.
-- With two subjects or more, the first is the baseline and the second (not optional) the candidate, and the result
-- has speedup = median(baseline) / median(candidate) with its bootstrap interval.
-- The result: { options, mode, sets, rounds, discarded, spent_s, stop_reason, flush_bytes,
--   clocks, gated, subjects = { [name] = { samples, warmup = { times, settled }, summary,
--   graph_nodes, ungated (true: its gate timed out, so it was sampled without one) } },
--   order = { names, in the order they were called }, speedup = { ratio, lo, hi } }
function M.measure(subjects, over, plan)
  local o = M.options(over)
  plan = plan or {}
  local sets = math.tointeger(plan.sets or 1)
  if not sets or sets < 1 then error("timing.measure: plan.sets must be a positive integer", 2) end
  local run = subjects -- in the order they are called
  if plan.order then
    run = {}
    local seen = {}
    for _, i in ipairs(plan.order) do
      if not subjects[i] or seen[i] then error("timing.measure: plan.order must list each subject's index once", 2) end
      seen[i] = true
      run[#run + 1] = subjects[i]
    end
    if #run ~= #subjects then error("timing.measure: plan.order must list each subject's index once", 2) end
  end
  local dev = device(plan.device)
  local sampler = new_sampler(o, sets, dev)
  local clocks = new_clocks(dev)
  local res = { options = o, mode = o.mode, sets = sets, subjects = {}, order = {} }
  local ok, err = pcall(function()
    for _, s in ipairs(run) do
      if type(s.name) ~= "string" or type(s.call) ~= "function" then error("timing.measure: a subject is { name =, call = }", 0) end
      -- a plain call on each set first, so that compiles, module loads and pool blocks happen
      -- outside the capture (graph) and the gate (cold, hot): each can wait for the device
      local cok, cerr = pcall(function()
        for k = 1, sets do
          if s.prepare then s.prepare(k) end
          s.call(k)
        end
      end)
      if not cok then
        if not s.optional then error(cerr, 0) end
        s.dropped = tostring(cerr)
      end
      dev.synchronize()
      if sampler.mode.setup then sampler.mode.setup(s, sets, dev) end
      local wok, times, settled = true, {}, false
      if not s.dropped then wok, times, settled = pcall(sampler.warmup, sampler, s) end
      if not wok then
        if not s.optional then error(times, 0) end
        s.dropped, times, settled = tostring(times), {}, false
      end
      s.samples = {}
      res.subjects[s.name] = { warmup = { times = times, settled = settled }, graph_nodes = s.graph_nodes }
      res.order[#res.order + 1] = s.name
    end
    local t0 = dev.now()
    local rounds, next_check, why = 0, o.min_samples, nil
    local disturbed, discarded = false, 0
    while true do
      rounds = rounds + 1
      local rs = round_sets(o.mode, rounds, sets)
      if plan.before_round then plan.before_round(rounds, rs) end
      for _, s in ipairs(run) do
        if not s.dropped then
          local ok_s, ms = pcall(sampler.sample, sampler, s, rs[1])
          if not ok_s then
            -- a subject that may fail on its own (PyTorch's) leaves the measurement; any
            -- other failure ends it
            if not s.optional then error(ms, 0) end
            s.dropped = tostring(ms)
          elseif not disturbed then
            s.samples[#s.samples + 1] = ms
          end
        end
      end
      if disturbed then discarded = discarded + 1 end
      disturbed = false
      if plan.after_round then disturbed = plan.after_round(rounds, rs) == true end
      if rounds % o.clock_every == 0 and clocks.available then clocks:add() end
      local n = math.huge
      for _, s in ipairs(subjects) do if not s.dropped then n = math.min(n, #s.samples) end end
      local spent = dev.now() - t0
      -- the rule sorts the samples: check it on a schedule that grows with n, not every round
      if n >= next_check or spent >= o.budget_s or n >= o.max_samples then
        next_check = n + math.max(1, n // 10)
        why = M.stop_reason(subjects, spent, o)
        if why then break end
      end
    end
    res.rounds, res.discarded, res.spent_s, res.stop_reason = rounds, discarded, dev.now() - t0, why
  end)
  if sampler.mode.teardown then
    for _, s in ipairs(subjects) do sampler.mode.teardown(s) end
  end
  free_events(sampler.ev)
  if sampler.gate then sampler.gate:free() end
  if not ok then error(err, 0) end
  res.gated = sampler.gate ~= nil
  res.flush_bytes = sampler.mode.flush and sampler.flush_bytes or nil
  if clocks.available then clocks:add() end
  res.clocks = clocks:report()
  for _, s in ipairs(subjects) do
    local r = res.subjects[s.name]
    r.samples = s.samples
    r.ungated = s.ungated
    r.dropped = s.dropped
    s.ungated, s.dropped = nil, nil
    r.summary = #s.samples > 0 and stats.summary(s.samples, o.level) or nil
  end
  if #subjects >= 2 and not subjects[2].optional then res.speedup = M.speedup(subjects[1], subjects[2], o) end
  return res
end

-- speedup(baseline, candidate, o) -> { ratio, lo, hi, baseline = name, candidate = name }: the
-- baseline's time over the candidate's (above 1: the candidate is faster), from each subject's
-- { name =, samples = }, with its bootstrap interval (M.ratio).
function M.speedup(baseline, candidate, o)
  local r = M.ratio(baseline.samples, candidate.samples, o)
  r.baseline, r.candidate = baseline.name, candidate.name
  return r
end

-- ratio(a, b, opts) -> { ratio = median(a) / median(b), lo, hi }: the ratio of two subjects'
-- samples and its bootstrap interval, with the timing options' seed, resamples and level (the
-- speedup, and kreach.judge.measure's ratios against PyTorch).
function M.ratio(a, b, o)
  local ratio, lo, hi = stats.ratio_ci(a, b, { seed = o.seed, resamples = o.resamples, level = o.level })
  return { ratio = ratio, lo = lo, hi = hi }
end

-- ---- speed of light ----

-- The time below which no implementation can run, from a problem's compulsory bytes and its
-- flops against this device's measured ceilings (kreach calibrate): copy bandwidth, and the
-- fastest matrix rate that could compute at this dtype (f32 problems count TF32, since a
-- split-TF32 product can pass an f32 tolerance). Only where the mode flushes the L2 (cold) do
-- the bytes come from DRAM: in the others they may sit in L2, so only the flops bound holds.
-- sol(inst_like, median_ms, calibration, mode) -> { bound_ms, bytes_bound_ms, flops_bound_ms,
--   achieved_bytes_per_s, achieved_flops_per_s, fraction } or nil without a calibration.
function M.peak_flops(cal, dtype)
  local f = cal.flops_per_s or {}
  if dtype == "f32" then return math.max(f.f32 or 0, f.tf32 or 0) end
  if dtype == "bf16" then return f.bf16 end
  if dtype == "f16" then return f.f16 end
  if dtype == "f64" then return f.f64 end
  return nil
end

function M.sol(p, median_ms, cal, mode)
  if not cal then return nil end
  local bytes, flops = p.bytes or 0, p.flops or 0
  local r = {}
  if median_ms and median_ms > 0 then
    r.achieved_bytes_per_s = bytes / (median_ms * 1e-3)
    r.achieved_flops_per_s = flops / (median_ms * 1e-3)
  end
  if modes.get(mode or M.DEFAULTS.mode).flush and cal.copy_bytes_per_s and cal.copy_bytes_per_s > 0 then
    r.bytes_bound_ms = bytes / cal.copy_bytes_per_s * 1e3
  end
  local peak = M.peak_flops(cal, p.dtype)
  if peak and peak > 0 then r.flops_bound_ms = flops / peak * 1e3 end
  r.bound_ms = math.max(r.bytes_bound_ms or 0, r.flops_bound_ms or 0)
  if median_ms and median_ms > 0 and r.bound_ms > 0 then r.fraction = r.bound_ms / median_ms end
  return r
end

-- faster_than_light(summary, sol, margin) -> detail string when the whole interval of the
-- median lies more than `margin` below the bound (beyond noise), else nil.
function M.faster_than_light(summary, sol, margin)
  if not sol or not sol.bound_ms or sol.bound_ms <= 0 then return nil end
  local hi = summary.ci_hi or summary.max
  if hi < sol.bound_ms * (1 - margin) then
    return ("median %.4g ms (95%% interval up to %.4g ms) is below the speed-of-light bound %.4g ms by more than %d%% (bytes bound %s ms, flops bound %s ms)"):format(
      summary.median, hi, sol.bound_ms, math.floor(margin * 100 + 0.5),
      sol.bytes_bound_ms and ("%.4g"):format(sol.bytes_bound_ms) or "-",
      sol.flops_bound_ms and ("%.4g"):format(sol.flops_bound_ms) or "-")
  end
  return nil
end

return M
