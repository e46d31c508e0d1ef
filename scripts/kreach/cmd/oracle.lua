-- kreach oracle <problem> [--dtype D] [--seed N] [--size name=value ...]: runs the problem's
-- baseline and its f64 oracle once and prints their relative L2 and maximum errors.
local kreach = require "kreach"
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local oracle = require "kreach.oracle"

return {
  summary = "Run a problem's baseline and fp64 oracle; print their errors (needs a GPU).",
  parser = function(p)
    p:argument("problem", "A problem file, id or name.")
    p:option("--seed", "Seed of the inputs.", "1"):convert(cli.nonnegative_integer)
    cli.problem_options(p)
    p:flag("--json", "Print one JSON object.")
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    local p = kreach.load_problem(args.problem)
    local inst = p:instantiate{ dtype = args.dtype, sizes = sizes }
    inst:validate()
    kreach.require_device()
    local r = oracle.check(inst, { seed = args.seed })
    if args.json then
      io.write(json.encode({ problem = p.name, dtype = inst.dtype, seed = args.seed,
        outputs = r.outputs }), "\n")
      return 0
    end
    io.write(("%s at %s (seed %d)\n"):format(p.name, inst.dtype, args.seed))
    for _, o in ipairs(r.outputs) do
      if o.mismatches then
        io.write(("  %-10s %d of %d elements differ from the oracle\n"):format(o.name, o.mismatches, o.n))
      else
        io.write(("  %-10s relative L2 %.3e  max abs %.3e  (max |oracle| %.3e)%s\n"):format(o.name,
          o.rel_l2, o.max_abs, o.max_ref, o.nonfinite > 0 and ("  %d non-finite"):format(o.nonfinite) or ""))
      end
    end
    return 0
  end,
}
