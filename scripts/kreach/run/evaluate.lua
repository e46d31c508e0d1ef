-- kreach.run.evaluate: evaluation runs (docs/evaluation.md), the run stage's main module (its
-- header: kreach.run.plan's). Candidates are matched to problems (kreach.run.plan), judged by
-- the correctness protocol in a worker process, timed against their baseline in a second,
-- fresh worker process when correct (kreach.run.pair), and every finished evaluation is
-- committed to the results store at once (kreach.run.campaign). A run killed at any moment
-- loses at most the evaluation in flight; `resume` continues it, and evaluations already
-- stored under the same configuration are reused unless `force`. kreach bench's runs (the
-- baselines alone) are run here too. This module is the parent's side: it never touches
-- candidate code.
local builds = require "kreach.run.builds"
local campaign = require "kreach.run.campaign"
local candidate = require "kreach.candidate"
local core = require "kreach.core"
local cudnn = require "kreach.cudnn"
local device = require "kreach.device"
local devices = require "kreach.run.devices"
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
-- ctx (kreach.run.campaign's): calibration, status(what), and with a build pool build(),
-- idle(), pause(), resume(): the item's build ahead (kreach.run.builds) is waited for first; a
-- build that failed for the candidate's own reasons (compile_error, invalid_candidate) is its
-- verdict, and it does not reach the GPU.
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
  local lv
  if item.lint_checked then lv = item.lint_verdict else lv = pair.lint(item, o) end
  if lv then return evaluation.finish(rec, { verdict = lv, wall_s = core.now() - t0 }) end
  local py
  if candidate.kind(item.candidate_path).needs_python then
    if not o.python then
      return evaluation.finish(rec, { verdict = verdict.new("skipped", ("a KernelBench-format candidate needs a python3 with CUDA PyTorch: %s"):format(
        tostring(o.python_note))), wall_s = core.now() - t0 })
    end
    py = o.python
  end
  if ctx.build then
    status("build")
    local bv, note = builds.verdict_of(ctx.build())
    if bv then
      return evaluation.finish(rec, { verdict = bv, wall_s = core.now() - t0 })
    end
    if note then (o.log or function(l) io.stderr:write(l, "\n") end)(("%s: %s"):format(text.clean(item.candidate_path, 1024), note)) end
  end
  local hooks = { idle = ctx.idle, pause = ctx.pause, resume = ctx.resume, env = ctx.env }
  status("correctness")
  local chk, failed = pair.correctness(item, o, py, hooks)
  if not chk then chk = { verdict = failed, trials = {} } end
  -- the GPU it ran on, where the campaign has several (--devices): kept in the stored results
  chk.gpu = ctx.gpu
  local v = chk.verdict
  local tres
  if v.verdict == "correct" then
    status("timing")
    local r, tfailed = pair.time(item, o, ctx.calibration, py, hooks)
    if not r then
      v = tfailed
      v.detail = (type(v.detail) == "string" and v.detail .. "; " or "") .. "while timing"
    else
      tres = r
      tres.gpu = ctx.gpu
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
-- command (argv), log (function(line)), out (a file for the progress), jobs (build workers
-- ahead of the GPU: kreach.run.builds; nil or 0: none, each candidate built by its GPU
-- worker), pause_builds (default true: builds stopped while a call is timed), devices
-- (kreach.run.devices.parse's: a GPU worker per device).
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
  local pool = o.jobs and o.jobs > 0 and M.build_pool(items, eo, o) or nil
  local devs = o.devices and M.resolve_devices(o.devices, log) or nil
  local res = campaign.run{
    db = o.db, command = o.command, config = conf, scope = { target = o.target, candidates = o.candidates,
      shard = o.shard and plan.shard_text(o.shard) },
    -- a shard's task runs the same line every time (kreach slurm): --resume begins its run when none was interrupted
    items = items, resume = o.resume and (o.shard and "or_begin" or true), reuse = not o.force, log = log, tty = o.tty, out = o.out,
    identify = M.identify, builds = pool, devices = devs,
    evaluate = function(item, ctx) return M.evaluate(item, eo, ctx) end,
  }
  res.skipped = skipped
  if pool then
    local st = pool.pool:stats()
    res.builds = st
    log(("builds ahead: %d built, %d not (their verdicts, or built again by the GPU worker), by %d worker%s; paused %d time%s for %.1f s"):format(
      st.built, st.failed, st.jobs, st.jobs == 1 and "" or "s", st.paused, st.paused == 1 and "" or "s", st.paused_s))
  end
  return res
end

-- ---- a GPU worker per device ----

-- resolve_devices(parsed, log) -> kreach.run.campaign's devices: each GPU of --devices
-- (kreach.run.devices.parse's) with its pinning and its properties (probed), or a usage error
-- naming the GPU that is not there.
function M.resolve_devices(parsed, log)
  device.require("kreach eval --devices") -- no GPU at all: skipped (77), as without --devices
  local list = parsed
  if parsed.all then
    local n = devices.count()
    local err
    list, err = devices.resolve(parsed, n)
    if not list then errors.usage(err) end
  end
  local out = {}
  local parent = os.getenv("CUDA_VISIBLE_DEVICES")
  for _, n in ipairs(list) do
    local info, why = devices.probe(n)
    if not info then errors.usage("--devices: " .. tostring(why)) end
    out[#out + 1] = { index = n, env = devices.env(n, parent), info = info }
  end
  local names = {}
  for i, d in ipairs(out) do names[i] = ("%d (%s)"):format(d.index, tostring(d.info.name)) end
  log(("a GPU worker on each of %d device%s: %s"):format(#out, #out == 1 and "" or "s", table.concat(names, ", ")))
  return out
end

-- ---- builds ahead of the GPU ----

-- build_pool(items, eo, o) -> kreach.run.campaign's builds: a pool of o.jobs build workers
-- (o.pause_builds: whether they stop while a call is timed) and each item's build job. eo:
-- the evaluation's options (dtype, sizes, no_lint, python, timeout_s, memory_bytes); o.arch:
-- what Lua candidates are compiled for (default: the device's). An item the in-process lint
-- refuses, or a KernelBench-format one without a python3, is not built (its evaluation says
-- why); the lint's verdict is kept on the item (lint_checked, lint_verdict).
function M.build_pool(items, eo, o)
  local arch = o.arch
  if not arch then
    local dev = device.cuda()
    arch = dev and dev.arch
  end
  local bo = { dtype = eo.dtype, sizes = eo.sizes, arch = arch, timeout_s = eo.timeout_s, memory_bytes = eo.memory_bytes,
               lua_memory_bytes = eo.lua_memory_bytes }
  local bp = jpolicy.builds{ pause = o.pause_builds }
  local pool = builds.new{ jobs = o.jobs, pause = bp.pause, log = eo.log }
  return {
    pool = pool,
    -- items ahead per worker keep them busy while the GPU worker takes one
    ahead = bp.ahead * o.jobs,
    job = function(item)
      if item.invalid then return nil end
      if not item.lint_checked then
        item.lint_verdict, item.lint_checked = pair.lint(item, eo), true
      end
      if item.lint_verdict then return nil end
      local py = nil
      if candidate.kind(item.candidate_path).needs_python then
        if not eo.python then return nil end
        py = eo.python
      end
      if not py and not arch then return nil end
      return pair.build_job(item, bo, py)
    end,
  }
end

-- build_only(o) -> { builds = { {candidate, problem, verdict, wall_s, compile_ms} ... },
-- wall_s, stats }: the build stage alone (kreach eval --build-only): the candidates planned
-- as kreach eval plans them, built by o.jobs sealed workers into the compile caches, nothing
-- timed or stored. Lua candidates need no GPU (o.arch: what they are compiled for, required
-- without one); KernelBench-format ones need the python3 with CUDA PyTorch that the GPU
-- worker uses, and are skipped without it. o: target, candidates, dtype, sizes, jobs, arch,
-- timeout_s, memory_bytes, no_lint, log.
function M.build_only(o)
  local log = o.log or function(l) io.stderr:write(l, "\n") end
  local items, skipped = M.plan(o.target, o.candidates)
  for _, s in ipairs(skipped) do log("skipped: " .. s.why) end
  local eo = { dtype = o.dtype, sizes = o.sizes or {}, no_lint = o.no_lint, timeout_s = o.timeout_s,
               memory_bytes = o.memory_bytes, lua_memory_bytes = o.lua_memory_bytes, log = log }
  local has_py = false
  for _, it in ipairs(items) do
    if candidate.kind(it.candidate_path).needs_python then has_py = true end
  end
  if has_py then
    eo.python, eo.python_note = M.find_python()
    if eo.python_note then log("KernelBench-format candidates are not built: " .. eo.python_note) end
  end
  if not o.arch and not device.cuda() then
    errors.usage("--build-only without a GPU needs --arch (what Lua candidates are compiled for, such as sm_90)")
  end
  local b = M.build_pool(items, eo, o)
  local t0 = core.now()
  local keys = {}
  for i, item in ipairs(items) do
    item.eval_key = ("build-%d"):format(i)
    if not item.invalid then M.identify(item) end
    local argv, wopts = b.job(item)
    if argv then
      b.pool:submit(item.eval_key, argv, wopts)
      keys[i] = item.eval_key
    end
  end
  local out = {}
  local ok, err = pcall(function()
    for i, item in ipairs(items) do
      local row = { candidate = item.candidate_path, problem = item.problem_name }
      if keys[i] then
        local e = b.pool:wait(keys[i])
        local v, note = builds.verdict_of(e)
        row.wall_s = e.wall_s
        if v then
          row.verdict = v.verdict
          row.reason = v.reason
        elseif note then
          row.verdict, row.reason = "build_failed", note
        else
          row.verdict = "built"
          row.compile_ms = e.result and e.result.compile_ms
        end
      else
        row.verdict = "not_built"
        row.reason = item.invalid or (item.lint_verdict and item.lint_verdict.reason)
          or (candidate.kind(item.candidate_path).needs_python and (eo.python_note or "no python3 with CUDA PyTorch"))
          or "nothing to build"
      end
      out[#out + 1] = row
      if o.on_build then o.on_build(row) end
    end
  end)
  b.pool:close()
  if not ok then error(err, 0) end
  return { builds = out, wall_s = core.now() - t0, stats = b.pool:stats(), skipped = skipped }
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
