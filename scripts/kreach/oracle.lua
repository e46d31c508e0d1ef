-- kreach.oracle: runs a problem's baseline (its dtype) and its oracle (f64, on the same rounded
-- inputs) once and measures how far the baseline's outputs are from the oracle's.
local check = require "kreach.check"
local ops = require "kreach.ops"
local device = require "kreach.device"

local M = {}

-- check(inst, {seed =, variant =}) -> { outputs = { {name =, rel_l2 =, max_abs =, max_ref =,
-- nonfinite =, mismatches =} ... }, backend = what the baseline ran where it can differ (a
-- convolution: { backend = "cudnn", algo =, version = } or kreach's kernels) }. variant: the
-- inputs' distribution, a trial's ("default", the default; "centred" or "shifted"). Frees
-- everything it allocates.
function M.check(inst, opts)
  opts = opts or {}
  local ops_lib = ops.get(false)
  local lib = inst:ops(ops_lib)
  local seed = opts.seed or 1
  local vals = inst:make_args(seed, { variant = opts.variant })
  ops_lib.conv_last = nil
  inst:run_reference(vals)
  local backend = ops_lib.conv_last
  local ovals = inst:oracle_args(vals)
  -- the baseline's inputs are no longer needed at f32/bf16 once the oracle has its copies,
  -- except where they are shared (integer inputs)
  inst:run_reference(ovals)
  local result = { outputs = {}, backend = backend }
  for i, a in ipairs(inst.args) do
    if a.kind == "output" then
      local m = lib.compare(vals[i], ovals[i])
      m.name = a.name
      result.outputs[#result.outputs + 1] = m
    end
  end
  inst:free_oracle(vals, ovals)
  return result
end

-- within(result, dtype) -> true, or false and why: every output of an oracle check within the
-- correctness policy's thresholds of its dtype (kreach.check's DEFAULTS.tol: relative L2 and
-- the worst error over max |oracle|), integer outputs exact.
function M.within(result, dtype)
  local tol = check.thresholds(check.DEFAULTS, dtype, nil)
  for _, o in ipairs(result.outputs) do
    if o.mismatches then
      if o.mismatches > 0 then return false, ("%s: %d of %d elements differ"):format(o.name, o.mismatches, o.n) end
    else
      local scaled = o.max_ref > 0 and o.max_abs / o.max_ref or o.max_abs
      if not (o.rel_l2 <= tol.rel_l2) or not (scaled <= tol.max_scaled) then
        return false, ("%s: relative L2 %.3g (threshold %.3g), worst %.3g of max |oracle| (threshold %.3g)"):format(
          o.name, o.rel_l2, tol.rel_l2, scaled, tol.max_scaled)
      end
    end
  end
  return true
end

-- time_ms(inst, {warmup =, repeats =, seed =}) -> median and min milliseconds of the baseline,
-- hot (no L2 flush, back to back), each call between two events; the methodology of the
-- PyTorch-eager reference table (3 warm-ups, median of 20).
function M.time_ms(inst, opts)
  opts = opts or {}
  local vals = inst:make_args(opts.seed or 1)
  local ref = inst.problem.def.reference
  local lib = inst:ops(ops.get(false))
  local n = #inst.args
  local call = function() ref(lib, table.unpack(vals, 1, n)) end
  for _ = 1, opts.warmup or 3 do call() end
  local ts = {}
  for r = 1, opts.repeats or 20 do ts[r] = device.time_ms(call) end
  inst:free(vals)
  table.sort(ts)
  local med = #ts % 2 == 1 and ts[(#ts + 1) // 2] or (ts[#ts // 2] + ts[#ts // 2 + 1]) / 2
  return med, ts[1]
end

return M
