-- kreach.run.campaign: a run of evaluations, the one loop every command that evaluates goes through
-- (eval, bench, and the commands to come). It owns the results store for the run's length, the
-- device's calibration, the run record (begun, or resumed), the key of every evaluation and the
-- reuse of stored ones, the progress on the terminal, and the close guard: every evaluation is
-- committed as it finishes, and whatever goes wrong, the store is closed and a run that did not
-- finish stays 'running', so that --resume continues it. What one evaluation is (which workers,
-- what record) is the caller's `evaluate`.
local core = require "kreach.core"
local device = require "kreach.device"
local errors = require "kreach.errors"
local evaluation = require "kreach.results.evaluation"
local json = require "kreach.json"
local protocol = require "kreach.run.protocol"
local store = require "kreach.results.store"
local text = require "kreach.text"
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
function M.calibration(db, dev, log)
  local cal = db:calibration(dev.uuid)
  if not cal then
    log(("no calibration of %s (%s) in %s: measuring one now (kreach calibrate)"):format(dev.name, dev.uuid, db.path))
    local r, failed = worker.run(protocol.argv("calibrate", {}), { timeout_s = 300 })
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

local Progress = {}
Progress.__index = Progress

-- progress(total, {tty =, out =, lines =}): a status line on a terminal while an item runs, and
-- (lines ~= false) one line per finished evaluation.
function M.progress(total, o)
  o = o or {}
  return setmetatable({ total = total, done = 0, tty = o.tty, out = o.out or io.stderr, width = 30,
                        lines = o.lines ~= false }, Progress)
end

function Progress:status(label, what)
  if not self.tty then return end
  local filled = self.total > 0 and math.floor(self.width * self.done / self.total) or 0
  local line = ("\r[%s%s] %d/%d %s: %s"):format(("#"):rep(filled), ("."):rep(self.width - filled), self.done,
    self.total, text.clean(label, 256), what)
  self.out:write(line:sub(1, 118), "\27[K")
  self.out:flush()
end

function Progress:finished(rec)
  self.done = self.done + 1
  if self.tty then self.out:write("\r\27[K") end
  if self.lines then
    local c = evaluation.cells(rec)
    self.out:write(("[%d/%d] %s  %s  %s  %s\n"):format(self.done, self.total, c[1], c[2], c[3], c[6]))
  end
  self.out:flush()
end

function Progress:close()
  if self.tty then self.out:write("\r\27[K"); self.out:flush() end
end

-- ---- a run ----

local function begin_run(db, dev, command, config, config_hash)
  local v = core.versions()
  return db:begin_run{ command = command, config = config, config_hash = config_hash, device = dev,
    -- "13.0" as CUDA's integer 13000: the store converts (kreach.results.store's cuda_int)
    versions = { driver = v.driver, runtime = v.runtime, nvrtc = v.nvrtc },
    kreach_version = core.version, kreach_revision = core.version:match("%(([^)]+)%)") or core.version }
end

local SPEC = { db = true, command = true, config = true, scope = true, items = true, identify = true,
               evaluate = true, resume = true, reuse = true, log = true, tty = true, out = true,
               lines = true, on_record = true }

-- run(spec) -> { run_id, records, summary, db (path), device }.
--   items      what to evaluate, in order; each has a `label` (for the progress)
--   config     what every evaluation's result depends on (protocol, dtype, sizes, the resolved
--              options); the device's uuid is added. Hashed whole: the evaluations' keys
--   scope      what the run covers beyond that (target, candidates): the run's configuration
--              is { evaluation = config, <scope> }, and --resume finds the run by its hash
--   identify   function(item) -> the parts of its key beside the configuration's hash (the
--              problem's and candidate's hashes): the key is stored as item.eval_key
--   evaluate   function(item, ctx) -> a finished record (kreach.results.evaluation); ctx: calibration,
--              device, status(what) for the progress line
--   reuse      a stored evaluation with the same key is reported instead of evaluating again
--              (default true; --force sets it false). A resumed run reuses its own always.
--   resume     continue the newest interrupted ('running') run of this configuration ("or_begin":
--              begin one when there is none, as a shard's task does: kreach slurm)
--   db, command (argv, stored), log(line), tty, out (the progress's file), lines (a line per
--   evaluation, default true), on_record(rec) (after each is stored)
function M.run(spec)
  for k in pairs(spec) do
    if not SPEC[k] then error(("campaign.run: unknown field '%s'"):format(tostring(k)), 2) end
  end
  local log = spec.log or function(l) io.stderr:write(l, "\n") end
  local dev = device.require(spec.command and ("kreach " .. tostring(spec.command[2] or "eval")) or "an evaluation")
  local db, err = store.open(spec.db or store.DEFAULT_PATH)
  if not db then errors.database(err) end
  local ok, res = pcall(function()
    local calibration = M.calibration(db, dev, log)
    local econf = {}
    for k, v in pairs(spec.config) do econf[k] = v end
    econf.device = dev.uuid
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
    local progress = M.progress(#spec.items, { tty = spec.tty, out = spec.out, lines = spec.lines })
    local records = {}
    for _, item in ipairs(spec.items) do
      local parts = { econf_hash }
      for _, p in ipairs(spec.identify(item)) do parts[#parts + 1] = p end
      item.eval_key = M.key(parts)
      local rec = own[item.eval_key] or (spec.reuse ~= false and db:find_evaluation(item.eval_key))
      if rec then
        rec.reused = true
      else
        rec = spec.evaluate(item, { calibration = calibration, device = dev,
                                    status = function(what) progress:status(item.label, what) end })
        rec.eval_key, rec.run_id = item.eval_key, run_id
        rec.id = db:record_evaluation(rec)
      end
      records[#records + 1] = rec
      progress:finished(rec)
      if spec.on_record then spec.on_record(rec) end
    end
    progress:close()
    db:finish_run(run_id, "finished")
    return { run_id = run_id, records = records, summary = evaluation.summary(records), db = db.path, device = dev }
  end)
  db:close()
  if not ok then error(res, 0) end
  return res
end

return M
