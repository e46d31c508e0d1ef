-- kreach oracle <problem|suite> [--dtype D] [--seed N] [--size name=value ...]: runs the
-- baseline and the f64 oracle of a problem (or of every problem of a suite, one after another)
-- once and prints their relative L2 and maximum errors, and which implementation the baseline
-- ran where it can differ (a convolution: cuDNN's engine, or kreach's kernels). For a suite it
-- ends with how many baselines are within the correctness policy's thresholds of their dtype,
-- and exits 1 when one is not (or fails to run).
-- With --torch, both are compared instead with the problem's PyTorch model run in float64 on
-- the same inputs (a python3 with CUDA PyTorch: $KREACH_PYTHON or python3 on PATH): an
-- independent check of the reference, whose baseline and oracle share one Lua definition.
local kreach = require "kreach"
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local oracle = require "kreach.judge.oracle"
local problem = require "kreach.problem"
local pytorch = require "kreach.pytorch"
local host = require "kreach.host"
local text = require "kreach.text"

local function backend_text(b)
  if not b then return nil end
  if b.backend == "cudnn" then return ("cuDNN %s, %s"):format(tostring(b.version), tostring(b.algo)) end
  return ("kreach's %s kernels%s"):format(tostring(b.backend), b.why_not_cudnn and (" (not cuDNN: " .. text.clean(b.why_not_cudnn, 200) .. ")") or "")
end

-- heading(inst, args [, variant]) -> "name at dtype (seed N[, V inputs][, small sizes a=1 b=2])":
-- the input variant where `variant` asks and it is not the default, the sizes where --small
-- chose them
local function heading(inst, args, variant)
  local extra = ""
  if variant and args.variant ~= "default" then extra = ", " .. args.variant .. " inputs" end
  if args.small then
    local ks = {}
    for k in pairs(inst.sizes) do ks[#ks + 1] = k end
    table.sort(ks)
    for i, k in ipairs(ks) do ks[i] = ("%s=%s"):format(k, tostring(inst.sizes[k])) end
    extra = extra .. ", small sizes " .. table.concat(ks, " ")
  end
  return ("%s at %s (seed %d%s)"):format(inst.problem.name, inst.dtype, args.seed, extra)
end

local function print_one(inst, args, r)
  io.write(heading(inst, args), r.backend and (": " .. backend_text(r.backend)) or "", "\n")
  for _, o in ipairs(r.outputs) do
    if o.mismatches then
      io.write(("  %-10s %d of %d elements differ from the oracle\n"):format(o.name, o.mismatches, o.n))
    else
      io.write(("  %-10s relative L2 %.3e  max abs %.3e  (max |oracle| %.3e)%s\n"):format(o.name,
        o.rel_l2, o.max_abs, o.max_ref, o.nonfinite > 0 and ("  %d non-finite"):format(o.nonfinite) or ""))
    end
  end
end

local function metric_text(m)
  if m.mismatches then return ("%d of %d elements differ"):format(m.mismatches, m.n) end
  return ("relative L2 %.3e  worst %.3e of max |PyTorch|%s"):format(m.rel_l2, m.max_scaled,
    (m.nonfinite > 0 or m.special_mismatch > 0) and ("  %d non-finite, %d special mismatches"):format(m.nonfinite, m.special_mismatch) or "")
end

local function print_torch(inst, args, r)
  io.write(heading(inst, args, true), " against PyTorch in float64\n")
  for _, o in ipairs(r.outputs) do
    io.write(("  %-10s baseline  %s\n"):format(o.name, metric_text(o.baseline)))
    io.write(("  %-10s oracle    %s\n"):format("", metric_text(o.oracle)))
  end
  local t = r.oracle_tolerance
  if t then
    io.write(("  the oracle is held to relative L2 %.3g and worst %.3g here: %s\n"):format(t.rel_l2, t.max_scaled, t.why))
  end
end

-- --json writes one JSON document (docs/cli.md, "JSON output"): for one problem its object; for
-- a suite the summary with every problem's object under "results", in the suite's order (the
-- text output is the one that shows each problem as it is done).
local function write_json(suite_name, items, summary)
  if not suite_name and #items == 1 then
    io.write(json.encode(items[1]), "\n")
    return
  end
  summary.results = json.array(items)
  io.write(json.encode(summary), "\n")
end

-- --torch: each instance against PyTorch's f64 model, one Python worker for them all
local function run_torch(args, insts, suite_name)
  -- on the host device (KREACH_DEVICE=host) PyTorch runs on the CPU (kreach.judge.oracle's runner)
  local py, session, why, serr
  if not host.active() then
    py, why = pytorch.find()
    if not py then errors.raise(errors.STATUS.load, "--torch needs a python3 with CUDA PyTorch: " .. why, "python") end
    session, serr = pytorch.start{ python = py.python }
    if not session then errors.raise(errors.STATUS.load, "cannot start PyTorch: " .. serr, "python") end
  end
  local ok_n, bad, items = 0, {}, {}
  for _, inst in ipairs(insts) do
    local name = inst.problem.name
    local okc, r = pcall(oracle.torch_check, inst, session, { seed = args.seed, variant = args.variant })
    local good, why2
    if okc then good, why2 = oracle.torch_within(r, inst.dtype)
    else good, why2 = false, "the check failed: " .. errors.message(r) end
    if good then ok_n = ok_n + 1 else bad[#bad + 1] = ("%s (%s)"):format(name, why2) end
    if args.json then
      items[#items + 1] = { problem = name, dtype = inst.dtype, seed = args.seed, variant = args.variant, against = "pytorch_f64",
                            sizes = inst.sizes,
                            outputs = okc and r.outputs or nil, oracle_tolerance = okc and r.oracle_tolerance or nil,
                            within = good, why = why2 }
    else
      if okc then print_torch(inst, args, r) else io.write(("%s at %s: %s\n"):format(name, inst.dtype, why2)) end
      if okc and not good then io.write("  outside the thresholds: ", why2, "\n") end
    end
    io.flush()
    if session and session.dead then
      session:close()
      session, serr = pytorch.start{ python = py.python }
      if not session then errors.raise(errors.STATUS.failed, "cannot restart PyTorch: " .. serr) end
    end
  end
  if session then session:close() end
  local summary = ("%d of %d problems%s at %s agree with PyTorch in float64 (the baseline within its dtype's thresholds, the oracle within relative L2 %.0e and worst %.0e)%s"):format(
    ok_n, #insts, suite_name and (" of " .. suite_name) or "", insts[1] and insts[1].dtype or args.dtype,
    oracle.TORCH_F64_TOL.rel_l2, oracle.TORCH_F64_TOL.max_scaled, #bad > 0 and ("; not: " .. table.concat(bad, "; ")) or "")
  if args.json then
    write_json(suite_name, items, { suite = suite_name, against = "pytorch_f64", within = ok_n, problems = #insts, outside = json.array(bad) })
  else
    io.write(summary, "\n")
  end
  return #bad == 0 and 0 or 1
end

return {
  summary = "Run a problem's (or a suite's) baseline and fp64 oracle; print their errors (a GPU, or the host device with --small).",
  parser = function(p)
    p:argument("problem", "A problem file, id or name, or a suite (kreach list).")
    p:option("--seed", "Seed of the inputs.", "1"):convert(cli.nonnegative_integer)
    p:option("--variant", "The inputs' distribution: the problem's own (default), or the check's other trials' (centred, shifted).", "default")
      :choices({ "default", "centred", "shifted" })
    cli.problem_options(p)
    p:flag("--torch", "Compare the baseline and the oracle with the problem's PyTorch model in float64 instead (CUDA PyTorch; on the host device, PyTorch on the CPU).")
    p:flag("--small", "At small sizes: every size cut to 8 (up to 64 where the problem needs more), the batch to 2; for the host device (--device host), or a quick check.")
    p:flag("--json", "Print one JSON object (a suite: the summary, with each problem's object under results).")
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    if args.small and next(sizes) then errors.usage("--small and --size: give one or the other") end
    -- the instance: at the shipped sizes (a --size where the problem has it), or small ones
    local function instance(p, own)
      if args.small then return (oracle.small(p, args.dtype)) end
      local inst = p:instantiate{ dtype = args.dtype, sizes = own }
      inst:validate()
      return inst
    end
    -- On the host device an instance's tensors are host memory, which Linux grants beyond what
    -- it can back: refused here, before anything is allocated, where its tensors and their f64
    -- copies would not fit in the free memory.
    local function host_fits(insts)
      if not host.active() then return end
      local free = kreach.device().free_memory_bytes or 0
      for _, inst in ipairs(insts) do
        local need = (inst.bytes or 0) * (1 + 8 / kreach.dtype_size(inst.dtype))
        if free > 0 and need > free then
          errors.usage(("%s at %s needs about %.3g GB on the host device (its tensors and their f64 copies), and %.3g GB is free: the host device runs at small sizes (--small, or --size)"):format(
            inst.problem.name, inst.dtype, need / 1e9, free / 1e9))
        end
      end
    end
    local suite
    for _, s in ipairs(problem.suites()) do if s == args.problem then suite = problem.load_suite(s) end end
    if not suite then
      local p = kreach.load_problem(args.problem)
      local inst = instance(p, sizes)
      kreach.require_device()
      host_fits({ inst })
      if args.torch then return run_torch(args, { inst }, nil) end
        local r = oracle.check(inst, { seed = args.seed, variant = args.variant })
      if args.json then
        io.write(json.encode({ problem = p.name, dtype = inst.dtype, seed = args.seed, outputs = r.outputs, sizes = inst.sizes,
                               backend = r.backend }), "\n")
        return 0
      end
      print_one(inst, args, r)
      return 0
    end
    -- a suite: every problem at its shipped sizes (a --size applies where the problem has it)
    local insts = {}
    for i, f in ipairs(suite.files) do
      local p = problem.load(f)
      local own = {}
      for k, v in pairs(sizes) do if p.def.sizes and p.def.sizes[k] ~= nil then own[k] = v end end
      insts[i] = instance(p, own)
    end
    kreach.require_device()
    host_fits(insts)
    if args.torch then return run_torch(args, insts, suite.name) end
    local ok_n, bad, items = 0, {}, {}
    for _, inst in ipairs(insts) do
      local name = inst.problem.name
        local okc, r = pcall(oracle.check, inst, { seed = args.seed, variant = args.variant })
      local good, why
      if okc then
        good, why = oracle.within(r, inst.dtype)
      else
        good, why = false, "the check failed: " .. errors.message(r)
      end
      if good then ok_n = ok_n + 1 else bad[#bad + 1] = ("%s (%s)"):format(name, why) end
      if args.json then
        items[#items + 1] = { problem = name, dtype = inst.dtype, seed = args.seed, outputs = okc and r.outputs or nil, sizes = inst.sizes,
                              backend = okc and r.backend or nil, within = good, why = why }
      else
        if okc then print_one(inst, args, r) else io.write(("%s at %s: %s\n"):format(name, inst.dtype, why)) end
        if okc and not good then io.write("  outside the thresholds: ", why, "\n") end
      end
      io.flush()
    end
    local summary = ("%d of %d baselines of %s at %s within their thresholds of the fp64 oracle%s"):format(ok_n, #insts,
      suite.name, insts[1] and insts[1].dtype or args.dtype, #bad > 0 and ("; not: " .. table.concat(bad, "; ")) or "")
    if args.json then
      write_json(suite.name, items, { suite = suite.name, within = ok_n, problems = #insts, outside = json.array(bad) })
    else
      io.write(summary, "\n")
    end
    return #bad == 0 and 0 or 1
  end,
}
