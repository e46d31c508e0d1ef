-- kreach eval <suite|problem> <candidates...>: evaluates candidate kernels (files, or
-- directories of <id>_<name>.lua files or with a manifest.json): the correctness protocol,
-- then timing against the baseline for correct ones, each evaluation committed to the results
-- database as it finishes. Prints a line per evaluation and a summary table (docs/evaluation.md).
local cli = require "kreach.cli"
local ev = require "kreach.run.evaluate"
local errors = require "kreach.errors"
local evaluation = require "kreach.results.evaluation"
local json = require "kreach.json"
local plan = require "kreach.run.plan"
local seal = require "kreach.run.seal"
local util = require "kreach.core.util"
local worker = require "kreach.run.worker"

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
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    local timing, measure, torch = cli.timing_overrides(args)
    local policy = {}
    if args.trials then policy.trials = args.trials end
    local sok, serr = seal.check_available("eval")
    if not sok then errors.raise(errors.STATUS.load, serr, "seal") end
    -- kreach.run.evaluate starts the workers: the candidate's Lua heap reaches them through kreach.run.worker
    worker.lua_memory_bytes = args.lua_memory
    local argv = { "kreach", "eval" }
    for _, a in ipairs(arg or {}) do argv[#argv + 1] = a end
    local res = ev.run{
      target = args.target, candidates = args.candidates, dtype = args.dtype, sizes = sizes,
      policy = policy, timing = timing, measure = measure, torch = torch, db = args.db, resume = args.resume, shard = args.shard, no_lint = args.no_lint,
      force = args.force, timeout_s = args.timeout, memory_bytes = args.worker_memory, tty = util.isatty(2), command = argv,
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
    return 0
  end,
}
