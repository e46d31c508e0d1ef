-- kreach.run.campaign: a run of evaluations, the one loop every command that evaluates goes through
-- (eval, bench, and the commands to come). It owns the results store for the run's length, the
-- device's calibration, the run record (begun, or resumed), the key of every evaluation and the
-- reuse of stored ones, the progress on the terminal, and the close guard: every evaluation is
-- committed as it finishes, and whatever goes wrong, the store is closed and a run that did not
-- finish stays 'running', so that --resume continues it. What one evaluation is (which workers,
-- what record) is the caller's `evaluate`.
local core = require "kreach.core"
local device = require "kreach.device"
local devices = require "kreach.run.devices"
local errors = require "kreach.errors"
local evaluation = require "kreach.results.evaluation"
local json = require "kreach.json"
local progress_mod = require "kreach.progress"
local protocol = require "kreach.run.protocol"
local store = require "kreach.results.store"
local util = require "kreach.core.util"
local worker = require "kreach.run.worker"

local M = {}

-- The text the configuration and keys are hashed from, and the hash.
function M.canonical(v) return json.canonical(v) end
function M.hash(s) return util.hash(s) end
function M.key(parts) return M.hash(M.canonical(parts)) end

-- ---- calibration ----

-- This device's calibration from the store, measured (in a worker) and stored when missing;
-- returned as the timing workers take it, or nil when it could not be measured.
-- env: the calibrating worker's extra variables (a device's CUDA_VISIBLE_DEVICES, where the
-- campaign has several: kreach.run.devices).
function M.calibration(db, dev, log, env)
  local cal = db:calibration(dev.uuid)
  if not cal then
    log(("no calibration of %s (%s) in %s: measuring one now (kreach calibrate)"):format(dev.name, dev.uuid, db.path))
    local r, failed = worker.run(protocol.argv("calibrate", {}), { timeout_s = 300, env = env })
    if not r then
      log("the calibration failed, so there are no speed-of-light figures: " .. tostring(failed.reason))
      return nil
    end
    db:save_calibration(r.calibration)
    cal = db:calibration(dev.uuid)
  end
  return cal and { copy_bytes_per_s = cal.copy_bytes_per_s, flops_per_s = cal.flops_per_s,
                   device_uuid = cal.device_uuid, measured_at = cal.measured_at } or nil
end

-- ---- progress ----

-- The run's progress is kreach.progress's (docs/cli.md, "Progress"): on a terminal its status
-- line (done of total, the time elapsed and left, the item and what it is doing); off one, a line
-- per evaluation, or with lines = false (bench, whose table is its line per problem) a line every
-- 10%. Reused evaluations count as done but not in the time left.
local Progress = {}
Progress.__index = Progress

M.PLAIN_EVERY_PCT = 10

-- progress(total, {tty =, out =, lines =, command =}): the tracker of a run of `total`
-- evaluations; lines ~= false: one line per finished evaluation (its cells, numbered, with the
-- time left); command: the argv, whose command names the lines ("kreach bench: ...")
function M.progress(total, o)
  o = o or {}
  local name = o.command and o.command[2] and ("kreach " .. tostring(o.command[2])) or "kreach"
  local lines = o.lines ~= false
  return setmetatable({ lines = lines,
                        t = progress_mod.new{ prefix = name, total = total, tty = o.tty, out = o.out,
                                          every_pct = not lines and M.PLAIN_EVERY_PCT or nil } }, Progress)
end

function Progress:status(label, what)
  self.t:status(what, label)
end

function Progress:finished(rec)
  local line
  if self.lines then
    local c = evaluation.cells(rec)
    line = ("%s  %s  %s  %s"):format(c[1], c[2], c[3], c[6])
  end
  self.t:finished{ line = line, skipped = rec.reused == true }
end

function Progress:close()
  self.t:close()
end

-- ---- a run ----

local function begin_run(db, dev, command, config, config_hash)
  local v = core.versions()
  return db:begin_run{ command = command, config = config, config_hash = config_hash, device = dev,
    -- "13.0" as CUDA's integer 13000: the store converts (kreach.results.store's cuda_int)
    versions = { driver = v.driver, runtime = v.runtime, nvrtc = v.nvrtc },
    kreach_version = core.version, kreach_revision = core.version:match("%(([^)]+)%)") or core.version }
end

-- run_on_devices(spec, found, o) -> the records, in the items' order: the items not found
-- stored (found[i]) evaluated on spec.devices, a GPU worker each, dispatched to whichever device
-- is free (kreach.run.devices); each evaluation runs in a coroutine that yields while its
-- workers run (ctx.idle), so that this process steps every device's worker and the build pool
-- in turn, and writes every record itself, as each finishes. The build pool is paused while
-- any device's worker is in a timed phase. o: feed(i) (the builds up to item i), pool, cals
-- (each device's calibration), dev, progress, store(item, rec).
function M.run_on_devices(spec, found, o)
  local d = devices.dispatcher((function()
    local ns = {}
    for i, dv in ipairs(spec.devices) do ns[i] = dv.index end
    return ns
  end)())
  local by_index = {}
  for i, dv in ipairs(spec.devices) do by_index[dv.index] = { d = dv, cal = o.cals[i] } end
  local pool, records, active, next_i = o.pool, {}, {}, 1
  local timed = 0 -- devices whose worker is in a timed phase
  local function finished(i, rec)
    records[i] = rec
    o.progress:finished(rec)
    if spec.on_record then spec.on_record(rec) end
  end
  while true do
    -- stored ones are reported as they come in order; the others go to a free device
    while next_i <= #spec.items do
      local item = spec.items[next_i]
      if found[next_i] then
        found[next_i].reused = true
        finished(next_i, found[next_i])
        next_i = next_i + 1
      else
        local n = devices.take(d, next_i)
        if n == nil then break end
        o.feed(next_i)
        local dv, i = by_index[n], next_i
        local paused = false
        local ctx = { calibration = dv.cal, device = o.dev, env = dv.d.env,
                      gpu = { index = n, uuid = dv.d.info.uuid, name = dv.d.info.name },
                      status = function(what) o.progress:status(item.label, what) end,
                      idle = function() if pool then pool:service(0) end coroutine.yield() end,
                      pause = function()
                        if not paused then paused = true; timed = timed + 1; if pool then pool:pause() end end
                      end,
                      resume = function()
                        if paused then
                          paused = false; timed = timed - 1
                          if timed == 0 and pool then pool:resume() end
                        end
                      end }
        if pool then
          ctx.build = function()
            while not pool:result(item.eval_key) and pool:has(item.eval_key) do
              pool:service(0)
              coroutine.yield()
            end
            return pool:result(item.eval_key)
          end
        end
        active[#active + 1] = { i = i, n = n, item = item, ctx = ctx,
                                co = coroutine.create(function() return spec.evaluate(item, ctx) end) }
        next_i = next_i + 1
      end
    end
    if #active == 0 and next_i > #spec.items then break end
    local still = {}
    for _, a in ipairs(active) do
      local ok, rec = coroutine.resume(a.co)
      if not ok then
        a.ctx.resume()
        error(rec, 0)
      end
      if coroutine.status(a.co) == "dead" then
        a.ctx.resume()
        devices.give(d, a.n)
        rec.gpu = a.ctx.gpu
        o.store(a.item, rec)
        finished(a.i, rec)
      else
        still[#still + 1] = a
      end
    end
    active = still
    -- every worker is read with a short wait in its own step: nothing here waits longer
    if pool then pool:service(#active == 0 and 0.02 or 0) end
  end
  return records
end

local SPEC = { db = true, command = true, config = true, scope = true, items = true, identify = true,
               evaluate = true, resume = true, reuse = true, log = true, tty = true, out = true,
               lines = true, on_record = true, builds = true, devices = true }

-- run(spec) -> { run_id, records, summary, db (path), device }.
--   items      what to evaluate, in order; each has a `label` (for the progress)
--   config     what every evaluation's result depends on (protocol, dtype, sizes, the resolved
--              options); the device's uuid is added. Hashed whole: the evaluations' keys
--   scope      what the run covers beyond that (target, candidates): the run's configuration
--              is { evaluation = config, <scope> }, and --resume finds the run by its hash
--   identify   function(item) -> the parts of its key beside the configuration's hash (the
--              problem's and candidate's hashes): the key is stored as item.eval_key
--   evaluate   function(item, ctx) -> a finished record (kreach.results.evaluation); ctx: calibration,
--              device, gpu ({ index, uuid, name }: the GPU its workers run on, recorded with
--              the evaluation), status(what) for the progress line
--   reuse      a stored evaluation with the same key is reported instead of evaluating again
--              (default true; --force sets it false). A resumed run reuses its own always.
--   resume     continue the newest interrupted ('running') run of this configuration ("or_begin":
--              begin one when there is none, as a shard's task does: kreach slurm)
--   db, command (argv, stored), log(line), tty, out (the progress's file), lines (a line per
--   evaluation, default true), on_record(rec) (after each is stored)
--   builds     { pool = (kreach.run.builds), job = function(item) -> argv, worker options of
--              its build, or nil (none), ahead = n }: the items to evaluate are built ahead of
--              the GPU worker, up to `ahead` items past the one evaluated; ctx then has
--              build() (the item's build, waited for: kreach.run.builds' result, or nil),
--              idle() (services the pool while a GPU worker runs), pause() and resume()
--              (around the timed calls). The pool is closed when the run ends.
--   devices    { { index =, env = {"K=V"}, info = (the device's properties: kreach.run.devices
--              .probe) }, ... }: a GPU worker per device, items going to whichever is free
--              (kreach.run.devices' dispatch), each evaluation in a coroutine that yields while
--              its workers run; ctx then also has env (the device's pinning), calibration is the device's own,
--              and the records are written here, by this process alone, as they finish. The
--              configuration's device is the list of the devices' uuids.
function M.run(spec)
  for k in pairs(spec) do
    if not SPEC[k] then error(("campaign.run: unknown field '%s'"):format(tostring(k)), 2) end
  end
  local log = spec.log or function(l) io.stderr:write(l, "\n") end
  local dev = device.require(spec.command and ("kreach " .. tostring(spec.command[2] or "eval")) or "an evaluation")
  local db, err = store.open(spec.db or store.DEFAULT_PATH)
  if not db then errors.database(err) end
  local ok, res = pcall(function()
    local calibration, cals
    local econf = {}
    for k, v in pairs(spec.config) do econf[k] = v end
    if spec.devices then
      cals = {}
      local uuids = {}
      for i, d in ipairs(spec.devices) do
        cals[i] = M.calibration(db, d.info, log, d.env)
        uuids[i] = d.info.uuid
      end
      table.sort(uuids)
      econf.device = uuids
    else
      calibration = M.calibration(db, dev, log)
      econf.device = dev.uuid
    end
    local econf_hash = M.hash(M.canonical(econf))
    local rconf = { evaluation = econf }
    for k, v in pairs(spec.scope or {}) do rconf[k] = v end
    local rconf_hash = M.hash(M.canonical(rconf))
    local run_id
    local own = {} -- eval_key -> the record this (resumed) run stored
    local r = spec.resume and db:latest_run{ config_hash = rconf_hash, status = "running" }
    if spec.resume == "or_begin" and not r then log(("no interrupted run of this shard in %s: beginning it"):format(db.path)) end
    if spec.resume and (r or spec.resume ~= "or_begin") then
      if not r then
        errors.usage("nothing to resume in %s: no interrupted run of this command and configuration", db.path)
      end
      run_id = r.id
      db:reopen_run(run_id)
      for _, e in ipairs(db:evaluations{ run_id = run_id }) do own[e.eval_key] = e end
      log(("resuming run %d of %s (started %s)"):format(run_id, db.path, tostring(r.started_at)))
    else
      run_id = begin_run(db, dev, spec.command or {}, rconf, rconf_hash)
    end
    local progress = M.progress(#spec.items, { tty = spec.tty, out = spec.out, lines = spec.lines, command = spec.command })
    local records = {}
    -- every item's key and stored record first, so that the builds ahead skip reused ones
    local found = {}
    for i, item in ipairs(spec.items) do
      local parts = { econf_hash }
      for _, p in ipairs(spec.identify(item)) do parts[#parts + 1] = p end
      item.eval_key = M.key(parts)
      found[i] = own[item.eval_key] or (spec.reuse ~= false and db:find_evaluation(item.eval_key)) or nil
    end
    local b = spec.builds
    local fed = 0 -- items up to this one have been given to the build pool
    local function feed(upto)
      while b and fed < math.min(upto, #spec.items) do
        fed = fed + 1
        local item = spec.items[fed]
        if not found[fed] then
          local argv, wopts = b.job(item)
          if argv then b.pool:submit(item.eval_key, argv, wopts) end
        end
      end
    end
    local function store_rec(item, rec)
      rec.eval_key, rec.run_id = item.eval_key, run_id
      rec.id = db:record_evaluation(rec)
    end
    local function build_ctx(item, ctx)
      if not b then return ctx end
      b.pool:service(0)
      ctx.build = function() return b.pool:wait(item.eval_key) end
      ctx.idle = function() b.pool:service(0) end
      ctx.pause = function() b.pool:pause() end
      ctx.resume = function() b.pool:resume() end
      return ctx
    end
    if spec.devices then
      records = M.run_on_devices(spec, found, {
        feed = function(i) feed(i + (b and b.ahead or 0)) end, pool = b and b.pool, cals = cals, dev = dev,
        progress = progress, store = store_rec })
    else
      for i, item in ipairs(spec.items) do
        local rec = found[i]
        if rec then
          rec.reused = true
        else
          feed(i + (b and b.ahead or 0))
          rec = spec.evaluate(item, build_ctx(item, { calibration = calibration, device = dev,
                                                      gpu = { index = dev.ordinal, uuid = dev.uuid, name = dev.name },
                                                      status = function(what) progress:status(item.label, what) end }))
          store_rec(item, rec)
        end
        records[#records + 1] = rec
        progress:finished(rec)
        if spec.on_record then spec.on_record(rec) end
      end
    end
    progress:close()
    db:finish_run(run_id, "finished")
    return { run_id = run_id, records = records, summary = evaluation.summary(records), db = db.path, device = dev }
  end)
  if spec.builds then spec.builds.pool:close() end
  db:close()
  if not ok then error(res, 0) end
  return res
end

return M
