-- kreach.judge.oracle: runs a problem's baseline (its dtype) and its oracle (f64, on the same rounded
-- inputs) once and measures how far the baseline's outputs are from the oracle's; or both against
-- the problem's PyTorch model in float64. instances() and run() are `kreach oracle`'s work
-- (cmd/oracle.lua): a problem or every problem of a suite, judged, with the summary and the
-- JSON document the command prints.
local check = require "kreach.judge.check"
local core = require "kreach.core"
local ops = require "kreach.ops"
local device = require "kreach.device"
local errors = require "kreach.errors"
local export = require "kreach.problem.export"
local host = require "kreach.host"
local json = require "kreach.json"
local output = require "kreach.atomic"
local problem = require "kreach.problem"
local pytorch = require "kreach.pytorch"
local proc = require "kreach.core.proc"
local tensor = require "kreach.core.tensor"
local tensors = require "kreach.tensors"
local text = require "kreach.text"

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
-- correctness policy's thresholds of its dtype (kreach.judge.check's DEFAULTS.tol: relative L2 and
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

-- ---- against PyTorch: an implementation that is not kreach's ----

-- The thresholds of the oracle (f64) against PyTorch's model run in float64 on the same
-- inputs: two fp64 computations of the same formula in other orders agree to far better than
-- this unless the formula differs.
M.TORCH_F64_TOL = { rel_l2 = 1e-9, max_scaled = 1e-7 }

-- Where PyTorch's own float64 is known not to be exact: its kernel computes in a lower
-- precision at every dtype. There the oracle is held to that kernel's error instead of
-- TORCH_F64_TOL (problem name -> {device = "cuda" or "cpu", rel_l2, max_scaled, why}); the
-- baseline's thresholds are its dtype's, as everywhere.
M.TORCH_F64_KNOWN = {
  ["28_HardSigmoid"] = { device = "cuda", rel_l2 = 3.1e-8, max_scaled = 3.1e-8,
    why = "PyTorch's CUDA hardsigmoid multiplies by 1.0f / 6.0f, a float constant, at every dtype "
      .. "(aten/src/ATen/native/cuda/ActivationHardsigmoidKernel.cu), so its float64 answer is "
      .. "6 * float(1/6) - 1 = 2.98e-8 too large, relatively, wherever it is not 0; the oracle "
      .. "measured 2.98e-8 against it on the H200 (2026-12-05). Its CPU kernel is exact." },
}

-- oracle_tolerance(name, device) -> the oracle's thresholds against PyTorch's f64 on `device`
-- ("cuda" or "cpu"), and the reason where they are not TORCH_F64_TOL
function M.oracle_tolerance(name, device)
  local k = M.TORCH_F64_KNOWN[name]
  if k and k.device == device then return k, k.why end
  return M.TORCH_F64_TOL
end

-- The instance's f64 twin, for PyTorch: float arguments at f64 (the oracle's), the rest as is.
local function f64_twin(inst)
  local args = {}
  for i, a in ipairs(inst.args) do
    local c = setmetatable({}, { __index = a })
    if a.dtype == "f32" or a.dtype == "bf16" or a.dtype == "f16" then c.dtype = "f64" end
    args[i] = c
  end
  return setmetatable({ problem = inst.problem, dtype = "f64", sizes = inst.sizes, args = args },
    getmetatable(inst))
end

local function metrics_of(lib, y, ref)
  local m = lib.metrics(y, ref)
  if m.mismatches then return { n = m.n, mismatches = m.mismatches } end
  return { n = m.n, rel_l2 = m.rel_l2, max_scaled = m.max_scaled, max_abs = m.max_abs, max_ref = m.max_ref,
           nonfinite = m.nonfinite, special_mismatch = m.special_mismatch }
end

-- The Python process that runs the models on the CPU (scripts/kreach/torch_cpu.py), kept for
-- the process's later calls: torch is imported once.
local cpu_worker
M.CPU_TIMEOUT_S = 600

local function cpu_request(python, dir)
  if cpu_worker and (cpu_worker.python ~= python or cpu_worker.dead) then
    cpu_worker.w:kill(); cpu_worker.w:wait(); cpu_worker.w:free()
    cpu_worker = nil
  end
  if not cpu_worker then
    local w, err = proc.spawn({ python, "-B", "-c", pytorch.script_source("torch_cpu.py") }, { watch = true })
    if not w then error(("cannot start %s: %s"):format(python, tostring(err)), 0) end
    cpu_worker = { w = w, python = python }
  end
  local w = cpu_worker.w
  local ok, werr = w:write(dir .. "\n")
  if not ok then cpu_worker.dead = true; error("PyTorch on the CPU is gone: " .. tostring(werr), 0) end
  local line, why = w:read_line(M.CPU_TIMEOUT_S)
  local r = line and select(2, pcall(json.decode, line))
  if type(r) ~= "table" then
    if why == "timeout" then w:kill() end
    cpu_worker.dead = true
    error(("PyTorch on the CPU (%s) %s: %s"):format(python, line and "broke the protocol" or tostring(why or "ended"),
      text.clean((line or "") .. w:stderr():sub(-1500), 1600)), 0)
  end
  return r
end

-- torch_cpu(twin, ovals, python) -> PyTorch's outputs by argument index (host tensors) and
-- a function that frees them
local function torch_cpu(twin, ovals, python)
  local dir, derr = output.tmpdir()
  if not dir then error(derr, 0) end
  local ok, res = pcall(function()
    local args = {}
    for i, a in ipairs(twin.args) do
      args[i] = { name = a.name, kind = a.kind, shape = json.array(a.kind ~= "scalar" and a.shape or {}),
                  dtype = a.dtype, value = a.value }
      if a.kind == "input" or a.kind == "param" then
        local f = assert(io.open(("%s/a%d.bin"):format(dir, i), "wb"))
        f:write(ovals[i]:to_bytes())
        f:close()
      end
    end
    local f = assert(io.open(dir .. "/spec.json", "w"))
    f:write(json.encode({ inputs = pytorch.inputs_expr(twin), args = json.array(args) }))
    f:close()
    f = assert(io.open(dir .. "/m.py", "w"))
    f:write(export.kernelbench(twin))
    f:close()
    local r = cpu_request(python or pytorch.python(), dir)
    if r.error then error(text.clean(r.error .. (r.traceback and ("\n" .. r.traceback) or ""), 2500), 0) end
    local outs = {}
    for i, a in ipairs(twin.args) do
      if a.kind == "output" then
        local g = assert(io.open(("%s/out%d.bin"):format(dir, i), "rb"))
        outs[i] = tensor.from_bytes(g:read("a"), a.shape, a.dtype)
        g:close()
      end
    end
    return outs
  end)
  output.remove_tree(dir)
  if not ok then error(res, 0) end
  return res, function()
    for _, t in pairs(res) do t:free() end
    return true
  end
end

-- torch_gpu(twin, ovals, session, set) -> PyTorch's outputs by argument index (the Python
-- worker's buffers of `set`, mapped) and a function that unmaps and frees them (true, or nil
-- and why)
local function torch_gpu(twin, ovals, session, set)
  local slot = "oracle_f64"
  local ok, why = session:load(slot, twin)
  -- the model's own f64 parameters are freed before their mirrors are made (release)
  if ok then ok, why = session:mirror(set, twin, ovals, slot) end
  if ok then
    session:refresh(set)
    ok, why = session:call(slot, set, { copy = true })
  end
  if not ok then
    -- the model is forgotten even where the set was never made: a failed problem keeps
    -- nothing on the device for the next (dlrm-bench/5 ran out of memory after 4 failed)
    if not session.dead then session:drop(set, slot) end
    error(why, 0)
  end
  return session:outputs(set), function() return session:drop(set, slot) end
end

-- torch_check(inst, session, {seed =, variant =}) -> { outputs = { {name =, baseline = metrics,
-- oracle = metrics} ... } }: the baseline (the instance's dtype) and the oracle (f64) against
-- the problem's PyTorch model run in float64 (kreach.pytorch's Python worker, a session from
-- pytorch.start) on the same inputs and parameters (the oracle's: the baseline's rounded values
-- at f64). Metrics: lib.metrics's rel_l2, max_scaled, max_abs, max_ref, nonfinite and
-- special_mismatch for a float output, { n, mismatches } for an integer one. An independent
-- check of the reference: the baseline and the oracle come from the same Lua reference, so a
-- wrong formula is the same in both, and only another implementation shows it. Raises when
-- PyTorch fails. Frees everything it allocates.
-- On the host device (KREACH_DEVICE=host, no GPU), PyTorch runs on the CPU in its own process
-- (scripts/kreach/torch_cpu.py, python3 from kreach.pytorch.python()) on the oracle's inputs
-- written to files, and `session` is not used (opts.python: the interpreter, default
-- kreach.pytorch.python()).
function M.torch_check(inst, session, opts)
  opts = opts or {}
  local ops_lib = ops.get(false)
  local lib = inst:ops(ops_lib)
  local vals = inst:make_args(opts.seed or 1, { variant = opts.variant })
  inst:run_reference(vals)
  local ovals = inst:oracle_args(vals)
  inst:run_reference(ovals)
  -- the baseline's own inputs are no longer needed (its outputs are): freed before PyTorch
  -- makes its f64 model, so that the largest instances fit (dlrm-bench/4's tables: 26 GB at
  -- f32 here, 52 GB at f64 in the oracle and again in PyTorch's model)
  for i, a in ipairs(inst.args) do
    local v = vals[i]
    if a.kind ~= "output" and a.kind ~= "scalar" and v ~= ovals[i] and v and v:is_live() then v:free() end
  end
  local twin = f64_twin(inst)
  local on_host = host.active()
  local ok, touts, release
  if on_host then ok, touts, release = pcall(torch_cpu, twin, ovals, opts.python)
  else ok, touts, release = pcall(torch_gpu, twin, ovals, session, opts.set or 1) end
  if not ok then
    inst:free_oracle(vals, ovals)
    error(("%s: PyTorch's model at f64%s failed: %s"):format(inst.problem.name, on_host and " (CPU)" or "",
      tostring(touts)), 0)
  end
  local result = { outputs = {} }
  local mok, merr = pcall(function()
    for i, a in ipairs(inst.args) do
      if a.kind == "output" then
        result.outputs[#result.outputs + 1] = { name = a.name, baseline = metrics_of(lib, vals[i], touts[i]),
                                                oracle = metrics_of(lib, ovals[i], touts[i]) }
      end
    end
  end)
  inst:free_oracle(vals, ovals)
  local rok, rwhy = release()
  if not mok then error(merr, 0) end
  if not rok then error(("%s: the Python worker did not free its buffers: %s"):format(inst.problem.name, tostring(rwhy)), 0) end
  local tol, why = M.oracle_tolerance(inst.problem.name, on_host and "cpu" or "cuda")
  if why then result.oracle_tolerance = { rel_l2 = tol.rel_l2, max_scaled = tol.max_scaled, why = why } end
  return result
end

-- sizes that are not extents of a tensor, or whose value the inputs depend on (kept by small)
local KEEP = { kernel_size = true, stride = true, padding = true, dilation = true, reduce_dim = true,
  dim = true, num_groups = true, num_classes = true, groups = true, output_padding = true }

-- small(p, dtype [, {caps =, batch =}]) -> the problem's instance at small sizes, and the cap
-- used: every size above the cap cut to it (a window, a stride, a group count or a dimension's
-- index of 64 or less stays), the cap the first of `caps` (default 8, 16, 32, 64) at which the
-- problem validates, batch_size at most `batch` (default 2). For the values check, on the host
-- device above all (kreach oracle --small). Raises when no cap validates.
function M.small(p, dtype, o)
  o = o or {}
  local caps, batch = o.caps or { 8, 16, 32, 64 }, o.batch or 2
  local why
  for _, cap in ipairs(caps) do
    local s = {}
    for k, v in pairs(p.sizes) do
      if v > cap and not (KEEP[k] and v <= 64) then s[k] = cap end
    end
    if p.sizes.batch_size and p.sizes.batch_size > batch then s.batch_size = batch end
    local ok, inst = pcall(p.instantiate, p, { dtype = dtype, sizes = s })
    local vok, verr = ok and pcall(inst.validate, inst)
    if ok and vok then return inst, cap end
    why = tostring(ok and verr or inst)
  end
  error(("%s: no small sizes validate (every size cut to %d to %d): %s; give sizes with --size instead"):format(
    p.name, caps[1], caps[#caps], why), 0)
end

-- torch_within(result, dtype [, loose]) -> true, or false and why: the baseline within the
-- correctness policy's thresholds of its dtype of PyTorch's f64 answer, the oracle within
-- TORCH_F64_TOL (or result.oracle_tolerance: TORCH_F64_KNOWN), integer outputs exact.
-- loose: { [output name] = {rel_l2 =, max_scaled =} }, the baseline's thresholds for outputs
-- stated to be ill-conditioned at this dtype.
function M.torch_within(result, dtype, loose)
  local tol = check.thresholds(check.DEFAULTS, dtype, nil)
  local function judge(who, m, t)
    if m.mismatches then
      if m.mismatches > 0 then return ("%s: %d of %d elements differ"):format(who, m.mismatches, m.n) end
      return nil
    end
    if m.nonfinite > 0 or m.special_mismatch > 0 then
      return ("%s: %d non-finite where PyTorch is finite, %d differing from PyTorch's non-finite values"):format(
        who, m.nonfinite, m.special_mismatch)
    end
    if not (m.rel_l2 <= t.rel_l2) or not (m.max_scaled <= t.max_scaled) then
      return ("%s: relative L2 %.3g (threshold %.3g), worst %.3g of max |PyTorch| (threshold %.3g)"):format(
        who, m.rel_l2, t.rel_l2, m.max_scaled, t.max_scaled)
    end
  end
  for _, o in ipairs(result.outputs) do
    local why = judge(o.name .. ", the baseline", o.baseline, loose and loose[o.name] or tol)
      or judge(o.name .. ", the oracle", o.oracle, result.oracle_tolerance or M.TORCH_F64_TOL)
    if why then return false, why end
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

-- ---- kreach oracle: a problem or a suite, judged ----

-- On the host device an instance's tensors are host memory, which Linux grants beyond what it
-- can back: refused (a usage error) before anything is allocated, where its tensors and their
-- f64 copies would not fit in the free memory.
local function host_fits(insts)
  if not host.active() then return end
  local free = core.device().free_memory_bytes or 0
  for _, inst in ipairs(insts) do
    local need = (inst.bytes or 0) * (1 + 8 / tensors.dtype_size(inst.dtype))
    if free > 0 and need > free then
      errors.usage(("%s at %s needs about %.3g GB on the host device (its tensors and their f64 copies), and %.3g GB is free: the host device runs at small sizes (--small, or --size)"):format(
        inst.problem.name, inst.dtype, need / 1e9, free / 1e9))
    end
  end
end

-- instances(what, {dtype =, sizes =, small =}) -> the instances to check, and the suite's name
-- (nil for one problem). what: a suite's name (every problem of it, one after another), or a
-- problem's file, id or name. Each instance is at the shipped sizes (a size of `sizes` where the
-- problem has it), or at small sizes with small (M.small). Then requires the device, and on the
-- host device refuses an instance that would not fit.
function M.instances(what, o)
  local function instance(p, own)
    if o.small then return (M.small(p, o.dtype)) end
    local inst = p:instantiate{ dtype = o.dtype, sizes = own }
    inst:validate()
    return inst
  end
  local suite
  for _, s in ipairs(problem.suites()) do if s == what then suite = problem.load_suite(s) end end
  local insts = {}
  if not suite then
    insts[1] = instance(problem.load(problem.resolve(what)), o.sizes)
  else
    for i, f in ipairs(suite.files) do
      local p = problem.load(f)
      local own = {}
      for k, v in pairs(o.sizes) do if p.def.sizes and p.def.sizes[k] ~= nil then own[k] = v end end
      insts[i] = instance(p, own)
    end
  end
  device.require()
  host_fits(insts)
  return insts, suite and suite.name
end

-- The report's JSON document (docs/cli.md, "JSON output"): for one problem its object; for a
-- suite the summary with every problem's object under "results", in the suite's order.
local function document(suite_name, items, summary)
  if not suite_name and #items == 1 then return items[1] end
  summary.results = json.array(items)
  return summary
end

-- Every instance's baseline against the oracle (a suite), judged by M.within
local function run_oracle(insts, suite_name, o, show)
  local ok_n, bad, items = 0, {}, {}
  for _, inst in ipairs(insts) do
    local name = inst.problem.name
    local okc, r = pcall(M.check, inst, { seed = o.seed, variant = o.variant })
    local good, why
    if okc then
      good, why = M.within(r, inst.dtype)
    else
      good, why = false, "the check failed: " .. errors.message(r)
    end
    if good then ok_n = ok_n + 1 else bad[#bad + 1] = ("%s (%s)"):format(name, why) end
    items[#items + 1] = { problem = name, dtype = inst.dtype, seed = o.seed, outputs = okc and r.outputs or nil, sizes = inst.sizes,
                          backend = okc and r.backend or nil, within = good, why = why }
    show(inst, okc and r or nil, good, why)
  end
  local summary = ("%d of %d baselines of %s at %s within their thresholds of the fp64 oracle%s"):format(ok_n, #insts,
    suite_name, insts[1] and insts[1].dtype or o.dtype, #bad > 0 and ("; not: " .. table.concat(bad, "; ")) or "")
  return { ok = #bad == 0, summary = summary,
           json = document(suite_name, items, { suite = suite_name, within = ok_n, problems = #insts, outside = json.array(bad) }) }
end

-- The PyTorch worker for --torch (none on the host device, where PyTorch runs on the CPU in
-- M.torch_check's own process): the session and the interpreter found
local function torch_session()
  if host.active() then return nil, nil end
  local py, why = pytorch.find()
  if not py then errors.raise(errors.STATUS.load, "--torch needs a python3 with CUDA PyTorch: " .. why, "python") end
  local session, serr = pytorch.start{ python = py.python }
  if not session then errors.raise(errors.STATUS.load, "cannot start PyTorch: " .. serr, "python") end
  return session, py
end

-- Every instance against PyTorch's f64 model, one Python worker for them all, judged by
-- M.torch_within
local function run_torch(insts, suite_name, o, show)
  local session, py = torch_session()
  local serr
  local ok_n, bad, items = 0, {}, {}
  for _, inst in ipairs(insts) do
    local name = inst.problem.name
    local okc, r = pcall(M.torch_check, inst, session, { seed = o.seed, variant = o.variant })
    local good, why2
    if okc then good, why2 = M.torch_within(r, inst.dtype)
    else good, why2 = false, "the check failed: " .. errors.message(r) end
    if good then ok_n = ok_n + 1 else bad[#bad + 1] = ("%s (%s)"):format(name, why2) end
    items[#items + 1] = { problem = name, dtype = inst.dtype, seed = o.seed, variant = o.variant, against = "pytorch_f64",
                          sizes = inst.sizes,
                          outputs = okc and r.outputs or nil, oracle_tolerance = okc and r.oracle_tolerance or nil,
                          within = good, why = why2 }
    show(inst, okc and r or nil, good, why2)
    if session and session.dead then
      session:close()
      session, serr = pytorch.start{ python = py.python }
      if not session then errors.raise(errors.STATUS.failed, "cannot restart PyTorch: " .. serr) end
    end
  end
  if session then session:close() end
  local summary = ("%d of %d problems%s at %s agree with PyTorch in float64 (the baseline within its dtype's thresholds, the oracle within relative L2 %.0e and worst %.0e)%s"):format(
    ok_n, #insts, suite_name and (" of " .. suite_name) or "", insts[1] and insts[1].dtype or o.dtype,
    M.TORCH_F64_TOL.rel_l2, M.TORCH_F64_TOL.max_scaled, #bad > 0 and ("; not: " .. table.concat(bad, "; ")) or "")
  return { ok = #bad == 0, summary = summary,
           json = document(suite_name, items, { suite = suite_name, against = "pytorch_f64", within = ok_n, problems = #insts, outside = json.array(bad) }) }
end

-- run(insts, suite_name, {seed =, variant =, dtype =, torch =}, show) -> { ok =, summary =, json = }:
-- kreach oracle's report of M.instances's instances. Each is checked (M.check, or with torch
-- M.torch_check) and judged as it comes, then show(inst, result, within, why) is called (result
-- nil where the check failed, why then its message; within and why nil for one problem against
-- the oracle, which is not judged and whose failure is raised). ok: every instance within its
-- thresholds; summary: the closing line (nil for one problem against the oracle); json: the
-- document --json writes.
function M.run(insts, suite_name, o, show)
  if o.torch then return run_torch(insts, suite_name, o, show) end
  if suite_name then return run_oracle(insts, suite_name, o, show) end
  local inst = insts[1]
  local r = M.check(inst, { seed = o.seed, variant = o.variant })
  show(inst, r)
  return { ok = true, json = { problem = inst.problem.name, dtype = inst.dtype, seed = o.seed, outputs = r.outputs, sizes = inst.sizes,
                               backend = r.backend } }
end

return M
