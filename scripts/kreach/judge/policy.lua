-- kreach.judge.policy: what a judgment is asked to do, as plain data: the correctness policy
-- (kreach.judge.check), the timing options (kreach.judge.timing) and the measurement's options
-- (kreach.judge.measure), each a table of defaults and a function that applies a caller's
-- overrides and checks them. The parent (kreach.run.evaluate) resolves them once and sends the
-- result to the workers as it is; this is the only part of judge/ that run/ may require
-- (tests/layering.lua), so it requires nothing of the judge's code but the timing modes' tables
-- (kreach.judge.modes: plain tables that require nothing but kreach.kinds).
local kinds = require "kreach.kinds"
local modes = require "kreach.judge.modes"

local M = {}
local MODES = kinds.set(kinds.MODES)

-- ---- the correctness policy ----

M.CHECK = {
  trials = 5,
  seed = 1,
  -- the distribution of each trial, in turn (kreach.problem.other_generator)
  variants = { "default", "centred", "default", "shifted", "default" },
  repeat_trial = 1,          -- the trial whose call is repeated on the same inputs (0: none)
  guard_bytes = 65536,       -- poisoned guard before and after every output
  -- scale-invariant thresholds by dtype: relative L2 error and worst error over max |y*|
  tol = {
    f32 = { rel_l2 = 1e-4, max_scaled = 1e-3 },
    f16 = { rel_l2 = 4e-3, max_scaled = 2e-2 },
    bf16 = { rel_l2 = 1e-2, max_scaled = 6e-2 },
  },
  baseline_multiple = 4,     -- a threshold is never tighter than this times the baseline's error
  centred_cap = 0.5,         -- centred thresholds never looser than this (a constant scores 1)
  -- KernelBench's allclose tolerances, reported for comparison: today's by dtype, and v0.1's
  kernelbench_tol = { f32 = 1e-4, f16 = 1e-2, bf16 = 1e-2 },
  kernelbench_v01_tol = 1e-2,
}

local function merge(base, over)
  local r = {}
  for k, v in pairs(base) do r[k] = v end
  for k, v in pairs(over or {}) do
    if type(v) == "table" and type(r[k]) == "table" and #v == 0 then r[k] = merge(r[k], v) else r[k] = v end
  end
  return r
end

-- check(overrides) -> the correctness policy: the defaults with the given fields replaced (tables merged by key)
function M.check(over)
  local p = merge(M.CHECK, over)
  -- integers may arrive as floats (through JSON)
  for _, k in ipairs({ "trials", "seed", "repeat_trial", "guard_bytes" }) do
    local v = math.tointeger(p[k])
    if v == nil then error(("check: %s must be an integer, got %s"):format(k, tostring(p[k])), 0) end
    p[k] = v
  end
  if type(p.trials) ~= "number" or p.trials < 1 or p.trials ~= math.floor(p.trials) then
    error("check: trials must be a positive integer", 0)
  end
  if p.repeat_trial > p.trials then error("check: repeat_trial is after the last trial", 0) end
  return p
end

-- ---- the timing options ----

M.TIMING = {
  mode = kinds.MODES[1],
  flush_factor = 2,      -- cold mode writes this many times the L2 size before each sample
  warmup_min = 3,        -- warm-up: at least this many calls,
  warmup_max = 200,      -- at most this many,
  warmup_s = 1,          -- and at most this long per subject;
  settle_window = 3,     -- settled when the median of the last window of times is within
  settle_rel = 0.02,     -- settle_rel of the median of the window before it
  min_samples = 10,      -- the stopping rule (kreach.stats.should_stop)
  max_samples = 10000,
  rel_ci = 0.01,
  budget_s = 2,          -- wall time of the sampling loop, all subjects together
  level = 0.95,
  clock_every = 25,      -- read the clocks every this many rounds
  resamples = 2000,      -- bootstrap of the speedup's interval
  seed = 1,
  gate = true,           -- cold and hot: hold the stream while a sample's work is queued
  gate_ms = 100,         -- the longest a gate holds (a call that synchronises waits this long)
}

-- timing(over) -> the timing options: the defaults with `over` applied; raises for unknown keys or bad values.
function M.timing(over)
  local o = {}
  for k, v in pairs(M.TIMING) do o[k] = v end
  for k, v in pairs(over or {}) do
    if M.TIMING[k] == nil then error(("timing: unknown option '%s'"):format(tostring(k)), 2) end
    if type(v) ~= type(M.TIMING[k]) then
      error(("timing: option '%s' must be a %s, got %s"):format(k, type(M.TIMING[k]), type(v)), 2)
    end
    o[k] = v
  end
  if not MODES[o.mode] then error(("timing: unknown mode '%s' (%s)"):format(tostring(o.mode), table.concat(kinds.MODES, ", ")), 2) end
  for _, k in ipairs({ "warmup_min", "warmup_max", "settle_window", "min_samples", "max_samples",
                       "clock_every", "resamples", "seed" }) do
    local v = math.tointeger(o[k])
    if not v or v < 1 then error(("timing: option '%s' must be a positive integer, got %s"):format(k, tostring(o[k])), 2) end
    o[k] = v
  end
  for _, k in ipairs({ "flush_factor", "warmup_s", "settle_rel", "rel_ci", "budget_s", "level", "gate_ms" }) do
    if not (o[k] > 0) then error(("timing: option '%s' must be positive"):format(k), 2) end
  end
  -- a bound given alone moves the other's default with it (--max-samples 5: at most 5, so at
  -- least 5); both given the wrong way round is an error
  for _, pair in ipairs({ { "min_samples", "max_samples" }, { "warmup_min", "warmup_max" } }) do
    local lo, hi = pair[1], pair[2]
    if o[lo] > o[hi] then
      local given = over or {}
      if given[lo] == nil then o[lo] = o[hi]
      elseif given[hi] == nil then o[hi] = o[lo]
      else error(("timing: %s (%d) is more than %s (%d)"):format(lo, o[lo], hi, o[hi]), 2) end
    end
  end
  if o.level >= 1 then error(("timing: option 'level' must be below 1, got %s"):format(tostring(o.level)), 2) end
  if o.flush_factor < 2 and modes.get(o.mode).flush then
    error("timing: flush_factor below 2 does not make a sample cold", 2)
  end
  return o
end

-- pytorch_note(mode) -> why PyTorch is not timed in this timing mode (a mode that cannot time a
-- subject outside kreach's process), or nil: for the parent, which decides before any worker
-- whether to start PyTorch
function M.pytorch_note(mode)
  local m = modes.get(mode)
  if m.foreign == false then return m.no_pytorch end
  return nil
end

-- ---- the measurement ----

-- ---- builds ahead of the GPU (kreach.run.builds) ----

-- pause: whether the build workers are stopped (SIGSTOP) while a call is timed, so that no
-- build shares the machine's cores with a timed call (docs/evaluation.md says what was
-- measured; on until a measurement shows builds beside the timed calls leave them unchanged).
-- ahead: how many items per build worker are given to the pool past the one the GPU worker
-- takes.
M.BUILDS = { pause = true, ahead = 2 }

function M.builds(over)
  local r = merge(M.BUILDS, over)
  for k in pairs(r) do
    if M.BUILDS[k] == nil then error(("builds: unknown option '%s'"):format(tostring(k)), 2) end
  end
  if type(r.pause) ~= "boolean" then error("builds: pause must be true or false", 2) end
  if math.type(r.ahead) ~= "integer" or r.ahead < 1 then error("builds: ahead must be a whole number of at least 1", 2) end
  return r
end

M.MEASURE = { seed = 1, sol_margin = 0.25, sets = 2, memory_fraction = 0.8 }

function M.measure(over)
  local mo = {}
  for k, v in pairs(M.MEASURE) do mo[k] = v end
  for k, v in pairs(over or {}) do
    if M.MEASURE[k] == nil then error(("measure: unknown option '%s'"):format(k), 3) end
    mo[k] = v
  end
  local n = math.tointeger(mo.sets)
  if not n or n < 1 then error(("measure: sets must be a positive integer, got %s"):format(tostring(mo.sets)), 3) end
  mo.sets = n
  if type(mo.memory_fraction) ~= "number" or not (mo.memory_fraction > 0 and mo.memory_fraction <= 1) then
    error("measure: memory_fraction must be in (0, 1]", 3)
  end
  return mo
end

return M
