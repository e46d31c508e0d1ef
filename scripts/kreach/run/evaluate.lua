-- kreach.run.evaluate: evaluation runs (docs/evaluation.md), the run stage's main module (its
-- header: kreach.run.plan's). Candidates are matched to problems (kreach.run.plan), judged by
-- the correctness protocol in a worker process, timed against their baseline in a second,
-- fresh worker process when correct (kreach.run.pair), and every finished evaluation is
-- committed to the results store at once (kreach.run.campaign). A run killed at any moment
-- loses at most the evaluation in flight; `resume` continues it, and evaluations already
-- stored under the same configuration are reused unless `force`. kreach bench's runs (the
-- baselines alone) are run here too. This module is the parent's side: it never touches
-- candidate code.
local campaign = require "kreach.run.campaign"
local candidate = require "kreach.candidate"
local core = require "kreach.core"
local cudnn = require "kreach.cudnn"
local errors = require "kreach.errors"
local evaluation = require "kreach.results.evaluation"
local jpolicy = require "kreach.judge.policy"
local pair = require "kreach.run.pair"
local plan = require "kreach.run.plan"
local pytorch = require "kreach.pytorch"
local text = require "kreach.text"
local verdict = require "kreach.verdict"

local M = {}

-- Bumped when a change of the protocol makes old evaluations incomparable with new ones.
-- 2: the timed calls rotate over input sets with new values every round, outputs poisoned
-- before every call, and what they produce checked (kreach.judge.measure).
-- 3: a KernelBench-format candidate's time is the guard's (CUDA events and the all-streams span,
-- taken in C), its outputs plain tensors, and a thread or process it leaves is invalid_candidate.
M.PROTOCOL = 3

-- What a run evaluates (kreach.run.plan's) and how one pair is judged (kreach.run.pair's), as
-- this module has always offered them: run calls M.identify and M.evaluate through this table.
M.MAX_CANDIDATE_BYTES = plan.MAX_CANDIDATE_BYTES
M.file_text = plan.file_text
M.check_candidate_file = plan.check_candidate_file
M.candidate_files = plan.candidate_files
M.plan = plan.plan
M.identify = plan.identify
M.draw_salt = pair.draw_salt
M.find_python = pair.find_python

-- ---- one evaluation ----

-- evaluate(item, o, ctx) -> the finished record (kreach.results.evaluation) of one item: the
-- correctness protocol in a worker and, when correct, the timing in a second, fresh one. An
-- item whose file cannot be a candidate (item.invalid) is invalid_candidate at once, never read.
-- o: dtype, sizes, policy, timing, measure (resolved), timeout_s, memory_bytes, log(line);
-- ctx (kreach.run.campaign's): calibration, status(what).
function M.evaluate(item, o, ctx)
  local t0 = core.now()
  local rec = evaluation.new(item, o)
  if item.invalid then
    return evaluation.finish(rec, { verdict = verdict.new("invalid_candidate",
      ("%s: %s"):format(item.candidate_path, item.invalid)), wall_s = 0 })
  end
  local status = ctx.status or function() end
  -- the in-process lint of the candidate's format (unless --no-lint), then, for a
  -- KernelBench-format candidate, the Python worker's protocol
  local lv = pair.lint(item, o)
  if lv then return evaluation.finish(rec, { verdict = lv, wall_s = core.now() - t0 }) end
  local py
  if candidate.kind(item.candidate_path).needs_python then
    if not o.python then
      return evaluation.finish(rec, { verdict = verdict.new("skipped", ("a KernelBench-format candidate needs a python3 with CUDA PyTorch: %s"):format(
        tostring(o.python_note))), wall_s = core.now() - t0 })
    end
    py = o.python
  end
  status("correctness")
  local chk, failed = pair.correctness(item, o, py)
  if not chk then chk = { verdict = failed, trials = {} } end
  local v = chk.verdict
  local tres
  if v.verdict == "correct" then
    status("timing")
    local r, tfailed = pair.time(item, o, ctx.calibration, py)
    if not r then
      v = tfailed
      v.detail = (type(v.detail) == "string" and v.detail .. "; " or "") .. "while timing"
    else
      tres = r
      v = r.verdict or v
      -- what the timing noticed (fewer input sets than asked for, a warm-up that did not
      -- settle, a baseline that fails its own thresholds) is shown, not only stored
      local log = o.log or function(l) io.stderr:write(l, "\n") end
      for _, w in ipairs(type(r.warnings) == "table" and r.warnings or {}) do
        log(("warning: %s: %s"):format(text.clean(item.candidate_path, 1024), tostring(w)))
      end
    end
  end
  return evaluation.finish(rec, { verdict = v, check = chk, timing = tres, wall_s = core.now() - t0 })
end

-- ---- a run ----

-- resolve(o) -> the configuration every evaluation of the run depends on, its options
-- resolved once (defaults applied and checked) and sent to the workers as they are:
-- { protocol, dtype, sizes, policy, timing, measure, pytorch, cudnn_select }. A bad option, or a combination no
-- option alone shows (a flush factor below 2 in cold mode), is a usage error (exit 2).
function M.resolve(o)
  local function resolved(fn, over)
    local ok, r = pcall(fn, over)
    if not ok then errors.usage(errors.message(r)) end
    return r
  end
  local policy = resolved(jpolicy.check, o.policy)
  policy.steps = nil
  local conf = { protocol = M.PROTOCOL, dtype = o.dtype, sizes = o.sizes or {}, policy = policy,
                 timing = resolved(jpolicy.timing, o.timing), measure = resolved(jpolicy.measure, o.measure),
                 -- --no-lint: KernelBench-format candidates go to the GPU without the static lint
                 -- (for testing the harness's own defences); part of the configuration
                 no_lint = o.no_lint or nil }
  conf.pytorch, conf.pytorch_note = M.resolve_pytorch(o.torch, conf.timing)
  -- how the convolutions' cuDNN baselines choose their engine (KREACH_CUDNN_SELECT): part of
  -- what a baseline's time means
  conf.cudnn_select = cudnn.selection()
  return conf
end

-- resolve_pytorch(torch_options, timing) -> { python, torch (its version), compile, cudnn_tf32 }
-- when PyTorch is timed beside kreach, else nil and the note the command prints once (nil when
-- --no-torch asked for nothing). torch_options: cli.timing_overrides' third table.
function M.resolve_pytorch(t, topts)
  t = t or { enabled = false }
  if not t.enabled then
    if t.compile or t.cudnn_tf32 then
      errors.usage(("--no-torch leaves nothing for %s to change"):format(t.compile and "--torch-compile" or "--torch-tf32"))
    end
    return nil
  end
  local note = topts and jpolicy.pytorch_note(topts.mode)
  if note then return nil, note end
  if not core.has_device() then return nil end -- the command stops at the device, and says why
  local found, why = pytorch.find()
  if not found then
    if t.compile then errors.usage("--torch-compile: " .. why) end
    return nil, ("PyTorch not timed: %s (KREACH_PYTHON names a python3 with CUDA PyTorch; --no-torch leaves it out)"):format(why)
  end
  return { python = found.python, torch = found.torch, compile = t.compile, cudnn_tf32 = t.cudnn_tf32 }
end

-- run(o) -> { run_id, records, summary, skipped, db }, or { records = {}, skipped, nothing =
-- true } when no candidate could be planned. o: target, candidates (paths), dtype, sizes,
-- policy, timing, measure (overrides), db (path), resume, force, shard ({ index, count }: --shard), timeout_s, memory_bytes, tty,
-- command (argv), log (function(line)), out (a file for the progress).
function M.run(o)
  local log = o.log or function(l) io.stderr:write(l, "\n") end
  local conf = M.resolve(o)
  if conf.pytorch_note then log(conf.pytorch_note) end
  conf.pytorch_note = nil
  local items, skipped = M.plan(o.target, o.candidates)
  for _, s in ipairs(skipped) do log("skipped: " .. s.why) end
  -- --shard: this shard's pairs (kreach.run.plan's shards); one without any has nothing to do
  local planned = #items
  items = plan.select_shard(items, o.shard, plan.pair_key)
  if o.shard then log(("shard %s: %d of the %d pairs"):format(plan.shard_text(o.shard), #items, planned)) end
  -- nothing to evaluate: said, and no device, database or run is touched
  if #items == 0 then return { records = {}, skipped = skipped, nothing = true, shard_empty = o.shard and planned > 0 } end
  log(("%d candidate%s to evaluate on %s%s"):format(#items, #items == 1 and "" or "s", o.target,
    #skipped > 0 and (" (%d skipped)"):format(#skipped) or ""))
  local eo = { dtype = conf.dtype, sizes = conf.sizes, policy = conf.policy, timing = conf.timing, no_lint = conf.no_lint,
               measure = conf.measure, pytorch = conf.pytorch, timeout_s = o.timeout_s, memory_bytes = o.memory_bytes, log = log,
               -- the timed calls' inputs from an unpredictable seed, unless --timing-seed gave one
               random_draws = not (o.measure and o.measure.seed) }
  -- KernelBench-format candidates run in the Python worker: its interpreter, found once (not
  -- part of the configuration's hash: where python3 lives does not change a verdict)
  for _, it in ipairs(items) do
    if candidate.kind(it.candidate_path).needs_python and eo.python == nil and eo.python_note == nil then
      eo.python, eo.python_note = M.find_python()
      if eo.python_note then log("KernelBench-format candidates are skipped: " .. eo.python_note) end
    end
  end
  local res = campaign.run{
    db = o.db, command = o.command, config = conf, scope = { target = o.target, candidates = o.candidates,
      shard = o.shard and plan.shard_text(o.shard) },
    -- a shard's task runs the same line every time (kreach slurm): --resume begins its run when none was interrupted
    items = items, resume = o.resume and (o.shard and "or_begin" or true), reuse = not o.force, log = log, tty = o.tty, out = o.out,
    identify = M.identify,
    evaluate = function(item, ctx) return M.evaluate(item, eo, ctx) end,
  }
  res.skipped = skipped
  return res
end

-- bench(o) -> the result of kreach bench's run (kreach.run.campaign.run's: { run_id, db,
-- records, ... }, with planned: the number of problems), and its configuration: the baselines
-- of o.target timed alone, each problem in a fresh worker, stored as it finishes (an
-- evaluation without a candidate, verdict "baseline"; never reused). o: target, dtype, sizes,
-- timing, measure, torch (overrides), db, resume, shard, timeout_s, memory_bytes, lua_memory_bytes, command
-- (argv), log(line), on_config(conf) (called once the configuration is resolved, before the
-- first problem), on_record(rec).
function M.bench(o)
  local log = o.log or function(l) io.stderr:write(l, "\n") end
  local items = plan.select_shard(plan.baselines(o.target), o.shard, function(it) return plan.problem_key(it.problem_name) end)
  local conf = M.resolve{ dtype = o.dtype, sizes = o.sizes, timing = o.timing, measure = o.measure, torch = o.torch }
  conf.kind, conf.policy = "bench", nil
  if conf.pytorch_note then log(conf.pytorch_note) end
  conf.pytorch_note = nil
  if o.on_config then o.on_config(conf) end
  local to = { dtype = conf.dtype, sizes = conf.sizes, timing = conf.timing, measure = conf.measure, pytorch = conf.pytorch,
               timeout_s = o.timeout_s, memory_bytes = o.memory_bytes, lua_memory_bytes = o.lua_memory_bytes }
  local res = campaign.run{
    db = o.db, command = o.command, config = conf, scope = { target = o.target, shard = o.shard and plan.shard_text(o.shard) },
    items = items, resume = o.resume and (o.shard and "or_begin" or true), reuse = false, log = log, tty = o.tty, lines = false,
    identify = plan.identify_baseline,
    evaluate = function(item, ctx)
      local t0 = core.now()
      local rec = evaluation.new(item, conf)
      ctx.status("timing")
      local r, failed = pair.time(item, to, ctx.calibration)
      return evaluation.finish(rec, { verdict = r and verdict.baseline() or failed, timing = r, wall_s = core.now() - t0 })
    end,
    on_record = o.on_record,
  }
  res.planned = #items
  return res, conf
end

-- The text table of a run's evaluations and its summary.
function M.report(records, summary, out)
  out = out or io.stdout
  out:write(evaluation.table_text(records), "\n", evaluation.summary_text(summary))
end

return M
