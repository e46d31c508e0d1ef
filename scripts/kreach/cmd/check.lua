-- kreach check <problem> <candidate.lua>: runs the correctness protocol (docs/correctness.md)
-- on one candidate in a worker process (kreach.run.pair.check) and prints the verdict and every
-- trial's metrics.
-- Exit status 0 for `correct`, 1 for any other verdict.
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local evaluation = require "kreach.results.evaluation"
local jpolicy = require "kreach.judge.policy"
local json = require "kreach.json"
local pair = require "kreach.run.pair"
local problem = require "kreach.problem"
local text = require "kreach.text"

local function fmt(x)
  if type(x) == "string" then return x end
  if x == nil then return "-" end
  if x == 0 then return "0" end
  return ("%.2e"):format(x)
end

-- The policy overrides from the options (nil where the default stands).
local function policy_from(args, dtype)
  local p = {}
  if args.trials then p.trials = args.trials end
  if args.seed then p.seed = args.seed end
  if args.no_repeat then p.repeat_trial = 0 end
  if args.guard_bytes then p.guard_bytes = args.guard_bytes end
  if args.baseline_multiple then p.baseline_multiple = args.baseline_multiple end
  if args.centred_cap then p.centred_cap = args.centred_cap end
  if args.rel_l2 or args.max_scaled then
    local d = jpolicy.CHECK.tol[dtype]
    p.tol = { [dtype] = { rel_l2 = args.rel_l2 or d.rel_l2, max_scaled = args.max_scaled or d.max_scaled } }
  end
  return p
end

local function print_report(res)
  local v = res.verdict
  io.write(("%s on %s at %s\n"):format(text.clean(res.candidate), res.problem, res.dtype))
  if res.trials and #res.trials > 0 then
    io.write(("  %-5s %-8s %-8s %9s %9s %9s %9s %5s %9s  %s\n"):format("trial", "inputs", "output", "rel_l2",
      "max/|y*|", "centred", "base_l2", "KB", "KB v0.1", "judged"))
    for _, t in ipairs(res.trials) do
      for _, o in ipairs(t.outputs or {}) do
        local m = o.metrics
        local kb = t.kernelbench or {}
        io.write(("  %-5d %-8s %-8s %9s %9s %9s %9s %5s %9s  %s\n"):format(t.trial, t.variant, o.name:sub(1, 8),
          m.mismatches and (m.mismatches .. " diff") or fmt(m.rel_l2), fmt(m.max_scaled), fmt(m.centred_l2),
          fmt(o.baseline.rel_l2), kb.pass and "pass" or "fail", kb.pass_v01 and "pass" or "fail",
          o.unjudged and "no (baseline fails)" or (o.ok and (o.degenerate and "ok (degenerate: centred)" or "ok")
            or o.reason)))
      end
      if not t.outputs or #t.outputs == 0 then io.write(("  %-5d %-8s (stopped before the comparison)\n"):format(t.trial, t.variant)) end
    end
  end
  for _, w in ipairs(res.warnings or {}) do io.write("  warning: ", w, "\n") end
  local kb = evaluation.kernelbench_verdict(res)
  if kb then
    io.write(("KernelBench's allclose: %s (every output of every trial within its tolerance of the oracle)\n"):format(kb))
  end
  if res.python then
    io.write(("Python worker: PyTorch %s, loaded in %.1f s, sealed: %s, guarded: %s\n"):format(tostring(res.python.torch),
      res.python.load_s or 0, res.python.seal and res.python.seal.filesystem or "no", res.python.guarded and "yes" or "no"))
  end
  io.write(("verdict: %s%s\n"):format(v.verdict, v.reason and (" (" .. text.continued(v.reason, "  ") .. ")") or ""))
  if v.detail then io.write("  ", text.continued(v.detail, "  "), "\n") end
end

return {
  summary = "Judge a candidate on a problem with the correctness protocol (needs a GPU).",
  parser = function(p)
    p:argument("problem", "A problem file, id or name.")
    p:argument("candidate", "The candidate file.")
    cli.problem_options(p)
    p:option("--seed", "Seed of the trials' inputs (default 1).", nil):convert(cli.nonnegative_integer)
    p:option("--trials", "Number of trials (default 5).", nil):convert(cli.positive_integer)
    p:flag("--no-repeat", "Do not repeat a call on the same inputs.")
    p:option("--rel-l2", "Relative L2 threshold at this dtype.", nil):convert(cli.positive_number)
    p:option("--max-scaled", "Threshold of the worst error over max |y*| at this dtype.", nil):convert(cli.positive_number)
    p:option("--baseline-multiple", "Thresholds are never tighter than this times the baseline's error (default 4).", nil):convert(cli.positive_number)
    p:option("--centred-cap", "Centred thresholds are never looser than this (default 0.5).", nil):convert(cli.positive_number)
    p:option("--guard-bytes", "Bytes of poisoned guard before and after each output (default 65536).", nil):convert(cli.nonnegative_integer)
    cli.worker_options(p)
    p:flag("--json", "Print one JSON object.")
    p:flag("--no-lint", "Send a KernelBench-format (.py) candidate to the GPU without the static lint (to test the harness's own defences).")
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    local inst = problem.load(problem.resolve(args.problem)):instantiate{ dtype = args.dtype, sizes = sizes }
    inst:validate()
    -- kreach.run.pair.check: the lint and an unreadable file refused without a GPU, then the
    -- correctness job in a worker
    local res = pair.check{ problem = inst.problem, candidate = args.candidate, dtype = inst.dtype, sizes = sizes,
                            policy = policy_from(args, inst.dtype), no_lint = args.no_lint, timeout_s = args.timeout,
                            memory_bytes = args.worker_memory, lua_memory_bytes = args.lua_memory }
    if args.json then io.write(json.encode(res), "\n") else print_report(res) end
    return res.verdict.verdict == "correct" and 0 or 1
  end,
}
