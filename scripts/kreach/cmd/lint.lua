-- kreach lint <problem> <candidate.lua|candidate.py>: judges what can be judged before a
-- candidate runs: the file loads in the sandbox, its NVRTC options are allowed, its source
-- compiles, and its forward, run on shape-only tensors, launches its own kernels with
-- arguments that fit their declarations. Prints the verdict it would get (invalid_candidate,
-- compile_error) or "ok". A KernelBench-format candidate (.py) is read by python3's parser,
-- never run (kreach.candidate.pylint): its syntax, its ModelNew, its imports and calls.
-- The candidate's file is hostile: the work runs in a worker process with a time limit per
-- phase, so a hang (in the compiler, or in a library call the step limit cannot interrupt)
-- is the verdict `timeout` and a crash is `runtime_error`.
local kreach = require "kreach"
local candidate = require "kreach.candidate"
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local protocol = require "kreach.run.protocol"
local seal = require "kreach.run.seal"
local text = require "kreach.text"
local worker = require "kreach.run.worker"

return {
  summary = "Check a candidate before running it: sandbox, options, compile, dry run.",
  parser = function(p)
    p:argument("problem", "A problem file, id or name.")
    p:argument("candidate", "The candidate file.")
    cli.problem_options(p)
    p:option("--arch", "Compile for this architecture (default: the GPU's; sm_90 without one).")
      :convert(cli.arch)
    cli.worker_options(p)
    p:flag("--json", "Print one JSON object.")
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    -- the problem is checked here, so that a bad problem is its own error, not the candidate's
    local inst = kreach.load_problem(args.problem):instantiate{ dtype = args.dtype, sizes = sizes }
    inst:validate()
    -- a candidate path that names no readable file (missing, a directory, a FIFO, too large)
    -- is the user's mistake, a file that cannot be loaded (status 3), not the candidate's
    -- verdict; what the file holds is judged in the worker
    local fmt = candidate.kind(args.candidate)
    local ctext, cerr = fmt.read(args.candidate)
    if not ctext then errors.load(cerr) end
    -- a format whose file is not code kreach loads (KernelBench's, parsed by python3's ast) is
    -- linted here; a Lua candidate only in a sealed worker
    if not fmt.lint_in_worker then
      local v, report = fmt.lint(args.candidate, inst.problem)
      if args.json then
        io.write(json.encode({ problem = inst.problem.name, candidate = args.candidate,
          verdict = v or json.null, report = report or json.null }), "\n")
      elseif v then
        io.write(("%s: %s\n  %s\n"):format(text.clean(args.candidate), v.verdict, text.continued(v.reason or "", "  ")))
      else
        io.write(("%s: ok (KernelBench format: Python syntax, ModelNew at line %d, imports %s; not run)\n"):format(
          text.clean(args.candidate), report.model_new.line,
          #report.imports > 0 and table.concat(report.imports, ", ") or "none"))
      end
      return v and 1 or 0
    end
    local sok, serr = seal.check_available("lint")
    if not sok then errors.raise(errors.STATUS.load, serr, "seal") end
    local arch = args.arch or (not kreach.has_device() and "sm_90" or nil)
    local argv = protocol.argv("lint", { problem = inst.problem.path, candidate = args.candidate,
                                         dtype = inst.dtype, sizes = sizes, arch = arch })
    local res, failed = worker.run(argv, { timeout_s = args.timeout, memory_bytes = args.worker_memory,
                                           lua_memory_bytes = args.lua_memory })
    local v, report, sealed = failed, nil, nil
    if res then
      sealed = res.seal
      v, report = res.verdict, res.report
    end
    if args.json then
      io.write(json.encode({ problem = inst.problem.name, candidate = args.candidate,
        verdict = v or json.null, report = report or json.null, seal = sealed }), "\n")
    elseif v then
      io.write(("%s: %s\n  %s\n"):format(text.clean(args.candidate), v.verdict, text.continued(v.reason or "", "  ")))
    else
      -- the kernels launched, and those compiled but not launched at these sizes (a tail kernel)
      local launched, seen, idle = report.launched or report.kernels, {}, {}
      for _, n in ipairs(launched) do seen[n] = true end
      for _, n in ipairs(report.kernels) do if not seen[n] then idle[#idle + 1] = n end end
      io.write(("%s: ok (dry run: %d launch%s of %s; compiled for %s%s)\n"):format(text.clean(args.candidate),
        report.launches, report.launches == 1 and "" or "es", table.concat(launched, ", "), report.arch,
        #idle > 0 and ("; not launched at these sizes: " .. table.concat(idle, ", ")) or ""))
    end
    return v and 1 or 0
  end,
}
