-- kreach.judge.modes.hot: a timing mode (docs/timing.md). Before each sample, outside the timed
-- region, the subject prepares it (the caller poisons the call's outputs) and nothing more: the
-- call finds in L2 what the work before it left there; it runs under the stream's gate. The
-- fields are kreach.judge.modes's.
local M = {
  name = "hot",
  flush = false,
  gated = true,
  -- extra writes before a candidate call would sit in L2 before the candidate's calls only:
  -- the order of the calls alone keeps the baseline's answer away (kreach.judge.measure)
  poison_baseline_for_candidate = false,
  foreign = true,
}

function M.sample(sampler, s, set)
  if s.prepare then s.prepare(set) end
  return sampler:timed_call(s, set)
end

return M
