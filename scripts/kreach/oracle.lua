-- kreach.oracle: runs a problem's baseline (its dtype) and its oracle (f64, on the same rounded
-- inputs) once and measures how far the baseline's outputs are from the oracle's.
local ops = require "kreach.ops"
local device = require "kreach.device"

local M = {}

-- check(inst, {seed =}) -> { outputs = { {name =, rel_l2 =, max_abs =, max_ref =, nonfinite =,
-- mismatches =} ... } }. Frees everything it allocates.
function M.check(inst, opts)
  opts = opts or {}
  local lib = inst:ops(ops.get(false))
  local seed = opts.seed or 1
  local vals = inst:make_args(seed)
  inst:run_reference(vals)
  local ovals = inst:oracle_args(vals)
  -- the baseline's inputs are no longer needed at f32/bf16 once the oracle has its copies,
  -- except where they are shared (integer inputs)
  inst:run_reference(ovals)
  local result = { outputs = {} }
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
