-- kreach.judge.check: the correctness protocol (docs/correctness.md). One candidate on one problem
-- instance, in the worker process that owns the GPU context: trials with fresh inputs (some
-- from other distributions of the inputs' domains), outputs poisoned and fenced by guard
-- regions, inputs hashed before and after every call, one call repeated on the same inputs,
-- the baseline and the fp64 oracle computed only after the candidate has run, metrics on the
-- GPU, and the tolerance policy with its trivial-output guard. The result is one verdict and
-- every trial's numbers.
local core = require "kreach.core"
local tensor = require "kreach.core.tensor"
local candidate = require "kreach.candidate"
local ops = require "kreach.ops"
local jpolicy = require "kreach.judge.policy"
local verdict = require "kreach.verdict"

local M = {}

-- ---- the policy (kreach.judge.policy) ----

M.DEFAULTS = jpolicy.CHECK
M.policy = jpolicy.check


-- The thresholds an output is judged by in one trial: the dtype's, loosened to a multiple of
-- the baseline's own errors on the same inputs; the centred ones capped.
function M.thresholds(policy, dtype, base)
  local t = policy.tol[dtype] or policy.tol.f32
  local k = policy.baseline_multiple
  local function floor(x, b) return math.max(x, k * (b or 0)) end
  local th = {
    rel_l2 = floor(t.rel_l2, base and base.rel_l2),
    max_scaled = floor(t.max_scaled, base and base.max_scaled),
  }
  th.centred_l2 = math.min(policy.centred_cap, floor(t.rel_l2, base and base.centred_l2))
  th.centred_max = math.min(policy.centred_cap, floor(t.max_scaled, base and base.centred_max))
  return th
end

-- judge(m, th) -> ok, reason, detail, degenerate: one float output's metrics against its
-- thresholds. Degenerate: the best constant output (the oracle's mean) would pass the
-- relative thresholds, so the output is judged on the centred metrics as well.
function M.judge(m, th)
  if m.mismatches then
    if m.mismatches == 0 then return true end
    return false, "wrong_values", ("%d of %d elements differ"):format(m.mismatches, m.n)
  end
  if m.nonfinite > 0 then
    return false, "non_finite", ("%d of %d outputs are NaN or infinite where the oracle is finite"):format(m.nonfinite, m.n)
  end
  if m.special_mismatch > 0 then
    return false, "wrong_values", ("%d outputs differ from the oracle's non-finite values"):format(m.special_mismatch)
  end
  local degenerate = m.n >= 2 and m.sum_c2 > 0 and m.const_l2 <= th.rel_l2 and m.const_max <= th.max_scaled
  if m.rel_l2 > th.rel_l2 or m.max_scaled > th.max_scaled then
    return false, "wrong_values", ("relative L2 error %.3g (threshold %.3g), worst error %.3g of max |y*| (threshold %.3g)"):format(
      m.rel_l2, th.rel_l2, m.max_scaled, th.max_scaled), degenerate
  end
  if degenerate and (m.centred_l2 > th.centred_l2 or m.centred_max > th.centred_max) then
    return false, "trivial_output", ("the outputs are nearly constant (a constant scores %.3g); around their mean the error is %.3g (threshold %.3g), worst %.3g (threshold %.3g)"):format(
      m.const_l2, m.centred_l2, th.centred_l2, m.centred_max, th.centred_max), degenerate
  end
  return true, nil, nil, degenerate
end

-- ---- the worker's side ----

local function sync_or_raise()
  core.synchronize()
end

-- Outputs inside poisoned guards: the view the candidate gets, and the whole allocation.
local function guarded_outputs(inst, policy)
  local outs = {}
  for i, a in ipairs(inst.args) do
    if a.kind == "output" then
      local n = math.max(a.numel, 0)
      local g = math.max(1, policy.guard_bytes // tensor.dtype_size(a.dtype))
      local whole = tensor.empty({ n + 2 * g }, a.dtype):poison()
      local view = whole:narrow(1, g + 1, n):view(a.shape)
      outs[i] = { index = i, name = a.name, whole = whole, view = view, guard = g, n = n }
    end
  end
  return outs
end

-- Elements of the guards no longer poisoned: before and after the output.
local function guard_damage(o)
  local before = o.guard - o.whole:narrow(1, 1, o.guard):count_poisoned()
  local after = o.guard - o.whole:narrow(1, o.guard + o.n + 1, o.guard):count_poisoned()
  return before, after
end

local function free_outputs(outs)
  for _, o in pairs(outs) do
    o.view:free()
    o.whole:free()
  end
end

-- Hashes of every tensor the candidate reads (inputs and parameters).
function M.hash_inputs(inst, vals, lib)
  local h = {}
  for i, a in ipairs(inst.args) do
    if a.kind == "input" or a.kind == "param" then h[i] = lib.hash(vals[i]) end
  end
  return h
end

-- Scrubs and frees tensors that held the answer, so no later call can find it in freed memory.
local function scrub(t)
  if t and t:is_live() then
    t:fill(0)
    t:free()
  end
end

local Runner = {}
Runner.__index = Runner

-- One call of the candidate: outputs fenced and poisoned, inputs hashed around it. Returns a
-- table { outs =, untouched = {[i] = n}, guards = {[i] = {before, after}}, mutated = {names} },
-- or raises a verdict (as a table with .verdict).
function Runner:call(vals, label)
  local cand, inst, lib = self.cand, self.inst, self.lib
  local outs = guarded_outputs(inst, self.policy)
  local args = {}
  for i = 1, #inst.args do args[i] = vals[i] end
  for i, o in pairs(outs) do args[i] = o.view end
  local before = M.hash_inputs(inst, vals, lib)
  sync_or_raise()
  self.phase(label .. ".forward")
  -- the candidate, of any format, through its opened object (kreach.candidate): the names of
  -- inputs it changed in copies of its own (a KernelBench-format one's in the Python worker)
  local own_mutated, v = cand:check_call(vals, outs, args, lib)
  if not own_mutated then
    free_outputs(outs)
    error({ verdict = v }, 0)
  end
  local sok, serr = pcall(sync_or_raise)
  cand:release()
  if not sok then
    local msg = tostring(serr):gsub("^[^:\n]+%.lua:%d+: ", "")
    error({ verdict = verdict.new("runtime_error", "the candidate's kernels failed: " .. msg) }, 0)
  end
  self.phase(label .. ".checks")
  local r = { outs = outs, untouched = {}, guards = {}, mutated = {} }
  local after = M.hash_inputs(inst, vals, lib)
  for i, a in ipairs(inst.args) do
    if before[i] and before[i] ~= after[i] then r.mutated[#r.mutated + 1] = a.name end
  end
  for _, name in ipairs(own_mutated) do r.mutated[#r.mutated + 1] = name end
  for i, o in pairs(outs) do
    local b, f = guard_damage(o)
    r.guards[i] = { b, f }
    if b > 0 or f > 0 then
      error({ verdict = verdict.new("runtime_error", ("out-of-bounds write: the candidate wrote %d element%s before and %d after output '%s' (%d elements of %s), into the harness's guard regions"):format(
        b, b == 1 and "" or "s", f, o.name, o.n, inst.args[i].dtype)) }, 0)
    end
    r.untouched[i] = o.view:count_poisoned()
  end
  return r
end

-- The first failure of a call's bookkeeping (before values are compared), or nil.
local function bookkeeping_failure(inst, r)
  for i, a in ipairs(inst.args) do
    local u = r.untouched[i]
    if u and u > 0 then
      local n = r.outs[i].n
      local v = verdict.new("incorrect", "incomplete_write",
        ("output '%s': %d of %d elements never written (%.4g%% written)"):format(a.name, u, n, 100 * (n - u) / n))
      v.written_fraction = (n - u) / n
      return v
    end
  end
  if #r.mutated > 0 then
    return verdict.new("incorrect", "input_mutation", ("the candidate changed its input%s %s"):format(
      #r.mutated == 1 and "" or "s", table.concat(r.mutated, ", ")))
  end
end
M.bookkeeping_failure = bookkeeping_failure -- for the tests (tests/lua/check_spec.lua)

-- Metrics as JSON can carry them: non-finite numbers as strings.
function M.clean_metrics(m)
  local r = {}
  for k, v in pairs(m) do
    if type(v) == "number" and (v ~= v or v == math.huge or v == -math.huge) then r[k] = tostring(v) else r[k] = v end
  end
  return r
end

-- Runs one trial; returns its record and a failing verdict or nil.
function Runner:trial(t)
  local inst, lib, policy = self.inst, self.lib, self.policy
  local variant = policy.variants[(t - 1) % #policy.variants + 1]
  local seed = policy.seed * 7919 + t
  local label = "trial" .. t
  self.phase(label .. ".inputs")
  local vals, drawn = inst:make_args(seed, { variant = variant })
  -- make_args allocates outputs of its own: the candidate gets fenced ones instead
  for i, a in ipairs(inst.args) do
    if a.kind == "output" then vals[i]:free(); vals[i] = nil end
  end
  local rec = { trial = t, seed = seed, variant = variant, inputs = {}, outputs = {} }
  for i, a in ipairs(inst.args) do
    if a.kind == "input" then rec.inputs[#rec.inputs + 1] = { name = a.name, dist = drawn[i] } end
  end
  local held = {}
  local function cleanup()
    for _, r in ipairs(held) do free_outputs(r.outs) end
    for i, a in ipairs(inst.args) do
      if a.kind ~= "scalar" and a.kind ~= "output" and vals[i] and vals[i]:is_live() then vals[i]:free() end
    end
  end
  local ok, res = pcall(function()
    local r1 = self:call(vals, label)
    held[#held + 1] = r1
    local fail = bookkeeping_failure(inst, r1)
    if fail then return fail end
    local r2
    if t == policy.repeat_trial then
      r2 = self:call(vals, label .. ".repeat")
      held[#held + 1] = r2
      local f2 = bookkeeping_failure(inst, r2)
      if f2 then
        f2.detail = "in the repeated call on the same inputs"
        return f2
      end
    end
    -- the answer exists only from here on: the baseline at the problem's dtype, the oracle
    self.phase(label .. ".oracle")
    local bvals = {}
    for i, v in pairs(vals) do bvals[i] = v end
    for i, a in ipairs(inst.args) do
      if a.kind == "output" then bvals[i] = tensor.empty(a.shape, a.dtype):poison() end
    end
    inst:run_reference(bvals)
    local ovals = inst:oracle_args(bvals)
    inst:run_reference(ovals)
    local failure
    local kb_tol = policy.kernelbench_tol[inst.dtype] or 1e-4
    local kb = { pass = true, pass_v01 = true, tol = kb_tol, tol_v01 = policy.kernelbench_v01_tol }
    for i, a in ipairs(inst.args) do
      if a.kind == "output" then
        local ref = ovals[i]
        local mopts = { tols = { kb_tol, policy.kernelbench_v01_tol } }
        local base = lib.metrics(bvals[i], ref, mopts)
        local th = M.thresholds(policy, inst.dtype, base.rel_l2 and base or nil)
        local m = lib.metrics(r1.outs[i].view, ref, mopts)
        local okv, reason, detail, degenerate = M.judge(m, th)
        local bok, breason = M.judge(base, th)
        local o = { name = a.name, metrics = M.clean_metrics(m), baseline = M.clean_metrics(base), thresholds = th,
                    degenerate = degenerate or false, ok = okv, reason = reason }
        if m.allclose_fail then
          kb.pass = kb.pass and m.allclose_fail[1] == 0
          kb.pass_v01 = kb.pass_v01 and m.allclose_fail[2] == 0
        elseif m.mismatches then
          kb.pass = kb.pass and m.mismatches == 0
          kb.pass_v01 = kb.pass_v01 and m.mismatches == 0
        end
        if not bok then
          -- the baseline itself fails these inputs: they cannot tell right from wrong here
          o.unjudged = ("the baseline fails this trial (%s), so it is not judged"):format(breason)
          self.warnings[#self.warnings + 1] = ("trial %d, output '%s': %s"):format(t, a.name, o.unjudged)
        elseif not okv and not failure then
          failure = verdict.new("incorrect", reason, ("trial %d (%s inputs), output '%s': %s"):format(t, variant, a.name, detail))
        end
        if r2 and not failure then
          local m2 = lib.metrics(r2.outs[i].view, ref, mopts)
          local ok2, reason2, detail2 = M.judge(m2, th)
          local between = lib.metrics(r2.outs[i].view, r1.outs[i].view, mopts)
          o.repeat_metrics = M.clean_metrics(m2)
          o.repeat_difference = M.clean_metrics(between)
          if not bok then -- judged above as unjudgeable
          elseif not ok2 then
            failure = verdict.new("incorrect", "nondeterministic", ("trial %d: the first call passed, the repeated call on the same inputs did not (%s: %s)"):format(t, reason2, detail2))
          elseif between.mismatches and between.mismatches > 0
              or between.rel_l2 and (between.nonfinite > 0 or between.rel_l2 > th.rel_l2 or between.max_scaled > th.max_scaled) then
            failure = verdict.new("incorrect", "nondeterministic", ("trial %d: two calls on the same inputs differ by more than rounding (relative L2 %.3g between them)"):format(
              t, between.rel_l2 or between.mismatches))
          end
        end
        rec.outputs[#rec.outputs + 1] = o
      end
    end
    rec.kernelbench = kb
    for i, a in ipairs(inst.args) do
      if a.kind == "output" then scrub(ovals[i]); scrub(bvals[i]) end
      if a.kind ~= "scalar" and a.kind ~= "output" and ovals[i] ~= vals[i] then scrub(ovals[i]) end
    end
    return failure
  end)
  cleanup()
  if not ok then
    if type(res) == "table" and res.verdict then return rec, res.verdict end
    -- anything else is the harness's error, or a CUDA error the candidate left behind
    local msg = tostring(type(res) == "table" and (res.msg or res) or res)
    return rec, verdict.new("runtime_error", ("trial %d: %s"):format(t, msg))
  end
  return rec, res
end

-- run(inst, path, {policy =, phase =, arch =, python =, source =}) -> result table: { verdict,
-- trials, warnings, policy, compile_ms, kernels (a compiled candidate's), python (a
-- KernelBench-format one's load) }. The candidate, of any format, is opened through
-- kreach.candidate (source: its bytes as the worker read them); a KernelBench-format candidate
-- (a .py path) needs python = { session = a kreach.pytorch session, dirs = its build
-- directories, seal = bool }.
function M.run(inst, path, opts)
  opts = opts or {}
  local phase = opts.phase or function() end
  local policy = M.policy(opts.policy)
  local result = { problem = inst.problem.name, dtype = inst.dtype, sizes = inst.sizes, candidate = path,
                   trials = {}, warnings = {}, policy = policy }
  local fmt = candidate.kind(path)
  if fmt.needs_python and not opts.python then error("check.run: a KernelBench-format candidate needs the Python worker (opts.python)", 2) end
  local cand, v = fmt.open(inst, path, { phase = phase, arch = opts.arch, steps = policy.steps, python = opts.python,
                                         source = opts.source })
  if not cand then result.verdict = v; return result end
  result.compile_ms, result.kernels = cand.compile_ms, cand.kernels
  local ok, bv = cand:bind(nil)
  result.python = cand.python
  if not ok then result.verdict = bv; return result end
  local runner = setmetatable({ inst = inst, cand = cand, policy = policy, phase = phase,
                                lib = inst:ops(ops.get(false)), warnings = result.warnings }, Runner)
  local res = M.finish(result, runner)
  cand:close()
  return res
end

-- finish(result, runner) -> result: the trials of a loaded candidate, and the verdict.
function M.finish(result, runner)
  local policy = runner.policy
  for t = 1, policy.trials do
    local rec, v = runner:trial(t)
    result.trials[#result.trials + 1] = rec
    if v then result.verdict = v; return result end
  end
  local judged = 0
  for _, rec in ipairs(result.trials) do
    for _, o in ipairs(rec.outputs) do if not o.unjudged then judged = judged + 1 end end
  end
  if judged == 0 then
    result.verdict = verdict.new("skipped", "the baseline itself fails every trial, so nothing could be judged")
  else
    result.verdict = verdict.correct()
  end
  return result
end

return M
