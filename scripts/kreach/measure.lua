-- kreach.measure: timing one problem instance in the worker process that owns the GPU: the
-- baseline alone (kreach bench), or the baseline and a candidate interleaved (kreach eval),
-- on fresh inputs (a seed the correctness trials did not use). After timing, the outputs of
-- the last timed call are judged against the fp64 oracle again, the inputs' hashes are
-- compared with those taken before timing, and the times are set against the device's speed
-- of light. The result is a plain table (it crosses the worker pipe as JSON).
local verdict = require "kreach.verdict"

local M = {}

-- The policy beyond timing's own options: the seed of the timing inputs (mixed so that it
-- differs from every correctness trial's), and how far below the speed-of-light bound a time
-- must be (its whole interval) to count as impossible. The bound's bandwidth is the copy's, and
-- streams that only read run faster than a copy: on the H200, kreach bench measured the loss
-- baselines (reads, scalar outputs) at up to 110% of the copy bound. A margin of 25% flags only
-- what no DRAM traffic can do (above 1.33 x the copy bandwidth, past the HBM's peak).
M.DEFAULTS = { seed = 1, sol_margin = 0.25 }

local function poison_all(ts)
  for _, t in pairs(ts) do t:poison() end
end

local function hashes(inst, vals, lib) return require("kreach.check").hash_inputs(inst, vals, lib) end
local function clean(m) return require("kreach.check").clean_metrics(m) end

-- Judges the outputs left by the last timed calls. Returns a list of per-output records and a
-- failing verdict or nil.
local function recheck(inst, vals, cvals, lib, policy)
  local check = require "kreach.check"
  local kreach = require "kreach"
  local records, failure = {}, nil
  -- a candidate output with poison left was not (wholly) written by the last call
  for i, a in ipairs(inst.args) do
    if a.kind == "output" and cvals then
      local left = cvals[i]:count_poisoned()
      if left > 0 and not failure then
        failure = verdict.new("incorrect", "incomplete_write", ("after timing, output '%s' of the last timed call has %d of %d elements unwritten"):format(
          a.name, left, cvals[i]:numel()))
      end
    end
  end
  local ovals = inst:oracle_args(vals)
  inst:run_reference(ovals)
  for i, a in ipairs(inst.args) do
    if a.kind == "output" then
      local ref = ovals[i]
      local base = lib.metrics(vals[i], ref, {})
      local th = check.thresholds(policy, inst.dtype, base.rel_l2 and base or nil)
      local bok, breason = check.judge(base, th)
      local rec = { name = a.name, baseline = clean(base), thresholds = th, baseline_ok = bok }
      if not bok then rec.baseline_reason = breason end
      if cvals then
        local m = lib.metrics(cvals[i], ref, {})
        local ok, reason, detail = check.judge(m, th)
        rec.metrics, rec.ok, rec.reason = clean(m), ok, reason
        if bok and not ok and not failure then
          failure = verdict.new("incorrect", reason, ("the last timed call, on the timing inputs, output '%s': %s"):format(a.name, detail))
        end
      end
      records[#records + 1] = rec
    end
  end
  for i, a in ipairs(inst.args) do
    if a.kind ~= "scalar" and ovals[i] ~= vals[i] and ovals[i]:is_live() then ovals[i]:free() end
  end
  kreach.synchronize()
  return records, failure
end

-- time(inst, opts) -> result. opts: candidate = path (nil: the baseline alone), timing =
-- kreach.timing options, policy = kreach.check policy overrides (thresholds of the recheck),
-- measure = overrides of M.DEFAULTS, calibration = a stored calibration (or nil: no speed of
-- light), phase = function(name), arch = NVRTC arch.
-- result: { verdict (the candidate's, after timing; nil for a baseline alone), timing = the
-- kreach.timing result, baseline = {summary, samples, sol}, candidate = {...}, speedup,
-- recheck, clocks, warnings }.
function M.time(inst, opts)
  opts = opts or {}
  local phase = opts.phase or function() end
  local kreach = require "kreach"
  local timing = require "kreach.timing"
  local candidate = require "kreach.candidate"
  local mo = {}
  for k, v in pairs(M.DEFAULTS) do mo[k] = v end
  for k, v in pairs(opts.measure or {}) do
    if M.DEFAULTS[k] == nil then error(("measure: unknown option '%s'"):format(k), 2) end
    mo[k] = v
  end
  local topts = timing.options(opts.timing)
  local policy = require("kreach.check").policy(opts.policy)
  local res = { problem = inst.problem.name, dtype = inst.dtype, sizes = inst.sizes, bytes = inst.bytes,
                flops = inst.flops, candidate_path = opts.candidate, options = { timing = topts, measure = mo },
                warnings = {} }
  local function fail(v) res.verdict = v; return res end

  local cand, prog
  if opts.candidate then
    phase("load")
    local ok, c = pcall(candidate.load, opts.candidate)
    if not ok then return fail(verdict.from_candidate_error(c)) end
    cand = c
    phase("compile")
    local p, err = kreach.build{ source = cand.source, name = (opts.candidate:match("([^/]+)%.lua$") or "candidate") .. ".cu",
                                 options = cand.options, arch = opts.arch }
    if not p then return fail(verdict.new("compile_error", err)) end
    prog = p
  end

  phase("inputs")
  local lib = inst:ops(kreach.ops)
  local ops_lib = require("kreach.ops").get(false)
  local n = #inst.args
  local seed = mo.seed * 7919 + 104729 -- never a correctness trial's seed (those are seed*7919 + t)
  local vals = inst:make_args(seed)
  -- a second input set for the last call: a candidate that replays an answer it kept from an
  -- earlier call (the inputs do not change while it is timed) is wrong on these
  local last = inst:make_args(seed + 1)
  for i, a in ipairs(inst.args) do
    if a.kind == "output" then last[i]:free(); last[i] = nil end
  end
  local bouts, couts, cvals = {}, {}, nil
  for i, a in ipairs(inst.args) do if a.kind == "output" then bouts[i] = vals[i] end end
  if cand then
    cvals = {}
    for i = 1, n do cvals[i] = vals[i] end
    for i, a in ipairs(inst.args) do
      if a.kind == "output" then cvals[i] = kreach.empty(a.shape, a.dtype):poison(); couts[i] = cvals[i] end
    end
  end
  local before, before_last = hashes(inst, vals, lib), hashes(inst, last, lib)
  kreach.synchronize()
  local first = {}
  for i = 1, n do first[i] = vals[i] end
  -- swaps the inputs of the last call into an argument list (scalars and outputs stay)
  local function swap_inputs(list)
    for i, a in ipairs(inst.args) do
      if a.kind == "input" or a.kind == "param" then list[i] = last[i] end
    end
  end

  local base_pool, cand_pool = timing.pool(), timing.pool()
  local ref = inst.problem.def.reference
  local subjects = {
    { name = "baseline",
      call = function()
        ops_lib.pool = base_pool
        local ok, e = pcall(ref, lib, table.unpack(vals, 1, n))
        ops_lib.pool = nil
        base_pool:release()
        if not ok then error(e, 0) end
      end,
      before_last = function() poison_all(bouts); swap_inputs(vals) end },
  }
  local cand_error
  if cand then
    local k, ctl = candidate.kit(prog, { pool = cand_pool })
    subjects[2] = {
      name = "candidate",
      call = function()
        local ok, err = candidate.call_forward(cand, k, cvals, { steps = policy.steps })
        ctl.release()
        cand_pool:release()
        if not ok then cand_error = err; error(err, 0) end
      end,
      before_last = function() poison_all(couts); swap_inputs(cvals) end,
    }
  end

  phase("timing")
  local ok, m = pcall(timing.measure, subjects, topts)
  if not ok then
    base_pool:free(); cand_pool:free()
    if cand_error then return fail(verdict.from_candidate_error(cand_error)) end
    local msg = tostring(m):gsub("^[^:\n]+%.lua:%d+: ", "")
    if cand then return fail(verdict.new("runtime_error", "during timing: " .. msg)) end
    error("timing the baseline failed: " .. msg, 0)
  end
  res.timing = m
  res.clocks = m.clocks
  res.throttled = m.clocks.available and m.clocks.throttled or false
  if not m.clocks.available then res.warnings[#res.warnings + 1] = "clocks not read: " .. tostring(m.clocks.why) end

  phase("recheck")
  local after, after_last = hashes(inst, first, lib), hashes(inst, last, lib)
  local mutated = {}
  for i, a in ipairs(inst.args) do
    if before[i] and (before[i] ~= after[i] or before_last[i] ~= after_last[i]) then mutated[#mutated + 1] = a.name end
  end
  local records, failure = recheck(inst, vals, cvals, lib, policy)
  res.recheck = records
  for _, r in ipairs(records) do
    if not r.baseline_ok then
      res.warnings[#res.warnings + 1] = ("the baseline's last timed output '%s' fails its own thresholds (%s): the recheck of this output is not judged"):format(r.name, r.baseline_reason)
    end
  end
  if #mutated > 0 then
    failure = verdict.new("incorrect", "input_mutation", ("during timing the inputs %s changed"):format(table.concat(mutated, ", ")))
  end

  -- the speed of light, for both subjects
  local cal = opts.calibration
  local p = { bytes = inst.bytes, flops = inst.flops, dtype = inst.dtype }
  for _, name in ipairs(m.order) do
    local s = m.subjects[name]
    res[name] = { summary = s.summary, samples = s.samples, warmup = s.warmup, graph_nodes = s.graph_nodes,
                  sol = timing.sol(p, s.summary.median, cal, topts.mode) }
    if not s.warmup.settled then
      res.warnings[#res.warnings + 1] = ("%s: the warm-up did not settle within %d calls or %g s"):format(name, topts.warmup_max, topts.warmup_s)
    end
  end
  res.speedup = m.speedup
  if not cal then res.warnings[#res.warnings + 1] = "no calibration of this device: no speed-of-light figures (kreach calibrate)" end
  local bsol = res.baseline.sol
  local why = timing.faster_than_light(res.baseline.summary, bsol, mo.sol_margin)
  if why then
    res.warnings[#res.warnings + 1] = "the baseline itself runs faster than the speed-of-light bound (the problem's bytes or flops are overstated?): " .. why
  end
  if cand then
    local cwhy = not why and timing.faster_than_light(res.candidate.summary, res.candidate.sol, mo.sol_margin)
    if cwhy and not failure then failure = verdict.new("incorrect", "faster_than_physically_possible", cwhy) end
    res.verdict = failure or verdict.correct()
  end
  -- the timing result's sample lists are already in res.baseline/candidate
  for _, name in ipairs(m.order) do m.subjects[name].samples = nil; m.subjects[name].warmup = nil end

  base_pool:free(); cand_pool:free()
  inst:free(vals)
  inst:free(first)
  for i, a in ipairs(inst.args) do
    if a.kind ~= "scalar" and a.kind ~= "output" and last[i]:is_live() then last[i]:free() end
  end
  for _, t in pairs(couts) do if t:is_live() then t:free() end end
  return res
end

return M
