-- kreach bench <suite|problem>: times the baselines alone, each problem in a fresh worker
-- process, with the timing engine's options; a run of kreach.run.campaign
-- (kreach.run.evaluate.bench), so each measurement is stored in the results database as it
-- finishes (an evaluation without a candidate, verdict "baseline"), and prints a table with the achieved bandwidth, FLOP rate and fraction of the
-- speed-of-light bound (kreach.results.bench writes it, and the --json object). The progress
-- goes to standard error (the campaign's kreach.progress: a status line on a terminal, a line
-- every 10% off one).
local cli = require "kreach.cli"
local core = require "kreach.core"
local ev = require "kreach.run.evaluate"
local errors = require "kreach.errors"
local out = require "kreach.results.bench"
local plan = require "kreach.run.plan"
local progress = require "kreach.progress"

return {
  summary = "Time the baselines of a suite or a problem (needs a GPU).",
  parser = function(p)
    p:argument("target", "A suite (kreach list) or one problem (file, id or name).")
    cli.problem_options(p)
    cli.timing_options(p)
    p:flag("--resume", "Continue the interrupted run of this command and configuration.")
    p:option("--shard", "Only shard i of N of the problems (i from 1; kreach slurm, docs/cluster.md). With --resume, its interrupted run is continued, or begun when there is none.")
      :argname("<i/N>"):convert(plan.parse_shard)
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    local timing, measure, torch = cli.timing_overrides(args)
    local argv = { "kreach", "bench" }
    for _, a in ipairs(arg or {}) do argv[#argv + 1] = a end
    local with_torch, t_start
    local res = ev.bench{
      target = args.target, dtype = args.dtype, sizes = sizes, timing = timing, measure = measure, torch = torch,
      db = args.db, resume = args.resume, shard = args.shard, timeout_s = args.timeout, memory_bytes = args.worker_memory, lua_memory_bytes = args.lua_memory,
      command = argv, tty = progress.isatty(io.stderr), log = function(l) io.stderr:write("kreach bench: ", l, "\n") end,
      on_config = function(conf)
        with_torch = conf.pytorch ~= nil
        t_start = core.now()
        if not args.json then io.write(out.header(with_torch)) end
      end,
      on_record = function(rec)
        if not args.json then io.write(out.line(rec, with_torch)); io.flush() end
      end,
    }
    local wall = core.now() - t_start
    io.write(args.json and out.json(res, wall) or out.footer(res, args.dtype, wall))
    return 0
  end,
}
