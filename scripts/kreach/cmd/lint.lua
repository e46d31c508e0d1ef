-- kreach lint <problem> <candidate.lua>: judges what can be judged before a candidate runs:
-- the file loads in the sandbox, its NVRTC options are allowed, its source compiles, and its
-- forward, run on shape-only tensors, launches its own kernels with arguments that fit their
-- declarations. Prints the verdict it would get (invalid_candidate, compile_error) or "ok".
local kreach = require "kreach"

return {
  summary = "Check a candidate before running it: sandbox, options, compile, dry run.",
  parser = function(p)
    p:argument("problem", "A problem file, id or name.")
    p:argument("candidate", "The candidate file.")
    require("kreach.cli").problem_options(p)
    p:option("--arch", "Compile for this architecture (default: the GPU's; sm_90 without one).")
    p:flag("--json", "Print one JSON object.")
  end,
  run = function(args)
    local sizes, err = require("kreach.cli").sizes(args.size)
    if not sizes then
      io.stderr:write("kreach lint: ", err, "\n")
      return 2
    end
    local inst = kreach.load_problem(args.problem):instantiate{ dtype = args.dtype, sizes = sizes }
    inst:validate()
    local arch = args.arch or (not kreach.has_device() and "sm_90" or nil)
    local v, report = require("kreach.candidate").lint(inst, args.candidate, { arch = arch })
    if args.json then
      io.write(require("cjson").encode({ problem = inst.problem.name, candidate = args.candidate,
        verdict = v or require("cjson").null, report = report or require("cjson").null }), "\n")
    elseif v then
      io.write(("%s: %s\n  %s\n"):format(args.candidate, v.verdict, (v.reason or ""):gsub("\n", "\n  ")))
    else
      io.write(("%s: ok (dry run: %d launch%s of %s; compiled for %s)\n"):format(args.candidate,
        report.launches, report.launches == 1 and "" or "es", table.concat(report.kernels, ", "), report.arch))
    end
    return v and 1 or 0
  end,
}
