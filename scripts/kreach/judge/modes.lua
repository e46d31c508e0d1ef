-- kreach.judge.modes: the timing modes (docs/timing.md), one table each in judge/modes/<name>.lua,
-- for each name of kinds.MODES (the one list of their names: the CLI's choices and the policy's
-- check take it from there). The timing engine (kreach.judge.timing) and the measurement
-- (kreach.judge.measure) ask a mode what they need instead of testing its name:
--   name        the mode's name (its file's)
--   flush       true: an L2 flush before every sample (so the bytes come from DRAM, and the
--               speed of light's bytes bound holds); a subject in another process is given the
--               flush's bytes to write itself
--   gated       true: the stream's gate holds the stream while a sample's events and call are
--               queued (timing's `gate` option can still turn it off)
--   sample(sampler, s, set) -> ms: one sample of kreach's own subject s on input set `set`,
--               with what comes before it outside the timed region (s.prepare, a flush); the
--               sampler (kreach.judge.timing's) gives :timed_call(s, set), the call between two
--               events under the gate, and .dev, .o (the options), .sets
--   setup(s, sets, dev), teardown(s)   optional: after a subject's plain calls, before its
--               warm-up (graph mode captures it), and once the measurement ends
--   round_sets(round, sets) optional -> the input sets a sampling round uses (default: one in
--               turn)
--   poison_baseline_for_candidate   true: the baseline's outputs are poisoned before every
--               candidate call too (kreach.judge.measure.poisoned_before)
--   foreign     false where a subject outside kreach's process (a KernelBench-format candidate,
--               PyTorch) cannot be timed; then `no_candidate` and `no_pytorch` say why
-- A mode named in kinds.MODES without its file is an error when this module loads; a file
-- without its name is caught by tests/lua/modes_spec.lua.
local kinds = require "kreach.kinds"

local M = {}

local MODES = {}
for _, name in ipairs(kinds.MODES) do
  local ok, mode = pcall(require, "kreach.judge.modes." .. name) -- require: a mode is found by its name (judge/modes/<name>.lua)
  if not ok then error(("kreach.judge.modes: the timing mode '%s' of kinds.MODES has no file judge/modes/%s.lua: %s"):format(name, name, tostring(mode)), 0) end
  if type(mode) ~= "table" or mode.name ~= name or type(mode.sample) ~= "function" then
    error(("kreach.judge.modes: judge/modes/%s.lua must return a table with name = %q and a sample function"):format(name, name), 0)
  end
  MODES[name] = mode
end

-- get(name) -> the mode's table (an error for a name kinds.MODES does not list)
function M.get(name)
  local mode = MODES[name]
  if not mode then error(("timing: unknown mode '%s' (%s)"):format(tostring(name), table.concat(kinds.MODES, ", ")), 2) end
  return mode
end

-- where(flag) -> the names of the modes whose field `flag` is not false, in kinds.MODES's order
function M.where(flag)
  local names = {}
  for _, name in ipairs(kinds.MODES) do
    if MODES[name][flag] ~= false then names[#names + 1] = name end
  end
  return names
end

return M
