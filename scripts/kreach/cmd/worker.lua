-- kreach worker <job> ...: the worker side of kreach.worker (docs/candidates.md). Started by
-- the harness, never by hand: it announces its phases and ends with one "result" line.
--   kreach worker lint <problem> <candidate> [--dtype D] [--size n=v] [--arch A]
--   kreach worker check <problem> <candidate> [--dtype D] [--size n=v] [--policy JSON]
--   kreach worker time <problem> [candidate] [--dtype D] [--size n=v] [--policy JSON]
--                      [--timing JSON] [--measure JSON] [--calibration JSON]
--   kreach worker calibrate [--options JSON]
-- A worker dies with its parent (so that a harness killed with SIGKILL leaves nothing running
-- on the GPU): the kernel's PR_SET_PDEATHSIG, and a thread that watches the pipe the parent
-- holds (kreach.seal). It is sealed (docs/candidates.md, "The seal"): its memory is limited from
-- its first line, and once its setup is done (the CUDA context, NVML, the problem), before it
-- reads the candidate, Landlock confines what it can open.
local kreach = require "kreach"
local worker = require "kreach.worker"
local seal = require "kreach.seal"

-- The end of the setup: the seal, or the worker's end when it cannot be sealed.
local function seal_or_die(job, o)
  local rec, err = seal.apply(o)
  if rec then return true end
  io.stderr:write("kreach worker ", job, ": ", err, "\n")
  return false
end

local function decode(s) return s and require("cjson").decode(s) or nil end

return {
  summary = "(internal) The worker process the harness runs candidates in.",
  hidden = true,
  parser = function(p)
    p:argument("job", "What to do."):choices({ "lint", "check", "time", "calibrate" })
    p:argument("problem", "A problem file, id or name."):args("?")
    p:argument("candidate", "The candidate file."):args("?")
    require("kreach.cli").problem_options(p)
    p:option("--arch", "Compile for this architecture.")
    p:option("--policy", "The correctness policy's overrides, as JSON (check, time).")
    p:option("--timing", "kreach.timing options, as JSON (time).")
    p:option("--measure", "kreach.measure options, as JSON (time).")
    p:option("--calibration", "This device's calibration, as JSON (time).")
    p:option("--options", "kreach.calibrate options, as JSON (calibrate).")
  end,
  run = function(args)
    local ok, err = seal.enter_worker()
    if not ok then
      io.stderr:write("kreach worker: ", err, "\n")
      return 3
    end
    if not require("kreach.core.util").die_with_parent() then return 0 end
    worker.phase("setup")
    if args.job == "calibrate" then
      if not seal_or_die(args.job, { device = true, nvml = true }) then return 3 end
      local opts = decode(args.options) or {}
      opts.phase = worker.phase
      worker.result({ calibration = require("kreach.calibrate").measure(opts) })
      return 0
    end
    if not args.problem or (args.job ~= "time" and not args.candidate) then
      io.stderr:write("kreach worker ", args.job, ": a problem and a candidate are needed\n")
      return 2
    end
    local sizes, err = require("kreach.cli").sizes(args.size)
    if not sizes then
      worker.result({ verdict = require("kreach.verdict").new("invalid_candidate", err) })
      return 0
    end
    local inst = kreach.load_problem(args.problem):instantiate{ dtype = args.dtype, sizes = sizes }
    inst:validate()
    if not seal_or_die(args.job, { candidate = args.candidate, problem = inst.problem.path,
                                   device = args.job ~= "lint" or not args.arch, nvml = args.job == "time" }) then
      return 3
    end
    if args.job == "check" then
      worker.result(require("kreach.check").run(inst, args.candidate, { policy = decode(args.policy), phase = worker.phase }))
      return 0
    end
    if args.job == "time" then
      worker.result(require("kreach.measure").time(inst, {
        candidate = args.candidate, policy = decode(args.policy), timing = decode(args.timing),
        measure = decode(args.measure), calibration = decode(args.calibration), phase = worker.phase,
        arch = args.arch }))
      return 0
    end
    local v, report = require("kreach.candidate").lint(inst, args.candidate,
      { arch = args.arch, phase = worker.phase })
    worker.result({ verdict = v, report = report })
    return 0
  end,
}
