-- kreach worker <job> ...: the worker side of kreach.worker (docs/candidates.md). Started by
-- the harness, never by hand: it announces its phases and ends with one "result" line.
--   kreach worker lint <problem> <candidate> [--dtype D] [--size n=v] [--arch A]
--   kreach worker check <problem> <candidate> [--dtype D] [--size n=v] [--policy JSON]
local kreach = require "kreach"
local worker = require "kreach.worker"

return {
  summary = "(internal) The worker process the harness runs candidates in.",
  hidden = true,
  parser = function(p)
    p:argument("job", "What to do."):choices({ "lint", "check" })
    p:argument("problem", "A problem file, id or name.")
    p:argument("candidate", "The candidate file.")
    require("kreach.cli").problem_options(p)
    p:option("--arch", "Compile for this architecture.")
    p:option("--policy", "The correctness policy's overrides, as JSON (check).")
  end,
  run = function(args)
    worker.phase("setup")
    local sizes, err = require("kreach.cli").sizes(args.size)
    if not sizes then
      worker.result({ verdict = require("kreach.verdict").new("invalid_candidate", err) })
      return 0
    end
    local inst = kreach.load_problem(args.problem):instantiate{ dtype = args.dtype, sizes = sizes }
    inst:validate()
    if args.job == "check" then
      local policy = args.policy and require("cjson").decode(args.policy) or nil
      worker.result(require("kreach.check").run(inst, args.candidate, { policy = policy, phase = worker.phase }))
      return 0
    end
    local v, report = require("kreach.candidate").lint(inst, args.candidate,
      { arch = args.arch, phase = worker.phase })
    worker.result({ verdict = v, report = report })
    return 0
  end,
}
