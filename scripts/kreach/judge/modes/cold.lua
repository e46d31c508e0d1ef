-- kreach.judge.modes.cold: the default timing mode (docs/timing.md). Before each sample, outside
-- the timed region, the subject prepares it (the caller poisons the call's outputs), then
-- persisting L2 lines are reset and a buffer of flush_factor x the L2 size is written and read
-- back, so that the call starts from a cold L2; the call runs under the stream's gate. The
-- fields are kreach.judge.modes's.
local M = {
  name = "cold",
  flush = true,
  gated = true,
  -- the baseline's answer is poisoned before each candidate call as well: the L2 flush that
  -- follows makes that free (kreach.judge.measure.poisoned_before)
  poison_baseline_for_candidate = true,
  foreign = true,
}

function M.sample(sampler, s, set)
  if s.prepare then s.prepare(set) end
  sampler.flush_bytes = sampler.dev.flush(sampler.o.flush_factor)
  return sampler:timed_call(s, set)
end

return M
