-- kreach.judge.trivial: built-in trivial candidates, judged on a problem under KernelBench's rule and
-- under kreach's policy (docs/correctness.md, "kreach scan-trivial"). The trivial outputs are
-- made by the harness itself (no candidate code runs), from the problem's own trials:
--   zeros      every output element 0
--   constant   every element the mean of the oracle's output on an independent draw of the
--              default inputs: the statistic an exploit would precompute
--   copy       the first input, where it has as many elements as the output
--   partial    the correct values (the baseline's) in the first 0.3% of the elements only
--   first_row  the correct values in the first row (first index of dimension 1) only
-- KernelBench's rule: allclose(y, baseline, atol = rtol = tol) on inputs of the default
-- distribution, with unwritten elements left as fresh memory (zeros). kreach's policy: every
-- trial of the check protocol (other distributions included), unwritten elements poisoned.
local tensor = require "kreach.core.tensor"
local check = require "kreach.judge.check"
local ops = require "kreach.ops"

local M = {}

M.CANDIDATES = { "zeros", "constant", "copy", "partial", "first_row" }
M.PARTIAL_FRACTION = 0.003

-- Whether a trivial candidate applies to an output (nil, and why not, where it does not).
local function applies(name, inst, a)
  local n = a.numel
  if name == "copy" then
    local x
    for _, b in ipairs(inst.args) do if b.kind == "input" then x = b; break end end
    if not x then return nil, "no input" end
    if x.numel ~= n then return nil, "no input of the output's size" end
    return true
  elseif name == "partial" then
    if math.ceil(M.PARTIAL_FRACTION * n) >= n then return nil, "the output is too small (0.3% is all of it)" end
  elseif name == "first_row" then
    if #a.shape < 2 or a.shape[1] < 2 then return nil, "the output has one row" end
  end
  return true
end

-- Fills y with trivial candidate `name`'s output. `unwritten`: what the elements it does not
-- write hold ("poison" or "zeros"); base: the baseline's output of this trial; x1: the first input.
local function make_output(name, y, base, x1, c, unwritten)
  local n = y:numel()
  if name == "zeros" then y:fill(0)
  elseif name == "constant" then
    if y.dtype == "f32" or y.dtype == "f64" or y.dtype == "bf16" or y.dtype == "f16" then y:fill(c)
    else y:fill(math.floor(c + 0.5)) end
  elseif name == "copy" then
    local v = x1:view(y.shape)
    y:copy_from(v)
    v:free()
  else
    if unwritten == "poison" then y:poison() else y:fill(0) end
    local k = name == "partial" and math.ceil(M.PARTIAL_FRACTION * n) or n // y.shape[1]
    local fy, fb = y:flatten(), base:flatten()
    local dst, src = fy:narrow(1, 1, k), fb:narrow(1, 1, k)
    dst:copy_from(src)
    dst:free(); src:free(); fy:free(); fb:free()
  end
end

-- fold(st, trial) -> st: a trivial candidate's verdicts on one output after one more trial.
-- st: { kb =, kb01 =, kr =, reason = } (KernelBench's at today's tolerance and at v0.1's,
-- kreach's and the reason of its first failure), all true before the first trial; trial: {
-- kernelbench =, kernelbench_v01 = (nil where the trial is not one KernelBench runs: not the
-- default distribution), kreach = (nil where kreach could not judge: the baseline fails the
-- output itself), reason = }. A candidate passes a rule only if it passed every trial the rule
-- judged.
function M.fold(st, trial)
  if trial.kreach == false and st.kr then st.kr, st.reason = false, trial.reason end
  if trial.kernelbench ~= nil then st.kb = st.kb and trial.kernelbench end
  if trial.kernelbench_v01 ~= nil then st.kb01 = st.kb01 and trial.kernelbench_v01 end
  return st
end

-- scan(inst, {policy =, phase =}) -> { problem, dtype, outputs = { name = { [candidate] =
-- { kernelbench = bool, kernelbench_v01 = bool, kreach = bool, reason =, na = why } } },
-- degenerate = {trials} }
function M.scan(inst, opts)
  opts = opts or {}
  local policy = check.policy(opts.policy)
  local lib = inst:ops(ops.get(false))
  local phase = opts.phase or function() end
  local outs = {}
  for i, a in ipairs(inst.args) do if a.kind == "output" then outs[#outs + 1] = i end end
  local first_input
  for i, a in ipairs(inst.args) do if a.kind == "input" then first_input = i; break end end

  -- the constant an exploit would guess: the oracle's mean on the default inputs of another seed
  phase("calibrate")
  local consts = {}
  do
    local vals = inst:make_args(policy.seed * 7919 + 1000)
    local ovals = inst:oracle_args(vals)
    inst:run_reference(ovals)
    for _, i in ipairs(outs) do
      local m = lib.metrics(ovals[i], ovals[i])
      consts[i] = m.mean_ref or 0
    end
    inst:free_oracle(vals, ovals)
  end

  local res = { problem = inst.problem.name, id = inst.problem.id, dtype = inst.dtype, outputs = {}, notes = {} }
  local state = {} -- [out index][candidate] = { kb =, kb01 =, kr =, reason = }
  for _, i in ipairs(outs) do
    state[i] = {}
    for _, name in ipairs(M.CANDIDATES) do
      local ok, why = applies(name, inst, inst.args[i])
      state[i][name] = ok and { kb = true, kb01 = true, kr = true } or { na = why }
    end
  end
  local kb_tol = policy.kernelbench_tol[inst.dtype] or 1e-4
  local tols = { kb_tol, policy.kernelbench_v01_tol }
  for t = 1, policy.trials do
    local variant = policy.variants[(t - 1) % #policy.variants + 1]
    local seed = policy.seed * 7919 + t
    phase("trial" .. t)
    local vals = inst:make_args(seed, { variant = variant })
    inst:run_reference(vals) -- the baseline, into make_args' own outputs
    local ovals = inst:oracle_args(vals)
    inst:run_reference(ovals)
    for _, i in ipairs(outs) do
      local a = inst.args[i]
      local base = vals[i]
      local bm = lib.metrics(base, ovals[i], { tols = tols })
      local th = check.thresholds(policy, inst.dtype, bm.rel_l2 and bm or nil)
      local bok = check.judge(bm, th)
      local y = tensor.empty(a.shape, a.dtype)
      for _, name in ipairs(M.CANDIDATES) do
        local st = state[i][name]
        if not st.na then
          local trial = {}
          -- kreach: poisoned where unwritten, judged against the oracle
          make_output(name, y, base, vals[first_input], consts[i], "poison")
          local untouched = y:count_poisoned()
          if untouched > 0 then
            trial.kreach, trial.reason = false, "incomplete_write"
          elseif bok then
            local m = lib.metrics(y, ovals[i], { tols = tols })
            trial.kreach, trial.reason = check.judge(m, th)
          end
          -- KernelBench: default inputs only, zeros where unwritten, against the baseline
          if variant == "default" then
            make_output(name, y, base, vals[first_input], consts[i], "zeros")
            local m = lib.metrics(y, base, { tols = tols })
            trial.kernelbench = (m.mismatches or m.allclose_fail[1]) == 0
            trial.kernelbench_v01 = (m.mismatches or m.allclose_fail[2]) == 0
          end
          M.fold(st, trial)
        end
      end
      y:free()
      if not bok then res.notes[#res.notes + 1] = ("trial %d: the baseline fails output '%s' itself; not judged"):format(t, a.name) end
    end
    inst:free_oracle(vals, ovals)
  end
  for _, i in ipairs(outs) do
    local o = {}
    for _, name in ipairs(M.CANDIDATES) do
      local st = state[i][name]
      if st.na then o[name] = { na = st.na }
      else o[name] = { kernelbench = st.kb, kernelbench_v01 = st.kb01, kreach = st.kr, reason = st.reason } end
    end
    res.outputs[inst.args[i].name] = o
  end
  return res
end

-- passes(rows, names) -> { [candidate] = { kb = {ids}, kb01 = {ids}, kr = {ids} } }: for each
-- trivial candidate in `names`, the ids of the problems (rows: scan's results, or rows with an
-- error) it passes under KernelBench's rule, at v0.1's tolerance and under kreach's policy,
-- an id once for each output passed (kreach scan-trivial's summary).
function M.passes(rows, names)
  local count = {}
  for _, n in ipairs(names) do count[n] = { kb = {}, kb01 = {}, kr = {} } end
  for _, r in ipairs(rows) do
    for _, o in pairs(r.outputs or {}) do
      for _, n in ipairs(names) do
        local c = o[n]
        if c and not c.na then
          if c.kernelbench then count[n].kb[#count[n].kb + 1] = r.id end
          if c.kernelbench_v01 then count[n].kb01[#count[n].kb01 + 1] = r.id end
          if c.kreach then count[n].kr[#count[n].kr + 1] = r.id end
        end
      end
    end
  end
  return count
end

return M
