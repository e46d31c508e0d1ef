-- kreach.judge.subjects: the subjects kreach.judge.measure times, each a table as
-- kreach.judge.timing.measure takes it ({ name, call(k), sample?(k, so), prepare?(k), optional? }):
-- kreach's baseline, the candidate (any format: driven through its opened object,
-- kreach.candidate's), and PyTorch eager and compiled (in the Python worker). It owns which
-- outputs are poisoned before each call (poisoned_before) and which subject is called first.
local modes = require "kreach.judge.modes"

local M = {}

-- poisoned_before(who, mode) -> whose outputs on a set are poisoned before a timed call of
-- `who` ("baseline" or "candidate") on it: a list of "candidate" (the candidate's outputs) and
-- "baseline" (the baseline's). Each subject's own outputs always, so that nothing a call left
-- behind can stand in for the next call's work. A candidate's kernels can read any of this
-- process's device memory, and the baseline's outputs on a set are the answer to its inputs:
-- the candidate is called first in every round (so no other subject has yet run on the inputs
-- it is given), and where the mode says so (cold: poison_baseline_for_candidate) the baseline's
-- outputs are poisoned before each candidate call as well, so that this holds whatever the
-- order; the L2 flush that follows makes that free. (In hot and graph modes the extra writes
-- would sit in L2 before the candidate's calls only: the order alone holds there.) The
-- candidate's outputs are never poisoned before a baseline call: they hold what the round's
-- checks judge.
function M.poisoned_before(who, mode)
  if who == "candidate" then return modes.get(mode).poison_baseline_for_candidate and { "candidate", "baseline" } or { "candidate" } end
  if who == "baseline" then return { "baseline" } end
  error(("measure.poisoned_before: no subject '%s'"):format(tostring(who)), 2)
end

-- poisoner(inst, sets, mode) -> prepare(who): the prepare function of subject `who`, which
-- poisons the outputs poisoned_before names on set k
function M.poisoner(inst, sets, mode)
  local function poison_outputs(list)
    for i, a in ipairs(inst.args) do if a.kind == "output" then list[i]:poison() end end
  end
  return function(who)
    local whose = M.poisoned_before(who, mode)
    return function(k)
      for _, w in ipairs(whose) do poison_outputs(w == "candidate" and sets[k].cvals or sets[k].vals) end
    end
  end
end

-- baseline(inst, lib, ops_lib, sets, pool, prepare) -> the baseline: the problem's reference
-- with kreach's operators (ops_lib, their scratch from `pool`) on set k's arguments
function M.baseline(inst, lib, ops_lib, sets, pool, prepare)
  local ref, n = inst.problem.def.reference, #inst.args
  return {
    name = "baseline",
    call = function(k)
      ops_lib.pool = pool
      local ok, e = pcall(ref, lib, table.unpack(sets[k].vals, 1, n))
      ops_lib.pool = nil
      pool:release()
      if not ok then error(e, 0) end
    end,
    prepare = prepare,
  }
end

-- candidate(cand, prepare, failed) -> the candidate, through its opened object (cand:call(k),
-- and cand:sample(k, so) where it times itself in another process); the verdict of a call that
-- fails is kept in failed.verdict
function M.candidate(cand, prepare, failed)
  local s = {
    name = "candidate",
    call = function(k)
      local ok, v = cand:call(k)
      if not ok then failed.verdict = v; error(v.reason, 0) end
    end,
    prepare = prepare,
  }
  if cand.sample then
    s.sample = function(k, so)
      local ms, v = cand:sample(k, so)
      if not ms then failed.verdict = v; error(v.reason, 0) end
      return ms
    end
  end
  return s
end

-- pytorch(session, ts) -> PyTorch's model in slot ts.slot of the Python worker, named ts.name
-- (optional: a failure leaves the measurement); ts.ungated counts the calls timed without
-- the gate
function M.pytorch(session, ts)
  return {
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

-- order(subjects, with_candidate) -> the order of the calls: the candidate (the list's second)
-- first (poisoned_before), then the rest in the list's order
function M.order(subjects, with_candidate)
  local order = {}
  for i = 1, #subjects do order[i] = i end
  if with_candidate then order[1], order[2] = 2, 1 end
  return order
end

return M
