-- kreach.judge.rounds: the checks of what kreach.judge.measure's timed calls produce
-- (docs/timing.md). After every sampling round the candidate's outputs are compared with the
-- baseline's on the same inputs (a cheap check), and the first call on each set, the last call
-- on each set and any call the cheap check doubts are judged against the fp64 oracle with the
-- correctness policy; the inputs' hashes are compared around every round. A call that fails is
-- `incorrect`, with a detail that says it was found while timing. It owns the record of those
-- checks (result.checks) and their warnings.
local check = require "kreach.judge.check"
local verdict = require "kreach.verdict"

local M = {}

-- The cheap check compares the candidate with the baseline at this multiple of the
-- thresholds the oracle judgment uses (both are within them of the oracle); a doubt sends the
-- call to the oracle. After this many doubts the oracle cleared, the cheap check of that
-- output only looks for unwritten elements (a warning says so).
local QUICK_MULTIPLE = 2
local MAX_FALSE_ALARMS = 8

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

local Checks = {}
Checks.__index = Checks

-- new(inst, sets, lib, policy, cand, warnings) -> the checks of one measurement: sets the
-- kreach.judge.sets, cand the opened candidate (kreach.candidate's, or nil for the baseline
-- alone), warnings the result's list. checks.record = { first, last, doubted, rounds, cheap,
-- doubts, oracle } is result.checks.
function M.new(inst, sets, lib, policy, cand, warnings)
  return setmetatable({ inst = inst, sets = sets, lib = lib, policy = policy, cand = cand, warnings = warnings,
                        record = { first = {}, last = {}, doubted = {}, rounds = 0, cheap = 0, doubts = 0, oracle = 0 },
                        state = { blunt = {}, false_alarms = {}, judged = {} } }, Checks)
end

local function raise(v) error({ verdict = v }, 0) end

-- hash(k): the hashes of set k's inputs, kept to compare after the round
function Checks:hash(k)
  local s = self.sets[k]
  s.hashes = check.hash_inputs(self.inst, s.vals, self.lib)
end

-- mutated(k, where) -> an `incorrect` verdict when set k's inputs no longer hash as they did
-- after the last draw (or the candidate's own copies of them changed), else nil
function Checks:mutated(k, where)
  local s, inst = self.sets[k], self.inst
  local now, names = check.hash_inputs(inst, s.vals, self.lib), {}
  for i, a in ipairs(inst.args) do
    if s.hashes[i] and s.hashes[i] ~= now[i] then names[#names + 1] = a.name end
  end
  -- a candidate in another process reads (and could change) its own copies of the inputs
  if self.cand and #names == 0 then names = self.cand:mutated(s.index, s.vals, self.lib) end
  if #names > 0 then
    return verdict.new("incorrect", "input_mutation", found(where, ("the inputs %s changed"):format(table.concat(names, ", "))))
  end
end

-- an oracle judgment's outputs the baseline itself fails are not judged: said, not hidden
function Checks:warn_unjudged(recs)
  for _, r in ipairs(recs) do
    if not r.baseline_ok then
      self.warnings[#self.warnings + 1] = ("%s: the baseline's output '%s' fails its own thresholds (%s), so it is not judged"):format(r.where, r.name, r.baseline_reason)
    end
  end
end

function Checks:judge(k, where, into)
  self.record.oracle = self.record.oracle + 1
  local recs, failure = judge_set(self.inst, self.sets[k], self.lib, self.policy, where)
  for _, r in ipairs(recs) do into[#into + 1] = r end
  return recs, failure
end

-- a doubt of the cheap check on set k, which the oracle judges
function Checks:doubted(k, where, doubts)
  local record, state = self.record, self.state
  record.doubts = record.doubts + 1
  local recs, failure = self:judge(k, where, record.doubted)
  if failure then raise(failure) end
  -- a doubt the oracle cleared: the baseline is not close enough to the oracle on these
  -- inputs to stand in for it
  for _, i in ipairs(doubts) do
    state.false_alarms[i] = (state.false_alarms[i] or 0) + 1
    if state.false_alarms[i] >= MAX_FALSE_ALARMS and not state.blunt[i] then
      state.blunt[i] = true
      self.warnings[#self.warnings + 1] = ("output '%s': the baseline differed from the candidate %d times where the oracle found the candidate right; from then on the rounds only looked for unwritten elements (the first and last call on each set are judged by the oracle)"):format(
        self.inst.args[i].name, MAX_FALSE_ALARMS)
    end
  end
  self:warn_unjudged(recs)
end

-- after_round(round, ks) -> whether the checks disturbed the device (the oracle allocates and
-- frees f64 copies of the set: the next round is not sampled, kreach.judge.timing's plan);
-- raises { verdict = } for a call that fails
function Checks:after_round(round, ks)
  local record, state = self.record, self.state
  record.rounds = round
  local oracle_before = record.oracle
  for _, k in ipairs(ks) do
    local where = ("sample %d, input set %d"):format(round, k)
    local v = self:mutated(k, where)
    if v then raise(v) end
    -- the opened candidate says whether its rounds are judged (a KernelBench-format one's are
    -- checked for changed inputs only; its last calls are judged after timing, as before)
    if self.cand and self.cand.round_checks then
      if not state.judged[k] then
        -- the first timed call on each set is judged against the oracle
        state.judged[k] = true
        local _, failure = self:judge(k, where .. ", its first timed call", record.first)
        if failure then raise(failure) end
      else
        record.cheap = record.cheap + 1
        local doubts = quick_doubts(self.inst, self.sets[k], self.lib, self.policy, state)
        if #doubts > 0 then self:doubted(k, where, doubts) end
      end
    end
  end
  return record.oracle > oracle_before
end

-- recheck(n) -> the first failing verdict or nil: the last timed call on sets 1..n judged by the
-- oracle (its outputs and inputs are still there), and its inputs' hashes
function Checks:recheck(n)
  local failure
  for k = 1, n do
    local where = ("input set %d, its last timed call"):format(k)
    local recs, f = self:judge(k, where, self.record.last)
    failure = failure or f
    if not failure then failure = self:mutated(k, where) end
    self:warn_unjudged(recs)
  end
  return failure
end

return M
