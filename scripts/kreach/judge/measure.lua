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
local core = require "kreach.core"
local tensor = require "kreach.core.tensor"
local nvrtc = require "kreach.core.nvrtc"
local candidate = require "kreach.candidate.lua"
local check = require "kreach.judge.check"
local kinds = require "kreach.kinds"
local jpolicy = require "kreach.judge.policy"
local ops = require "kreach.ops"
local pycandidate = require "kreach.candidate.python"
local timing = require "kreach.judge.timing"
local verdict = require "kreach.verdict"

local M = {}

-- The policy beyond timing's own options: the seed of the timing inputs (mixed so that it
-- differs from every correctness trial's); how far below the speed-of-light bound a time must
-- be (its whole interval) to count as impossible; how many input sets the timed calls rotate
-- over, and the share of the device's free memory they may take (fewer sets where they do not
-- fit, down to one, and the evaluation records it).
-- The bound's bandwidth is the copy's, and streams that only read run faster than a copy: on
-- the H200, kreach bench measured the loss baselines (reads, scalar outputs) at up to 110% of
-- the copy bound. A margin of 25% flags only what no DRAM traffic can do (above 1.33 x the copy
-- bandwidth, past the HBM's peak).

-- The cheap check compares the candidate with the baseline at this multiple of the
-- thresholds the oracle judgment uses (both are within them of the oracle); a doubt sends the
-- call to the oracle. After this many doubts the oracle cleared, the cheap check of that
-- output only looks for unwritten elements (a warning says so).
local QUICK_MULTIPLE = 2
local MAX_FALSE_ALARMS = 8

M.DEFAULTS = jpolicy.MEASURE
M.options = jpolicy.measure

-- ---- memory: how many input sets fit ----

local FLOAT = { f32 = true, f16 = true, bf16 = true }

-- Bytes of one input set (inputs, parameters, the baseline's outputs and, with a candidate,
-- its outputs), and of the work beside the sets: the oracle's f64 copies of one set and the
-- temporaries of drawing new values, kept for the whole measurement (Instance:redraw's cache:
-- an f32 draw of each input, and a rounded copy when its dtype is not f32; a parameter is drawn
-- in place, through an f32 copy when its dtype is not f32).
local function footprint(inst, with_candidate, with_pytorch)
  local per_set, oracle, kept = 0, 0, 0
  for _, a in ipairs(inst.args) do
    -- PyTorch's worker holds a copy of every input, param and output of each set
    if a.kind ~= "scalar" and with_pytorch then per_set = per_set + a.nbytes end
    if a.kind ~= "scalar" then
      local f64 = a.numel * 8
      if a.kind == "output" then
        per_set = per_set + a.nbytes * (with_candidate and 2 or 1)
        oracle = oracle + (FLOAT[a.dtype] and f64 or 0)
      else
        per_set = per_set + a.nbytes
        if FLOAT[a.dtype] then oracle = oracle + f64 end
        if a.kind == "param" then
          -- drawn in place at f32; other dtypes through an f32 scratch copy
          kept = kept + (a.dtype ~= "f32" and a.numel * 4 or 0)
        else
          local sym = a.dist and a.dist.transforms and table.concat(a.dist.transforms, ","):find("symmetric")
          kept = kept + a.numel * 4 * (sym and 2 or 1) + (a.dtype ~= "f32" and a.nbytes or 0)
        end
      end
    end
  end
  return per_set, oracle + kept
end

-- plan_sets(inst, mo, with_candidate, free_bytes, with_pytorch) -> { requested, used,
-- per_set_bytes, fallback (why fewer were used, or nil) }
function M.plan_sets(inst, mo, with_candidate, free_bytes, with_pytorch)
  local per_set, beside = footprint(inst, with_candidate, with_pytorch)
  local room = free_bytes * mo.memory_fraction - beside
  local fit = per_set > 0 and math.floor(room / per_set) or mo.sets
  local used = math.max(1, math.min(mo.sets, fit))
  local plan = { requested = mo.sets, used = used, per_set_bytes = per_set }
  if used < mo.sets then
    plan.fallback = ("%d input sets of %.3g GB do not fit in %.0f%% of the %.3g GB free (with %.3g GB for the oracle's copies): %d used"):format(
      mo.sets, per_set / 1e9, 100 * mo.memory_fraction, free_bytes / 1e9, beside / 1e9, used)
  end
  return plan
end

-- ---- checks ----

local function clean(m) return check.clean_metrics(m) end

local function found(where, what)
  return ("found while timing (%s): %s"):format(where, what)
end

-- Judges the outputs one call left on set `s` against the fp64 oracle on the set's current
-- inputs, with the correctness policy: unwritten elements first, then the values (thresholds
-- loosened to the baseline's own error, as in the trials; an output the baseline itself fails
-- is not judged). Returns the per-output records and a failing verdict or nil.
local function judge_set(inst, s, lib, policy, where)
  local records, failure = {}, nil
  if s.cvals then
    for i, a in ipairs(inst.args) do
      if a.kind == "output" then
        local left = s.cvals[i]:count_poisoned()
        if left > 0 and not failure then
          failure = verdict.new("incorrect", "incomplete_write", found(where, ("output '%s' has %d of %d elements unwritten"):format(
            a.name, left, s.cvals[i]:numel())))
        end
      end
    end
  end
  local ovals = inst:oracle_args(s.vals)
  inst:run_reference(ovals)
  for i, a in ipairs(inst.args) do
    if a.kind == "output" then
      local ref = ovals[i]
      local base = lib.metrics(s.vals[i], ref, {})
      local th = check.thresholds(policy, inst.dtype, base.rel_l2 and base or nil)
      local bok, breason = check.judge(base, th)
      local rec = { name = a.name, where = where, baseline = clean(base), thresholds = th, baseline_ok = bok }
      if not bok then rec.baseline_reason = breason end
      if s.cvals then
        local m = lib.metrics(s.cvals[i], ref, {})
        local ok, reason, detail = check.judge(m, th)
        rec.metrics, rec.ok, rec.reason = clean(m), ok, reason
        if bok and not ok and not failure then
          failure = verdict.new("incorrect", reason, found(where, ("output '%s': %s"):format(a.name, detail)))
        end
        if bok then s.th[i] = th end
      end
      records[#records + 1] = rec
    end
  end
  for i, a in ipairs(inst.args) do
    if a.kind ~= "scalar" and ovals[i] ~= s.vals[i] and ovals[i]:is_live() then ovals[i]:free() end
  end
  return records, failure
end

-- The cheap check of a round: each candidate output against the baseline's on the same
-- inputs, at QUICK_MULTIPLE x the thresholds the oracle judgment set for it (the dtype's until
-- then). Returns the names of the outputs in doubt.
local function quick_doubts(inst, s, lib, policy, state)
  local doubts = {}
  for i, a in ipairs(inst.args) do
    if a.kind == "output" then
      local doubt
      if state.blunt[i] then
        doubt = s.cvals[i]:count_poisoned() > 0
      else
        local th = s.th[i] or check.thresholds(policy, inst.dtype, nil)
        local wide = {}
        for k, v in pairs(th) do wide[k] = v * QUICK_MULTIPLE end
        local m = lib.metrics(s.cvals[i], s.vals[i], {})
        doubt = not check.judge(m, wide)
      end
      if doubt then doubts[#doubts + 1] = i end
    end
  end
  return doubts
end

-- ---- the protocol's decisions ----

-- poisoned_before(who, mode) -> whose outputs on a set are poisoned before a timed call of
-- `who` ("baseline" or "candidate") on it: a list of "candidate" (the candidate's outputs) and
-- "baseline" (the baseline's). Each subject's own outputs always, so that nothing a call left
-- behind can stand in for the next call's work. A candidate's kernels can read any of this
-- process's device memory, and the baseline's outputs on a set are the answer to its inputs:
-- the candidate is called first in every round (so no other subject has yet run on the inputs
-- it is given), and in cold mode the baseline's outputs are poisoned before each candidate call
-- as well, so that this holds whatever the order; the L2 flush that follows makes that free.
-- (In hot and graph modes the extra writes would sit in L2 before the candidate's calls only:
-- the order alone holds there.) The candidate's outputs are never poisoned before a baseline
-- call: they hold what the round's checks judge.
function M.poisoned_before(who, mode)
  if who == "candidate" then return mode == "cold" and { "candidate", "baseline" } or { "candidate" } end
  if who == "baseline" then return { "baseline" } end
  error(("measure.poisoned_before: no subject '%s'"):format(tostring(who)), 2)
end

-- rechecked_sets(mode, sets, rounds) -> how many input sets' last timed calls are judged after
-- timing (sets 1 to this): the sets the rounds used (one set a round in cold and hot modes, so
-- fewer than `sets` when there were fewer rounds), all of them in graph mode (every round
-- calls each set).
function M.rechecked_sets(mode, sets, rounds)
  if mode == "graph" then return sets end
  return math.min(sets, rounds)
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

-- time(inst, opts) -> result. opts: candidate = path (nil: the baseline alone), timing =
-- kreach.judge.timing options, policy = kreach.judge.check policy overrides (thresholds of the checks),
-- measure = overrides of M.DEFAULTS, calibration = a stored calibration (or nil: no speed of
-- light), phase = function(name), arch = NVRTC arch, pytorch = { session = a kreach.pytorch
-- session, compile = bool } (PyTorch timed beside the baseline: eager, and compiled),
-- draw_salt = a number added to the timed inputs' seeds (kreach.run.evaluate.draw_salt; result.sets.draw_salt),
-- device = { build = in place of kreach.core.nvrtc.build (a .lua candidate's compile), timing =
-- in place of kreach.judge.timing.DEVICE's operations } (nil: the GPU's; tests/lua/protocol_measure_spec.lua
-- runs the protocol on the host device with these).
-- result: { verdict (the candidate's, after timing; nil for a baseline alone), timing = the
-- kreach.judge.timing result, baseline = {summary, samples, sol}, candidate = {...}, speedup,
-- sets = {requested, used, per_set_bytes, fallback}, checks = {first, last, doubted, rounds,
-- cheap, doubts, oracle}, clocks, warnings }.
-- How a .lua candidate's time is measured (the record's time_method; a .py candidate's is
-- kreach.candidate.python's).
M.LUA_METHOD = "kreach worker: CUDA events on kreach's stream, taken in C, the candidate's Lua sandboxed"

function M.time(inst, opts)
  opts = opts or {}
  local phase = opts.phase or function() end
  local dev = opts.device or {}
  local build = dev.build or nvrtc.build
  local mo = jpolicy.measure(opts.measure)
  local topts = timing.options(opts.timing)
  local policy = check.policy(opts.policy)
  local res = { problem = inst.problem.name, dtype = inst.dtype, sizes = inst.sizes, bytes = inst.bytes,
                flops = inst.flops, candidate_path = opts.candidate, options = { timing = topts, measure = mo },
                warnings = {} }
  local function fail(v) res.verdict = v; return res end

  local cand, prog, pyc
  local is_py = opts.candidate and kinds.kind(opts.candidate) == "python"
  if is_py then
    -- a KernelBench-format candidate, in the Python worker (kreach.candidate.python)
    if not opts.python then error("measure.time: a KernelBench-format candidate needs the Python worker (opts.python)", 2) end
    if topts.mode == "graph" then
      return fail(verdict.new("skipped", "graph mode replays kreach's own CUDA graph, which cannot hold a call into the Python worker: time a KernelBench-format candidate in cold or hot mode"))
    end
  elseif opts.candidate then
    phase("load")
    local ok, c = pcall(candidate.load, opts.candidate)
    if not ok then return fail(verdict.from_candidate_error(c)) end
    cand = c
    phase("compile")
    local p, err = build{ source = cand.source, name = (opts.candidate:match("([^/]+)%.lua$") or "candidate") .. ".cu",
                          options = cand.options, arch = opts.arch }
    if not p then return fail(verdict.new("compile_error", err)) end
    prog = p
  end

  phase("inputs")
  local ops_lib = ops.get(false)
  local lib = inst:ops(ops_lib)
  local n = #inst.args
  local pyt = opts.pytorch
  if pyt and topts.mode == "graph" then
    res.pytorch_note = "PyTorch is not timed in graph mode (a replay of kreach's graph has no PyTorch call in it)"
    pyt = nil
  end
  local session = (pyt and pyt.session) or (opts.python and opts.python.session)
  local plan = M.plan_sets(inst, mo, cand ~= nil or is_py, core.device().free_memory_bytes, session ~= nil)
  res.sets = plan
  if plan.fallback then res.warnings[#res.warnings + 1] = plan.fallback end
  -- every draw takes the next seed: never a correctness trial's (those are seed*7919 + t);
  -- opts.draw_salt (kreach.run.evaluate.draw_salt: 2^40 or more) makes them unpredictable
  local draws = 0
  local salt = math.tointeger(opts.draw_salt) or 0
  if salt ~= 0 then plan.draw_salt = salt end
  local function next_seed()
    draws = draws + 1
    return mo.seed * 7919 + 104729 + salt + draws
  end
  -- sets[k] = { vals = the baseline's arguments (inputs, parameters, scalars, its outputs),
  --             cvals = the candidate's (the same inputs, outputs of its own), th = per-output
  --             thresholds once judged, hashes = of the inputs after the last draw }
  local sets = {}
  for k = 1, plan.used do
    local s = { vals = inst:make_args(next_seed()), th = {} }
    if cand or is_py then
      s.cvals = {}
      for i = 1, n do s.cvals[i] = s.vals[i] end
      for i, a in ipairs(inst.args) do
        if a.kind == "output" then s.cvals[i] = tensor.empty(a.shape, a.dtype):poison() end
      end
    end
    s.index = k
    sets[k] = s
  end
  -- the redraws' temporaries, kept from round to round (Instance:redraw): drawn once here, so
  -- that no round allocates or frees them between timed calls
  local redraw_cache = {}
  inst:redraw(sets[1].vals, next_seed(), redraw_cache)
  local function free_sets()
    inst:free_cache(redraw_cache)
    for _, s in ipairs(sets) do
      if s.cvals then
        for i, a in ipairs(inst.args) do
          if a.kind == "output" and s.cvals[i]:is_live() then s.cvals[i]:free() end
        end
      end
      inst:free(s.vals)
    end
  end
  core.synchronize()

  -- PyTorch's model, and its copies of the sets' inputs (the same values, refreshed with
  -- every redraw); a failure here leaves PyTorch out of the measurement, said once
  local torch_slots = {}
  local mirrored = false
  -- the Python worker's copies of every set, refreshed with kreach's values
  local function mirror_sets()
    for k = 1, plan.used do
      local ok, why = session:mirror(k, inst, sets[k].vals)
      if not ok then return nil, why end
      session:refresh(k)
    end
    mirrored = true
    return true
  end
  if pyt then
    phase("pytorch")
    res.pytorch_env = { torch = session.info.torch, cuda = session.info.cuda, cudnn = session.info.cudnn,
                        cudnn_tf32 = session.info.cudnn_tf32, compile = pyt.compile or false }
    local ok, why = session:load("eager", inst)
    if ok then torch_slots[1] = { slot = "eager", name = "pytorch" } end
    if ok and pyt.compile then
      local cok, cwhy = session:load("compiled", inst, { compile = true })
      if cok then torch_slots[2] = { slot = "compiled", name = "pytorch_compiled" }
      else res.warnings[#res.warnings + 1] = "torch.compile not timed: " .. cwhy end
    end
    if ok then ok, why = mirror_sets() end
    if not ok then
      res.pytorch_note = "PyTorch not timed: " .. tostring(why)
      torch_slots = {}
    end
    -- a compiled model compiles at its first call: made now, before a candidate's seal
    for _, ts in ipairs(torch_slots) do
      if ts.slot == "compiled" and is_py then
        local r, cwhy = session:call(ts.slot, 1, {})
        if not r then
          res.warnings[#res.warnings + 1] = "torch.compile not timed: " .. tostring(cwhy)
          torch_slots[2] = nil
        end
      end
    end
  end
  if is_py then
    phase("load")
    local t0 = core.now()
    local v
    pyc, v = pycandidate.open(session, inst, opts.candidate, opts.python)
    if not pyc then free_sets(); return fail(v) end
    res.python = { load_s = core.now() - t0, sealed = session.sealed or false, torch = session.info.torch,
                   guarded = session.info.guarded }
    if not mirrored then
      local ok, why = mirror_sets()
      if not ok then free_sets(); return fail(verdict.new("runtime_error", "cannot share buffers with the Python worker: " .. why)) end
    end
    -- the candidate's outputs are the sets' output buffers in the Python worker
    for k = 1, plan.used do
      for i, t in pairs(session:outputs(k)) do sets[k].cvals[i]:free(); sets[k].cvals[i] = t:poison() end
    end
  end

  local base_pool, cand_pool = timing.pool(), timing.pool()
  local ref = inst.problem.def.reference
  local function poison_outputs(list)
    for i, a in ipairs(inst.args) do if a.kind == "output" then list[i]:poison() end end
  end
  -- before each call of a subject, the outputs M.poisoned_before names (the candidate is called
  -- first: round_plan's order)
  local function poison_before(who)
    local whose = M.poisoned_before(who, topts.mode)
    return function(k)
      for _, w in ipairs(whose) do poison_outputs(w == "candidate" and sets[k].cvals or sets[k].vals) end
    end
  end
  local poison_before_candidate = poison_before("candidate")
  local subjects = {
    { name = "baseline",
      call = function(k)
        ops_lib.pool = base_pool
        local ok, e = pcall(ref, lib, table.unpack(sets[k].vals, 1, n))
        ops_lib.pool = nil
        base_pool:release()
        if not ok then error(e, 0) end
      end,
      prepare = poison_before("baseline") },
  }
  local cand_error, cand_verdict
  if is_py then
    subjects[2] = {
      name = "candidate",
      call = function(k)
        local r, v = pyc:call(k)
        if not r then cand_verdict = v; error(v.reason, 0) end
      end,
      sample = function(k, so)
        local r, v = pyc:call(k, { timed = true, flush_bytes = so.flush_bytes })
        if not r then cand_verdict = v; error(v.reason, 0) end
        if not r.gated then pyc.ungated = (pyc.ungated or 0) + 1 end
        return r.ms
      end,
      prepare = poison_before_candidate,
    }
  elseif cand then
    local kit, ctl = candidate.kit(prog, { pool = cand_pool })
    subjects[2] = {
      name = "candidate",
      call = function(k)
        local ok, err = candidate.call_forward(cand, kit, sets[k].cvals, { steps = policy.steps })
        ctl.release()
        cand_pool:release()
        if not ok then cand_error = err; error(err, 0) end
      end,
      prepare = poison_before_candidate,
    }
  end

  for _, ts in ipairs(torch_slots) do
    subjects[#subjects + 1] = {
      name = ts.name, optional = true,
      call = function(k)
        local r, why = session:call(ts.slot, k, {})
        if not r then error(why, 0) end
      end,
      sample = function(k, so)
        local r, why = session:call(ts.slot, k, { timed = true, flush_bytes = so.flush_bytes })
        if not r then error(why, 0) end
        if not r.gated then ts.ungated = (ts.ungated or 0) + 1 end
        return r.ms
      end,
    }
  end

  -- the checks of the sampling rounds
  local checks = { first = {}, last = {}, doubted = {}, rounds = 0, cheap = 0, doubts = 0, oracle = 0 }
  res.checks = checks
  local state = { blunt = {}, false_alarms = {}, judged = {} }
  local function raise(v) error({ verdict = v }, 0) end
  local function hash_inputs(s) return check.hash_inputs(inst, s.vals, lib) end
  local function mutated(s, where)
    local now, names = hash_inputs(s), {}
    for i, a in ipairs(inst.args) do
      if s.hashes[i] and s.hashes[i] ~= now[i] then names[#names + 1] = a.name end
    end
    -- a Python candidate reads (and could change) the Python worker's copies of the inputs
    if pyc and #names == 0 then names = pyc:mutated(s.index, s.vals, lib) end
    if #names > 0 then
      return verdict.new("incorrect", "input_mutation", found(where, ("the inputs %s changed"):format(table.concat(names, ", "))))
    end
  end
  -- an oracle judgment's outputs the baseline itself fails are not judged: said, not hidden
  local function warn_unjudged(recs)
    for _, r in ipairs(recs) do
      if not r.baseline_ok then
        res.warnings[#res.warnings + 1] = ("%s: the baseline's output '%s' fails its own thresholds (%s), so it is not judged"):format(r.where, r.name, r.baseline_reason)
      end
    end
  end
  local function judge(k, where, into)
    checks.oracle = checks.oracle + 1
    local recs, failure = judge_set(inst, sets[k], lib, policy, where)
    for _, r in ipairs(recs) do into[#into + 1] = r end
    return recs, failure
  end
  local order = {}
  for i = 1, #subjects do order[i] = i end
  if cand or is_py then order[1], order[2] = 2, 1 end -- the candidate first (M.poisoned_before)
  local round_plan = {
    sets = plan.used,
    order = order,
    device = dev.timing,
    before_round = function(round, ks)
      for _, k in ipairs(ks) do
        inst:redraw(sets[k].vals, next_seed(), redraw_cache)
        sets[k].hashes = hash_inputs(sets[k])
        if mirrored then session:refresh(k) end
      end
    end,
    after_round = function(round, ks)
      checks.rounds = round
      -- the oracle allocates and frees f64 copies of the set: the next round is not sampled
      local oracle_before = checks.oracle
      for _, k in ipairs(ks) do
        local s = sets[k]
        local where = ("sample %d, input set %d"):format(round, k)
        local v = mutated(s, where)
        if v then raise(v) end
        if cand then
          if not state.judged[k] then
            -- the first timed call on each set is judged against the oracle
            state.judged[k] = true
            local _, failure = judge(k, where .. ", its first timed call", checks.first)
            if failure then raise(failure) end
          else
            checks.cheap = checks.cheap + 1
            local doubts = quick_doubts(inst, s, lib, policy, state)
            if #doubts > 0 then
              checks.doubts = checks.doubts + 1
              local recs, failure = judge(k, where, checks.doubted)
              if failure then raise(failure) end
              -- a doubt the oracle cleared: the baseline is not close enough to the oracle
              -- on these inputs to stand in for it
              for _, i in ipairs(doubts) do
                state.false_alarms[i] = (state.false_alarms[i] or 0) + 1
                if state.false_alarms[i] >= MAX_FALSE_ALARMS and not state.blunt[i] then
                  state.blunt[i] = true
                  res.warnings[#res.warnings + 1] = ("output '%s': the baseline differed from the candidate %d times where the oracle found the candidate right; from then on the rounds only looked for unwritten elements (the first and last call on each set are judged by the oracle)"):format(
                    inst.args[i].name, MAX_FALSE_ALARMS)
                end
              end
              warn_unjudged(recs)
            end
          end
        end
      end
      return checks.oracle > oracle_before
    end,
  }

  phase("timing")
  local ok, m = pcall(timing.measure, subjects, topts, round_plan)
  if not ok then
    base_pool:free(); cand_pool:free()
    free_sets()
    if type(m) == "table" and m.verdict then return fail(m.verdict) end
    if cand_verdict then return fail(cand_verdict) end
    if cand_error then return fail(verdict.from_candidate_error(cand_error)) end
    local msg = tostring(m):gsub("^[^:\n]+%.lua:%d+: ", "")
    if cand or is_py then return fail(verdict.new("runtime_error", "during timing: " .. msg)) end
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
  local failure
  for k = 1, M.rechecked_sets(m.mode, plan.used, m.rounds) do
    local where = ("input set %d, its last timed call"):format(k)
    local recs, f = judge(k, where, checks.last)
    failure = failure or f
    if not failure then failure = mutated(sets[k], where) end
    warn_unjudged(recs)
  end
  core.synchronize()

  -- the speed of light, for both subjects
  local cal = opts.calibration
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
  res.speedup = m.speedup
  -- against PyTorch: the candidate's speedup over eager and over compiled, and the baseline's
  -- time over eager's (the parity of kreach's baseline), each with its bootstrap interval
  for _, ts in ipairs(torch_slots) do
    if ts.ungated then
      res.warnings[#res.warnings + 1] = ("%s: %d calls took longer to queue than the gate held, so their times include some of the host's launch time"):format(ts.name, ts.ungated)
    end
  end
  if #torch_slots > 0 then res.ratios = M.torch_ratios(res, topts) end
  if not cal then res.warnings[#res.warnings + 1] = "no calibration of this device: no speed-of-light figures (kreach calibrate)" end
  local bsol = res.baseline.sol
  local why = timing.faster_than_light(res.baseline.summary, bsol, mo.sol_margin)
  if why then
    res.warnings[#res.warnings + 1] = "the baseline itself runs faster than the speed-of-light bound (the problem's bytes or flops are overstated?): " .. why
  end
  if pyc and pyc.ungated then
    res.warnings[#res.warnings + 1] = ("candidate: %d calls took longer to queue than the gate held, so their times include some of the host's launch time"):format(pyc.ungated)
  end
  -- how the candidate's time was measured, in the record (evaluation's time_method)
  if pyc and res.candidate then
    local prov, pwarn = pyc:provenance()
    res.candidate.method = prov
    for _, w in ipairs(pwarn) do res.warnings[#res.warnings + 1] = w end
  elseif cand and res.candidate then
    res.candidate.method = { method = M.LUA_METHOD }
  end
  if cand or is_py then
    local cwhy = not why and timing.faster_than_light(res.candidate.summary, res.candidate.sol, mo.sol_margin)
    if cwhy and not failure then failure = verdict.new("incorrect", "faster_than_physically_possible", cwhy) end
    res.verdict = failure or verdict.correct()
  end
  -- the timing result's sample lists are already in res.baseline/candidate
  for _, name in ipairs(m.order) do m.subjects[name].samples = nil; m.subjects[name].warmup = nil end

  base_pool:free(); cand_pool:free()
  free_sets()
  return res
end

return M
