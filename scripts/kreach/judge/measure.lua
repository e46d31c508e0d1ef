-- kreach.judge.measure: timing one problem instance in the worker process that owns the GPU: the
-- baseline alone (kreach bench), or the baseline and a candidate interleaved (kreach eval).
--
-- The timed calls give a candidate no stable world to memoize in (docs/timing.md):
--   * they rotate over several input sets (`sets`, default 2), each at addresses of its own;
--   * before every sampling round, new values are drawn into the round's inputs (the same
--     generators as the correctness trials, seeds no trial uses), so no call ever sees values
--     an earlier call saw, and an answer kept from an earlier call is wrong;
--   * before every call, its outputs are poisoned;
--   all of it outside the timed region, the same way in cold, hot and graph modes.
-- What the timed calls produce is checked: after every round the candidate's outputs are
-- compared with the baseline's on the same inputs (a cheap check), and the first call on each
-- set, the last call on each set and any call the cheap check doubts are judged against the
-- fp64 oracle with the correctness policy. The inputs' hashes are compared around every round.
-- A call that fails is `incorrect`, with a detail that says it was found while timing. Then
-- the times are set against the device's speed of light. The result is a plain table (it
-- crosses the worker pipe as JSON).
-- This module orchestrates; the parts are their own modules: the input sets (kreach.judge.sets),
-- the subjects timed (kreach.judge.subjects), the rounds' checks (kreach.judge.rounds), the
-- timing engine and its modes (kreach.judge.timing, kreach.judge.modes), and the candidate,
-- of any format, through its opened object (kreach.candidate).
local core = require "kreach.core"
local nvrtc = require "kreach.core.nvrtc"
local candidate = require "kreach.candidate"
local lua_format = require "kreach.candidate.lua"
local check = require "kreach.judge.check"
local jpolicy = require "kreach.judge.policy"
local kinds = require "kreach.kinds"
local modes = require "kreach.judge.modes"
local ops = require "kreach.ops"
local rounds = require "kreach.judge.rounds"
local sets_of = require "kreach.judge.sets"
local subjects_of = require "kreach.judge.subjects"
local timing = require "kreach.judge.timing"
local verdict = require "kreach.verdict"

local M = {}

M.DEFAULTS = jpolicy.MEASURE
M.options = jpolicy.measure

-- plan_sets(inst, mo, with_candidate, free_bytes, with_pytorch) -> how many input sets fit
-- (kreach.judge.sets.plan)
M.plan_sets = sets_of.plan

-- ---- the protocol's decisions ----

-- poisoned_before(who, mode): kreach.judge.subjects.poisoned_before
M.poisoned_before = subjects_of.poisoned_before

-- rechecked_sets(mode, sets, rounds) -> how many input sets' last timed calls are judged after
-- timing (sets 1 to this): the sets the rounds used (the mode's round_sets: one set a round in
-- cold and hot modes, so fewer than `sets` when there were fewer rounds; every set each round
-- in graph mode).
function M.rechecked_sets(mode, sets, nrounds)
  local used = 0
  for r = 1, math.min(sets, nrounds) do
    for _, k in ipairs(timing.round_sets(mode, r, sets)) do used = math.max(used, k) end
  end
  return used
end

-- torch_ratios(res, topts) -> the ratios against PyTorch of a result whose subjects (res.baseline,
-- res.candidate, res.pytorch, res.pytorch_compiled: { summary =, samples = }) were timed: the
-- candidate's speedup over eager and over compiled (PyTorch's time over the candidate's: above
-- 1, the candidate is faster; KernelBench's speedup is the one over eager), and the baseline's
-- time over eager's and compiled's (below 1: kreach's baseline is faster), each a
-- kreach.judge.timing.ratio with its bootstrap interval and `of` and `over` naming its subjects; nil
-- where a subject was not timed.
function M.torch_ratios(res, topts)
  local function ratio(a, b)
    local A, B = res[a], res[b]
    if not (A and B and A.summary and B.summary) then return nil end
    local r = timing.ratio(A.samples, B.samples, topts)
    r.of, r.over = a, b
    return r
  end
  return {
    baseline_vs_pytorch = ratio("baseline", "pytorch"),
    baseline_vs_compiled = ratio("baseline", "pytorch_compiled"),
    speedup_pytorch = ratio("pytorch", "candidate"),
    speedup_compiled = ratio("pytorch_compiled", "candidate"),
  }
end

-- ---- the measurement ----

-- How a .lua candidate's time is measured (the record's time_method; a .py candidate's is
-- kreach.candidate.python's).
M.LUA_METHOD = lua_format.METHOD

-- open_candidate(inst, opts, mode, phase, build, policy) -> the opened candidate
-- (kreach.candidate's open) and its format, or nil and a verdict
local function open_candidate(inst, opts, mode, phase, build, policy)
  local fmt = candidate.kind(opts.candidate)
  if fmt.needs_python then
    if not opts.python then error("measure.time: a KernelBench-format candidate needs the Python worker (opts.python)", 3) end
    if not mode.foreign then
      return nil, verdict.new("skipped", ("%s: time a KernelBench-format candidate in %s mode"):format(mode.no_candidate,
        kinds.words(modes.where("foreign"))))
    end
  end
  local cand, v = fmt.open(inst, opts.candidate, { phase = phase, build = build, arch = opts.arch, steps = policy.steps,
                                                   python = opts.python, source = opts.source })
  return cand, v, fmt
end

-- load_pytorch(res, inst, session, pyt, sets, warm_compiled) -> the PyTorch slots timed: its
-- model in the Python worker, eager and (pyt.compile) compiled, and its copies of the sets'
-- inputs (the same values, refreshed with every redraw); a failure here leaves PyTorch out of
-- the measurement, said once. warm_compiled: the candidate runs in the Python worker too, so a
-- compiled model (which compiles at its first call) is called now, before the candidate's seal.
local function load_pytorch(res, inst, session, pyt, sets, warm_compiled)
  res.pytorch_env = { torch = session.info.torch, cuda = session.info.cuda, cudnn = session.info.cudnn,
                      cudnn_tf32 = session.info.cudnn_tf32, compile = pyt.compile or false }
  local slots = {}
  local ok, why = session:load("eager", inst)
  if ok then slots[1] = { slot = "eager", name = "pytorch" } end
  if ok and pyt.compile then
    local cok, cwhy = session:load("compiled", inst, { compile = true })
    if cok then slots[2] = { slot = "compiled", name = "pytorch_compiled" }
    else res.warnings[#res.warnings + 1] = "torch.compile not timed: " .. cwhy end
  end
  if ok then ok, why = sets:mirror(session) end
  if not ok then
    res.pytorch_note = "PyTorch not timed: " .. tostring(why)
    slots = {}
  end
  for _, ts in ipairs(slots) do
    if ts.slot == "compiled" and warm_compiled then
      local r, cwhy = session:call(ts.slot, 1, {})
      if not r then
        res.warnings[#res.warnings + 1] = "torch.compile not timed: " .. tostring(cwhy)
        slots[2] = nil
      end
    end
  end
  return slots
end

-- record_times(res, m, inst, cal, topts): each subject's times into res[name] ({ summary,
-- samples, warmup, graph_nodes, sol = the speed of light, dropped, ungated }) with their
-- warnings
local function record_times(res, m, inst, cal, topts)
  local p = { bytes = inst.bytes, flops = inst.flops, dtype = inst.dtype }
  for _, name in ipairs(m.order) do
    local s = m.subjects[name]
    res[name] = { summary = s.summary, samples = s.samples, warmup = s.warmup, graph_nodes = s.graph_nodes,
                  sol = s.summary and timing.sol(p, s.summary.median, cal, topts.mode) or nil, dropped = s.dropped }
    if s.dropped then
      res.warnings[#res.warnings + 1] = ("%s left the measurement: %s"):format(name, s.dropped)
      if not s.summary then res[name] = nil end
    elseif not s.warmup.settled then
      res.warnings[#res.warnings + 1] = ("%s: the warm-up did not settle within %d calls or %g s"):format(name, topts.warmup_max, topts.warmup_s)
    end
    if s.ungated then
      res[name].ungated = true
      res.warnings[#res.warnings + 1] = ("%s: a call waited for the GPU from the host (it synchronises), so it was timed without the gate: its times include the host's launch time"):format(name)
    end
  end
end

-- conclude(res, m, cand, torch_slots, failure, o) -> res: the ratios against PyTorch, the
-- speed-of-light verdicts, how the candidate's time was measured, and its verdict (the first
-- failure of the rechecks, or faster than physically possible, or correct). o = { topts, mo, cal }
local function conclude(res, m, cand, torch_slots, failure, o)
  res.speedup = m.speedup
  -- against PyTorch: the candidate's speedup over eager and over compiled, and the baseline's
  -- time over eager's (the parity of kreach's baseline), each with its bootstrap interval
  for _, ts in ipairs(torch_slots) do
    if ts.ungated then
      res.warnings[#res.warnings + 1] = ("%s: %d calls took longer to queue than the gate held, so their times include some of the host's launch time"):format(ts.name, ts.ungated)
    end
  end
  if #torch_slots > 0 then res.ratios = M.torch_ratios(res, o.topts) end
  if not o.cal then res.warnings[#res.warnings + 1] = "no calibration of this device: no speed-of-light figures (kreach calibrate)" end
  local why = timing.faster_than_light(res.baseline.summary, res.baseline.sol, o.mo.sol_margin)
  if why then
    res.warnings[#res.warnings + 1] = "the baseline itself runs faster than the speed-of-light bound (the problem's bytes or flops are overstated?): " .. why
  end
  if cand then
    -- how the candidate's time was measured, in the record (evaluation's time_method)
    local method, warnings = cand:method()
    for _, w in ipairs(warnings) do res.warnings[#res.warnings + 1] = w end
    if res.candidate then res.candidate.method = method end
    local cwhy = not why and timing.faster_than_light(res.candidate.summary, res.candidate.sol, o.mo.sol_margin)
    if cwhy and not failure then failure = verdict.new("incorrect", "faster_than_physically_possible", cwhy) end
    res.verdict = failure or verdict.correct()
  end
  -- the timing result's sample lists are already in res.baseline/candidate
  for _, name in ipairs(m.order) do m.subjects[name].samples = nil; m.subjects[name].warmup = nil end
  return res
end

-- time(inst, opts) -> result. opts: candidate = path (nil: the baseline alone), source = its
-- bytes as the worker read them (nil: read when it is opened), timing = kreach.judge.timing
-- options, policy = kreach.judge.check policy overrides (thresholds of the checks), measure =
-- overrides of M.DEFAULTS, calibration = a stored calibration (or nil: no speed of light),
-- phase = a function of each phase's name, arch = NVRTC arch, python = the Python worker for a candidate that
-- runs there (kreach.candidate.python), pytorch = { session = a kreach.pytorch session,
-- compile = bool } (PyTorch timed beside the baseline: eager, and compiled), draw_salt = a
-- number added to the timed inputs' seeds (kreach.run.evaluate.draw_salt; result.sets.draw_salt),
-- device = { build = in place of kreach.core.nvrtc.build (a .lua candidate's compile), timing =
-- in place of kreach.judge.timing.DEVICE's operations } (nil: the GPU's;
-- tests/lua/protocol_measure_spec.lua runs the protocol on the host device with these).
-- result: { verdict (the candidate's, after timing; nil for a baseline alone), timing = the
-- kreach.judge.timing result, baseline = {summary, samples, sol}, candidate = {...}, speedup,
-- sets = {requested, used, per_set_bytes, fallback}, checks = {first, last, doubted, rounds,
-- cheap, doubts, oracle}, clocks, warnings }.
function M.time(inst, opts)
  opts = opts or {}
  local phase = opts.phase or function() end
  local dev = opts.device or {}
  local mo = jpolicy.measure(opts.measure)
  local topts = timing.options(opts.timing)
  local mode = modes.get(topts.mode)
  local policy = check.policy(opts.policy)
  local res = { problem = inst.problem.name, dtype = inst.dtype, sizes = inst.sizes, bytes = inst.bytes,
                flops = inst.flops, candidate_path = opts.candidate, options = { timing = topts, measure = mo },
                warnings = {} }
  local function fail(v) res.verdict = v; return res end

  local cand, fmt, v
  if opts.candidate then
    cand, v, fmt = open_candidate(inst, opts, mode, phase, dev.build or nvrtc.build, policy)
    if not cand then return fail(v) end
  end

  phase("inputs")
  local ops_lib = ops.get(false)
  local lib = inst:ops(ops_lib)
  local pyt = opts.pytorch
  if pyt and not mode.foreign then res.pytorch_note, pyt = mode.no_pytorch, nil end
  local session = (pyt and pyt.session) or (opts.python and opts.python.session)
  local plan = M.plan_sets(inst, mo, cand ~= nil, core.device().free_memory_bytes, session ~= nil)
  res.sets = plan
  if plan.fallback then res.warnings[#res.warnings + 1] = plan.fallback end
  local salt = math.tointeger(opts.draw_salt) or 0
  if salt ~= 0 then plan.draw_salt = salt end
  local sets = sets_of.new(inst, plan, mo, salt, cand ~= nil)
  local torch_slots = {}
  if pyt then
    phase("pytorch")
    torch_slots = load_pytorch(res, inst, session, pyt, sets, fmt and fmt.needs_python)
  end
  local base_pool, cand_pool = timing.pool(), timing.pool()
  local function free_all() base_pool:free(); cand_pool:free(); sets:free() end
  if cand then
    local ok, bv = cand:bind(sets, { pool = cand_pool })
    res.python = ok and cand.python or nil
    if not ok then free_all(); return fail(bv) end
  end

  local prepare = subjects_of.poisoner(inst, sets, topts.mode)
  local subjects = { subjects_of.baseline(inst, lib, ops_lib, sets, base_pool, prepare("baseline")) }
  local failed = {}
  if cand then subjects[2] = subjects_of.candidate(cand, prepare("candidate"), failed) end
  for _, ts in ipairs(torch_slots) do subjects[#subjects + 1] = subjects_of.pytorch(session, ts) end
  local checks = rounds.new(inst, sets, lib, policy, cand, res.warnings)
  res.checks = checks.record
  local round_plan = {
    sets = plan.used, order = subjects_of.order(subjects, cand ~= nil), device = dev.timing,
    before_round = function(_, ks)
      for _, k in ipairs(ks) do sets:redraw(k); checks:hash(k) end
    end,
    after_round = function(round, ks) return checks:after_round(round, ks) end,
  }

  phase("timing")
  local ok, m = pcall(timing.measure, subjects, topts, round_plan)
  if not ok then
    free_all()
    if cand then cand:close() end
    if type(m) == "table" and m.verdict then return fail(m.verdict) end
    if failed.verdict then return fail(failed.verdict) end
    local msg = tostring(m):gsub("^[^:\n]+%.lua:%d+: ", "")
    if cand then return fail(verdict.new("runtime_error", "during timing: " .. msg)) end
    error("timing the baseline failed: " .. msg, 0)
  end
  res.timing = m
  -- which implementation the baseline ran, where the operators can differ (a convolution:
  -- cuDNN, with its version and algorithm, or kreach's NVRTC kernels)
  res.baseline_backend = ops_lib.conv_last
  res.clocks = m.clocks
  res.throttled = m.clocks.available and m.clocks.throttled or false
  if not m.clocks.available then res.warnings[#res.warnings + 1] = "clocks not read: " .. tostring(m.clocks.why) end

  -- the last timed call on each set: its outputs and inputs are still there
  phase("recheck")
  local failure = checks:recheck(M.rechecked_sets(m.mode, plan.used, m.rounds))
  core.synchronize()

  -- the speed of light, for every subject
  record_times(res, m, inst, opts.calibration, topts)
  conclude(res, m, cand, torch_slots, failure, { topts = topts, mo = mo, cal = opts.calibration })
  free_all()
  if cand then cand:close() end
  return res
end

return M
