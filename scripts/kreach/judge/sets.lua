-- kreach.judge.sets: the input sets the timed calls of kreach.judge.measure rotate over
-- (docs/timing.md): how many fit in the device's memory (plan), and the sets themselves: each
-- at addresses of its own, with the candidate's own outputs beside the baseline's, new values
-- drawn into them before every sampling round (the correctness trials' generators, seeds no
-- trial uses), their copies in the Python worker (mirror), and their freeing. It owns the
-- seeds of the timed inputs and the redraws' temporaries.
local core = require "kreach.core"
local tensor = require "kreach.core.tensor"

local M = {}

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

-- plan(inst, mo, with_candidate, free_bytes, with_pytorch) -> { requested, used,
-- per_set_bytes, fallback (why fewer were used, or nil) }
function M.plan(inst, mo, with_candidate, free_bytes, with_pytorch)
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

-- ---- the sets ----

local Sets = {}
Sets.__index = Sets

-- new(inst, plan, mo, salt, with_candidate) -> the sets: sets[k] (k = 1..plan.used) = { index =
-- k, vals = the baseline's arguments (inputs, parameters, scalars, its outputs), cvals = the
-- candidate's (the same inputs, outputs of its own; with a candidate only), th = per-output
-- thresholds once judged, hashes = of the inputs after the last draw (the caller's) }.
-- Every draw takes the next seed: never a correctness trial's (those are seed*7919 + t); salt
-- (kreach.run.evaluate.draw_salt: 2^40 or more, or 0) makes them unpredictable.
function M.new(inst, plan, mo, salt, with_candidate)
  local self = setmetatable({ inst = inst, draws = 0, base_seed = mo.seed * 7919 + 104729 + salt, cache = {},
                              mirrored = false }, Sets)
  for k = 1, plan.used do
    local s = { vals = inst:make_args(self:next_seed()), th = {} }
    if with_candidate then
      s.cvals = {}
      for i = 1, #inst.args do s.cvals[i] = s.vals[i] end
      for i, a in ipairs(inst.args) do
        if a.kind == "output" then s.cvals[i] = tensor.empty(a.shape, a.dtype):poison() end
      end
    end
    s.index = k
    self[k] = s
  end
  -- the redraws' temporaries, kept from round to round (Instance:redraw): drawn once here, so
  -- that no round allocates or frees them between timed calls
  inst:redraw(self[1].vals, self:next_seed(), self.cache)
  core.synchronize()
  return self
end

function Sets:next_seed()
  self.draws = self.draws + 1
  return self.base_seed + self.draws
end

-- redraw(k): new values into set k's inputs (the next seed), and into the Python worker's
-- copies when it has them
function Sets:redraw(k)
  self.inst:redraw(self[k].vals, self:next_seed(), self.cache)
  if self.mirrored then self.session:refresh(k) end
end

-- mirror(session) -> true | nil, why: the Python worker's copies of every set, refreshed with
-- kreach's values (and with every redraw from now on)
function Sets:mirror(session)
  for k = 1, #self do
    local ok, why = session:mirror(k, self.inst, self[k].vals)
    if not ok then return nil, why end
    session:refresh(k)
  end
  self.session, self.mirrored = session, true
  return true
end

function Sets:free()
  local inst = self.inst
  inst:free_cache(self.cache)
  for _, s in ipairs(self) do
    if s.cvals then
      for i, a in ipairs(inst.args) do
        if a.kind == "output" and s.cvals[i]:is_live() then s.cvals[i]:free() end
      end
    end
    inst:free(s.vals)
  end
end

return M
