-- kreach oracle <problem|suite> [--dtype D] [--seed N] [--size name=value ...]: runs the
-- baseline and the f64 oracle of a problem (or of every problem of a suite, one after another)
-- once and prints their relative L2 and maximum errors, and which implementation the baseline
-- ran where it can differ (a convolution: cuDNN's engine, or kreach's kernels). For a suite it
-- ends with how many baselines are within the correctness policy's thresholds of their dtype,
-- and exits 1 when one is not (or fails to run).
-- With --torch, both are compared instead with the problem's PyTorch model run in float64 on
-- the same inputs (a python3 with CUDA PyTorch: $KREACH_PYTHON or python3 on PATH): an
-- independent check of the reference, whose baseline and oracle share one Lua definition.
-- Loading, checking and judging the instances, the summary and the JSON document are
-- kreach.judge.oracle's (instances, run); this file parses, calls and prints.
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local oracle = require "kreach.judge.oracle"
local plan = require "kreach.run.plan"
local progress = require "kreach.progress"
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

-- show(args, insts, tracker) -> the function that prints each instance's result as it is done
-- (the text output; --json prints only the document at the end), the progress told (a suite:
-- the instance done, then the next one started)
local function show(args, insts, tracker)
  local i = 1
  return function(inst, r, good, why)
    if tracker then tracker:finished() end
    if not args.json then
      if r then
        if args.torch then print_torch(inst, args, r) else print_one(inst, args, r) end
      else
        io.write(("%s at %s: %s\n"):format(inst.problem.name, inst.dtype, why))
      end
      if r and good == false then io.write("  outside the thresholds: ", why, "\n") end
    end
    io.flush()
    i = i + 1
    if tracker and insts[i] then tracker:start(insts[i].problem.name) end
  end
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
    p:option("--shard", "Only shard i of N of a suite's problems (i from 1; as kreach bench's shards).")
      :argname("<i/N>"):convert(plan.parse_shard)
    p:flag("--json", "Print one JSON object (a suite: the summary, with each problem's object under results).")
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    if args.small and next(sizes) then errors.usage("--small and --size: give one or the other") end
    local insts, suite = oracle.instances(args.problem, { dtype = args.dtype, sizes = sizes, small = args.small })
    insts = plan.select_shard(insts, args.shard, function(inst) return plan.problem_key(inst.problem.name) end)
    -- over a suite, the progress on standard error (kreach.progress): a line every 10% off a terminal
    local tracker = suite and progress.new{ prefix = "kreach oracle", total = #insts, every_pct = 10 } or nil
    if tracker and insts[1] then tracker:start(insts[1].problem.name) end
    local ok, rep = pcall(oracle.run, insts, suite, { seed = args.seed, variant = args.variant, dtype = args.dtype, torch = args.torch },
      show(args, insts, tracker))
    -- the status line erased before the summary, or before the error's message
    if tracker then tracker:close() end
    if not ok then error(rep, 0) end
    if args.json then
      io.write(json.encode(rep.json), "\n")
    elseif rep.summary then
      io.write(rep.summary, "\n")
    end
    return rep.ok and 0 or 1
  end,
}
