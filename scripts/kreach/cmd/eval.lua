-- kreach eval <suite|problem> <candidates...>: evaluates candidate kernels (files, or
-- directories of <id>_<name>.lua files or with a manifest.json): the correctness protocol,
-- then timing against the baseline for correct ones, each evaluation committed to the results
-- database as it finishes. Prints a line per evaluation and a summary table (docs/evaluation.md).
local builds = require "kreach.run.builds"
local cli = require "kreach.cli"
local devices = require "kreach.run.devices"
local ev = require "kreach.run.evaluate"
local errors = require "kreach.errors"
local evaluation = require "kreach.results.evaluation"
local json = require "kreach.json"
local plan = require "kreach.run.plan"
local seal = require "kreach.run.seal"
local worker = require "kreach.run.worker"
local progress = require "kreach.progress"
local report = require "kreach.report"
local catalog = require "kreach.problem.catalog"

-- kreach eval --build-only: the build stage alone, a line per candidate and the wall time.
local function build_only(args, sizes, jobs)
  local res = ev.build_only{
    target = args.target, candidates = args.candidates, dtype = args.dtype, sizes = sizes, jobs = jobs, arch = args.arch,
    timeout_s = args.timeout, memory_bytes = args.worker_memory, no_lint = args.no_lint,
    log = function(l) io.stderr:write("kreach eval: ", l, "\n") end,
    on_build = not args.json and function(row)
      io.stderr:write(("%-10s %6.2f s  %s%s\n"):format(row.verdict, row.wall_s or 0, row.candidate,
        row.reason and ("  (" .. tostring(row.reason):gsub("\n.*", "") .. ")") or ""))
    end or nil,
  }
  local failed = 0
  for _, r in ipairs(res.builds) do if r.verdict ~= "built" then failed = failed + 1 end end
  if args.json then
    io.write(json.encode({ builds = json.array(res.builds), wall_s = res.wall_s, jobs = jobs, stats = res.stats,
                           skipped = json.array(res.skipped) }), "\n")
  else
    io.write(("%d candidate%s built, %d not, with %d build worker%s, in %.2f s\n"):format(#res.builds - failed,
      #res.builds - failed == 1 and "" or "s", failed, jobs, jobs == 1 and "" or "s", res.wall_s))
  end
  return 0
end

return {
  summary = "Evaluate candidates: correctness, then timing against the baseline (needs a GPU).",
  parser = function(p)
    p:argument("target", "A suite (kreach list) or one problem (file, id or name).")
    p:argument("candidates", "Candidate files or directories."):args("+")
    cli.problem_options(p)
    cli.timing_options(p)
    p:flag("--resume", "Continue the interrupted run of this command and configuration.")
    p:option("--shard", "Only shard i of N of the (problem, candidate) pairs (i from 1; kreach slurm, docs/cluster.md). With --resume, its interrupted run is continued, or begun when there is none.")
      :argname("<i/N>"):convert(plan.parse_shard)
    p:flag("--force", "Evaluate again what is already stored for this configuration.")
    p:flag("--no-lint", "Send KernelBench-format (.py) candidates to the GPU without the static lint (to test the harness's own defences; part of the configuration).")
    p:option("--trials", "Correctness trials per candidate (default 5).", nil):convert(cli.positive_integer)
    p:option("--report", "Then write a report of the whole database (HTML, or Markdown for a .md name; docs/report.md)."):argname("<file>")
    -- builds ahead of the GPU worker (kreach.run.builds, docs/evaluation.md)
    p:option("--jobs", "Build workers ahead of the GPU worker (default: the number of cores; 0: each candidate is built by its GPU worker).", nil)
    p:flag("--no-pause-builds", "Let builds run while a call is timed (default: they are stopped then).")
    p:flag("--build-only", "Only build the candidates into the compile caches (--jobs workers); no GPU is needed for Lua candidates (give --arch).")
    p:option("--arch", "With --build-only: what Lua candidates are compiled for (default: the GPU's, such as sm_90).")
    p:option("--devices", "GPUs to evaluate on, one GPU worker each: a list such as 0,1 or 'all' (default: the one GPU kreach uses).")
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    local timing, measure, torch = cli.timing_overrides(args)
    local policy = {}
    if args.trials then policy.trials = args.trials end
    if args.report then report.check_output(args.report, { args.db }) end -- before the GPU's time is spent
    local sok, serr = seal.check_available("eval")
    if not sok then errors.raise(errors.STATUS.load, serr, "seal") end
    local jobs = builds.cores()
    if args.jobs then
      local jerr
      jobs, jerr = builds.parse_jobs_or_zero(args.jobs)
      if not jobs then errors.usage(jerr) end
    end
    if args.arch and not args.build_only then errors.usage("--arch is for --build-only (kreach eval compiles for the GPU it runs on)") end
    local devs
    if args.devices then
      local derr
      devs, derr = devices.parse(args.devices)
      if not devs then errors.usage(derr) end
    end
    if args.build_only then
      for _, o in ipairs({ { args.devices, "--devices" }, { args.resume, "--resume" }, { args.force, "--force" },
                           { args.no_pause_builds, "--no-pause-builds" } }) do
        if o[1] then errors.usage(("%s has nothing to do with --build-only (nothing is timed or stored)"):format(o[2])) end
      end
      if jobs == 0 then errors.usage("--build-only needs at least one build worker (--jobs 1 or more)") end
      return build_only(args, sizes, jobs)
    end
    -- kreach.run.evaluate starts the workers: the candidate's Lua heap reaches them through kreach.run.worker
    worker.lua_memory_bytes = args.lua_memory
    local argv = { "kreach", "eval" }
    for _, a in ipairs(arg or {}) do argv[#argv + 1] = a end
    local res = ev.run{
      target = args.target, candidates = args.candidates, dtype = args.dtype, sizes = sizes,
      policy = policy, timing = timing, measure = measure, torch = torch, db = args.db, resume = args.resume, shard = args.shard, no_lint = args.no_lint,
      jobs = jobs, pause_builds = not args.no_pause_builds, devices = devs,
      force = args.force, timeout_s = args.timeout, memory_bytes = args.worker_memory, tty = progress.isatty(io.stderr), command = argv,
      log = function(l) io.stderr:write("kreach eval: ", l, "\n") end,
    }
    if res.shard_empty then
      -- a shard that holds none of the pairs has done its part
      io.stderr:write(("kreach eval: shard %s holds none of the pairs: nothing to do\n"):format(plan.shard_text(args.shard)))
      if args.json then io.write(json.encode({ evaluations = json.array(), skipped = json.array(res.skipped), shard = plan.shard_text(args.shard) }), "\n") end
      return 0
    end
    if res.nothing then
      io.stderr:write(("kreach eval: nothing to evaluate on %s: %d candidate%s skipped\n"):format(args.target,
        #res.skipped, #res.skipped == 1 and "" or "s"))
      if args.json then
        io.write(json.encode({ evaluations = json.array(), skipped = json.array(res.skipped) }), "\n")
      end
      return 1
    end
    if args.json then
      local rows = {}
      for i, r in ipairs(res.records) do rows[i] = evaluation.brief(r) end
      io.write(json.encode({ run_id = res.run_id, db = res.db, evaluations = json.array(rows), summary = res.summary,
                             skipped = json.array(res.skipped) }), "\n")
    else
      io.write(("\nrun %d (%s), %s, dtype %s\n\n"):format(res.run_id, res.db, res.device.name, args.dtype))
      ev.report(res.records, res.summary)
      if #res.skipped > 0 then io.write(("%d candidate%s skipped (see above)\n"):format(#res.skipped, #res.skipped == 1 and "" or "s")) end
    end
    if args.report then
      local files = report.make{ dbs = { res.db }, output = args.report, progress = true,
                                 categories = function(paths) return catalog.load("problem", paths) end }
      local out = args.json and io.stderr or io.stdout -- under --json standard output holds the one JSON object
      out:write(("report: %s\n"):format(files[1]))
    end
    return 0
  end,
}
