-- kreach.eval: evaluation runs (docs/evaluation.md). Candidates are matched to problems,
-- judged by the correctness protocol in a worker process, timed against their baseline in a
-- second, fresh worker process when correct, and every finished evaluation is committed to the
-- results store at once. A run killed at any moment loses at most the evaluation in flight;
-- `resume` continues it, and evaluations already stored under the same configuration are
-- reused unless `force`. This module is the parent's side: it never touches candidate code.
local verdict = require "kreach.verdict"

local M = {}

-- Bumped when a change of the protocol makes old evaluations incomparable with new ones.
-- 2: the timed calls rotate over input sets with new values every round, outputs poisoned
-- before every call, and what they produce checked (kreach.measure).
M.PROTOCOL = 2

-- The text an evaluation's configuration is hashed from (kreach.json.canonical).
function M.canonical(v) return require("kreach.json").canonical(v) end

function M.hash(s) return require("kreach.core.util").hash(s) end

-- The most a candidate file (and a manifest) may hold; a larger one is invalid_candidate.
M.MAX_CANDIDATE_BYTES = require("kreach.candidate").MAX_FILE_BYTES

-- file_text(path, max_bytes) -> the file's bytes, or nil and why not: the parent reads
-- candidate files (to hash and store them), so only a regular file of at most max_bytes
-- (default MAX_CANDIDATE_BYTES) is read; a FIFO, /dev/zero or a directory is refused at once
-- instead of hanging or exhausting the harness (kreach.core.fs.read_regular).
function M.file_text(path, max_bytes)
  return require("kreach.core.fs").read_regular(path, max_bytes or M.MAX_CANDIDATE_BYTES)
end

-- Why a candidate file cannot be used (nil when it can): it must be a regular file (links are
-- followed) of at most MAX_CANDIDATE_BYTES, and, for a manifest's entry, resolve inside
-- `inside` (the manifest's directory, resolved).
function M.check_candidate_file(path, inside)
  local fs = require "kreach.core.fs"
  local resolved, exists = fs.resolve(path)
  if not resolved then -- "<path>: <why>"
    local why = tostring(exists)
    return why:sub(1, #path + 2) == path .. ": " and why:sub(#path + 3) or why
  end
  if not exists then
    return require("lfs").symlinkattributes(path) and "a link to nothing" or "No such file or directory"
  end
  if inside and resolved:sub(1, #inside + 1) ~= inside .. "/" then
    return ("it resolves to %s, outside the manifest's directory %s"):format(resolved, inside)
  end
  local st, err = fs.stat(resolved)
  if not st then return err end
  if st.mode ~= "file" then return ("a %s, not a regular file"):format(st.mode) end
  if st.size > M.MAX_CANDIDATE_BYTES then
    return ("%d bytes, more than the limit of %d"):format(st.size, M.MAX_CANDIDATE_BYTES)
  end
  return nil
end

-- ---- what to evaluate ----

-- The candidate files of the arguments: files as given, directories expanded. A directory with
-- a manifest.json lists its candidates there: [{ "file": "x.lua", "problem": 19,
-- "origin": { "model": "...", "sample": 0 } }, ...]; otherwise its files named
-- <problem id>_<anything>.lua are taken, in name order. A file that cannot be a candidate
-- (check_candidate_file: not a regular file, too large, or a manifest's entry that resolves
-- outside the manifest's directory, such as "../../etc/passwd" or a link out) comes back
-- with `invalid` set to the reason: it is recorded as invalid_candidate, never read.
function M.candidate_files(args)
  local lfs = require "lfs"
  local text = require "kreach.text"
  local out, errors = {}, {}
  for _, a in ipairs(args) do
    local mode = lfs.attributes(a, "mode")
    if mode == "file" or (mode and mode ~= "directory") then
      out[#out + 1] = { path = a, invalid = M.check_candidate_file(a) }
    elseif mode == "directory" then
      local dir = a:gsub("/+$", "")
      local mpath = dir .. "/manifest.json"
      if lfs.attributes(mpath) then
        local mtext, merr = M.file_text(mpath)
        local ok, m = false, merr
        if mtext then ok, m = pcall(require("cjson").decode, mtext) end
        if not ok or type(m) ~= "table" then
          errors[#errors + 1] = ("%s: not a JSON list of candidates (%s)"):format(mpath, ok and "not a list" or tostring(m))
        else
          local inside = require("kreach.core.fs").resolve(dir)
          for i, e in ipairs(m) do
            if type(e) ~= "table" or type(e.file) ~= "string" or e.file == "" then
              errors[#errors + 1] = ("%s: entry %d has no \"file\""):format(mpath, i)
            else
              local path = dir .. "/" .. e.file
              local invalid = M.check_candidate_file(path, inside)
              -- the name comes from the manifest: shown and stored only cleaned and bounded
              if invalid then path = text.clean(path, 1024) end
              out[#out + 1] = { path = path, problem = e.problem, origin = type(e.origin) == "table" and e.origin or nil,
                                invalid = invalid and text.clean(invalid, 2048) or nil }
            end
          end
        end
      else
        local names = {}
        for f in lfs.dir(dir) do
          if f:match("^%d+_.*%.lua$") then names[#names + 1] = f end
        end
        table.sort(names)
        for _, f in ipairs(names) do out[#out + 1] = { path = dir .. "/" .. f } end
        if #names == 0 then errors[#errors + 1] = ("%s: no candidate files (<id>_<name>.lua) and no manifest.json"):format(dir) end
      end
    else
      errors[#errors + 1] = ("%s: no such file or directory"):format(a)
    end
  end
  return out, errors
end

-- plan(target, candidate_args) -> items, skipped. target is a suite name or a problem (path,
-- id or name). Each item: { problem_path, problem_id, problem_name, suite, candidate_path,
-- origin, invalid (why the file cannot be a candidate, or nil) }; each skipped:
-- { candidate_path, why }.
function M.plan(target, cand_args)
  local problem = require "kreach.problem"
  local files, errors = M.candidate_files(cand_args)
  local skipped = {}
  for _, e in ipairs(errors) do skipped[#skipped + 1] = { candidate_path = e:match("^([^:]+)"), why = e } end
  local suite_name, by_id
  for _, s in ipairs(problem.suites()) do if s == target then suite_name = s end end
  local single
  if suite_name then
    local s = problem.load_suite(suite_name)
    by_id = {}
    for i, id in ipairs(s.ids) do by_id[id] = s.files[i] end
  else
    single = problem.resolve(target)
  end
  local items = {}
  for _, c in ipairs(files) do
    local path
    if single then
      path = single
    else
      local id = tonumber(c.problem) or tonumber((c.path:match("([^/]+)$") or ""):match("^(%d+)_"))
      if not id then
        skipped[#skipped + 1] = { candidate_path = c.path, why = "the file name does not start with a problem id (<id>_<name>.lua) and no manifest names its problem" }
      elseif not by_id[id] then
        skipped[#skipped + 1] = { candidate_path = c.path, why = ("problem %d is not in suite %s"):format(id, suite_name) }
      else
        path = by_id[id]
      end
    end
    if path then
      local p = problem.load(path)
      items[#items + 1] = { problem_path = path, problem_id = p.id, problem_name = p.name, suite = p.suite,
                            candidate_path = c.path, origin = c.origin, invalid = c.invalid }
    end
  end
  return items, skipped
end

-- ---- the summary of a run ----

M.FAST_P = { 0, 0.5, 0.8, 1, 1.5, 2 }

local function geomean(xs)
  if #xs == 0 then return nil end
  local s = 0
  for _, x in ipairs(xs) do s = s + math.log(x) end
  return math.exp(s / #xs)
end

-- summary(rows) -> { n, correct, wins, win_rate, median_speedup, geomean_speedup,
-- fast_p = { {p =, value =}, ... }, by_verdict = {verdict = count} }. rows: evaluations with
-- verdict (string), speedup, speedup_lo. A win is a correct candidate whose speedup interval
-- lies above 1; fast_p counts correct candidates faster than p times the baseline; both are
-- fractions of all evaluated candidates (KernelBench's fast_p).
function M.summary(rows)
  local n, correct, wins = #rows, 0, 0
  local speedups, by_verdict = {}, {}
  for _, r in ipairs(rows) do
    by_verdict[r.verdict] = (by_verdict[r.verdict] or 0) + 1
    if r.verdict == "correct" then
      correct = correct + 1
      if r.speedup then speedups[#speedups + 1] = r.speedup end
      if r.speedup_lo and r.speedup_lo > 1 then wins = wins + 1 end
    end
  end
  local s = { n = n, correct = correct, wins = wins, by_verdict = by_verdict,
              win_rate = n > 0 and wins / n or nil,
              median_speedup = #speedups > 0 and require("kreach.stats").median(speedups) or nil,
              geomean_speedup = geomean(speedups), fast_p = {} }
  for _, p in ipairs(M.FAST_P) do
    local c = 0
    for _, r in ipairs(rows) do
      if r.verdict == "correct" and r.speedup and r.speedup > p then c = c + 1 end
    end
    s.fast_p[#s.fast_p + 1] = { p = p, value = n > 0 and c / n or nil }
  end
  return s
end

-- ---- reports ----

local function fmt_ms(x) return x and ("%.4g"):format(x) or "-" end

-- Reasons and file names can hold a candidate's words (and rows stored before they were
-- cleaned): they reach the terminal through kreach.text.clean.
local function row_cells(r)
  local clean = require("kreach.text").clean
  local v = clean(r.verdict .. (r.reason and r.verdict ~= "correct" and (" (" .. r.reason .. ")") or ""), 256)
  local sp = "-"
  if r.speedup then sp = ("%.3fx [%.3f, %.3f]"):format(r.speedup, r.speedup_lo or 0 / 0, r.speedup_hi or 0 / 0) end
  local sol = r.sol_fraction and ("%.0f%%"):format(100 * r.sol_fraction) or "-"
  return { ("%03d %s"):format(r.problem_id or 0, (r.problem_name or "?"):sub(1, 28)),
           clean((r.candidate_path or "-"):match("([^/]+)$") or "-", 256), v:sub(1, 40), fmt_ms(r.baseline_ms),
           fmt_ms(r.candidate_ms), sp, sol, (r.throttled and "throttled" or "") .. (r.stored and " stored" or "") }
end

-- The text table of a run's evaluations and its summary line.
function M.report(rows, s, out)
  out = out or io.stdout
  local head = { "problem", "candidate", "verdict", "base ms", "cand ms", "speedup [95% CI]", "%SOL", "" }
  local cells = { head }
  for _, r in ipairs(rows) do cells[#cells + 1] = row_cells(r) end
  local w = {}
  for _, c in ipairs(cells) do for i, x in ipairs(c) do w[i] = math.max(w[i] or 0, #x) end end
  for _, c in ipairs(cells) do
    local parts = {}
    for i, x in ipairs(c) do
      local right = i >= 4 and i <= 7
      parts[i] = right and (" "):rep(w[i] - #x) .. x or x .. (" "):rep(w[i] - #x)
    end
    out:write(table.concat(parts, "  "):gsub("%s+$", ""), "\n")
  end
  local function pct(x) return x and ("%.1f%%"):format(100 * x) or "-" end
  out:write(("\n%d evaluated, %d correct (%s); wins %d (%s: speedup interval above 1)\n"):format(
    s.n, s.correct, pct(s.n > 0 and s.correct / s.n or nil), s.wins, pct(s.win_rate)))
  out:write(("speedup of correct candidates: median %s, geometric mean %s\n"):format(
    s.median_speedup and ("%.3fx"):format(s.median_speedup) or "-", s.geomean_speedup and ("%.3fx"):format(s.geomean_speedup) or "-"))
  local fp = {}
  for _, f in ipairs(s.fast_p) do fp[#fp + 1] = ("fast_%g %s"):format(f.p, pct(f.value)) end
  out:write(table.concat(fp, ", "), "\n")
  local vs = {}
  for k, c in pairs(s.by_verdict) do vs[#vs + 1] = ("%s %d"):format(k, c) end
  table.sort(vs)
  out:write("verdicts: ", table.concat(vs, ", "), "\n")
end

-- ---- progress ----

local Progress = {}
Progress.__index = Progress

function M.progress(total, tty, out)
  return setmetatable({ total = total, done = 0, tty = tty, out = out or io.stderr, width = 30 }, Progress)
end

function Progress:status(label, what)
  if not self.tty then return end
  local filled = self.total > 0 and math.floor(self.width * self.done / self.total) or 0
  local line = ("\r[%s%s] %d/%d %s: %s"):format(("#"):rep(filled), ("."):rep(self.width - filled), self.done, self.total,
    require("kreach.text").clean(label, 256), what)
  self.out:write(line:sub(1, 118), "\27[K")
  self.out:flush()
end

function Progress:finished(r)
  self.done = self.done + 1
  local c = row_cells(r)
  local line = ("[%d/%d] %s  %s  %s  %s"):format(self.done, self.total, c[1], c[2], c[3], c[6])
  if self.tty then self.out:write("\r\27[K") end
  self.out:write(line, "\n")
  self.out:flush()
end

function Progress:close()
  if self.tty then self.out:write("\r\27[K"); self.out:flush() end
end

-- ---- workers ----

-- The time limits of a timing worker's phases: sampling gets ten times its budget and warm-up.
function M.phase_timeouts(timeout_s, topts)
  local t = require("kreach.timing").options(topts)
  local sampling = 10 * (t.budget_s + 2 * t.warmup_s) + 30
  return { timing = math.max(timeout_s, sampling) }
end

-- The command line of a worker: job "check" or "time", item { problem_path, candidate_path
-- (nil: the baseline alone) }, o { dtype, sizes, policy, timing, measure, calibration }.
function M.worker_argv(job, item, o)
  local kreach = require "kreach"
  local cjson = require "cjson"
  local argv = { kreach.executable(), "worker", job, item.problem_path }
  if item.candidate_path then argv[#argv + 1] = item.candidate_path end
  argv[#argv + 1] = "--dtype"; argv[#argv + 1] = o.dtype
  for k, v in pairs(o.sizes or {}) do argv[#argv + 1] = "--size"; argv[#argv + 1] = ("%s=%d"):format(k, v) end
  if o.policy and next(o.policy) then argv[#argv + 1] = "--policy"; argv[#argv + 1] = cjson.encode(o.policy) end
  if job == "time" then
    if o.timing and next(o.timing) then argv[#argv + 1] = "--timing"; argv[#argv + 1] = cjson.encode(o.timing) end
    if o.measure and next(o.measure) then argv[#argv + 1] = "--measure"; argv[#argv + 1] = cjson.encode(o.measure) end
    if o.calibration then argv[#argv + 1] = "--calibration"; argv[#argv + 1] = cjson.encode(o.calibration) end
  end
  return argv
end

-- Runs the protocol and (when correct) the timing of one item. Returns the record for the
-- store (without run_id) and the flat row for reports.
function M.evaluate(item, o, status)
  local kreach = require "kreach"
  local worker = require "kreach.worker"
  local t0 = kreach.now()
  local started = os.date("!%Y-%m-%dT%H:%M:%SZ")
  status = status or function() end
  status("correctness")
  local chk, failed = worker.run(M.worker_argv("check", item, o), { timeout_s = o.timeout_s, memory_bytes = o.memory_bytes })
  if not chk then chk = { verdict = failed, trials = {} } end
  local v = chk.verdict
  local tres
  if v.verdict == "correct" then
    status("timing")
    local r, tfailed = worker.run(M.worker_argv("time", item, o), { timeout_s = o.timeout_s, timeouts = M.phase_timeouts(o.timeout_s, o.timing),
                                                                    memory_bytes = o.memory_bytes })
    if not r then
      v = tfailed
      v.detail = (v.detail and v.detail .. "; " or "") .. "while timing"
    else
      tres = r
      v = r.verdict or v
      -- what the timing noticed (fewer input sets than asked for, a warm-up that did not
      -- settle, a baseline that fails its own thresholds) is shown, not only stored
      local log = o.log or function(l) io.stderr:write(l, "\n") end
      for _, w in ipairs(type(r.warnings) == "table" and r.warnings or {}) do
        log(("warning: %s: %s"):format(require("kreach.text").clean(item.candidate_path or "baseline", 1024), tostring(w)))
      end
    end
  end
  local rec = {
    eval_key = item.eval_key, dtype = o.dtype, sizes = o.sizes or {},
    verdict = { verdict = v.verdict, reason = v.reason, detail = v.detail ~= require("cjson").null and v.detail or nil },
    check = chk, timing = tres, started_at = started, finished_at = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    wall_s = kreach.now() - t0,
  }
  if tres and tres.baseline then
    rec.baseline_ms = tres.baseline.summary.median
    if tres.candidate then
      rec.candidate_ms = tres.candidate.summary.median
      rec.sol_fraction = tres.candidate.sol and tres.candidate.sol.fraction or nil
    end
    if tres.speedup then rec.speedup, rec.speedup_lo, rec.speedup_hi = tres.speedup.ratio, tres.speedup.lo, tres.speedup.hi end
    rec.throttled = tres.throttled or false
  end
  return rec
end

-- The flat row of a stored or new evaluation, for the report.
function M.row(item, rec, stored)
  return { problem_id = item.problem_id, problem_name = item.problem_name, candidate_path = item.candidate_path,
           verdict = rec.verdict.verdict or rec.verdict, reason = rec.verdict.reason or rec.reason,
           detail = rec.verdict.detail or rec.detail,
           baseline_ms = rec.baseline_ms, candidate_ms = rec.candidate_ms, speedup = rec.speedup,
           speedup_lo = rec.speedup_lo, speedup_hi = rec.speedup_hi, sol_fraction = rec.sol_fraction,
           throttled = rec.throttled == true or rec.throttled == 1, stored = stored or nil, eval_id = rec.id }
end

-- The record of an item whose file cannot be a candidate (item.invalid, from plan): the
-- verdict invalid_candidate with the file and the reason, and for source a line saying why
-- the file was not read. item has problem_hash, candidate_hash and eval_key set (run does that).
function M.invalid_record(item, o)
  local now = os.date("!%Y-%m-%dT%H:%M:%SZ")
  return { eval_key = item.eval_key, dtype = o.dtype, sizes = o.sizes or {},
           verdict = verdict.new("invalid_candidate", ("%s: %s"):format(item.candidate_path, item.invalid)),
           started_at = now, finished_at = now, wall_s = 0,
           problem = { suite = item.suite, problem_id = item.problem_id, name = item.problem_name,
                       path = item.problem_path, file_hash = item.problem_hash },
           candidate = { hash = item.candidate_hash, path = item.candidate_path, origin = item.origin,
                         source = ("-- kreach did not read this file: %s\n"):format(item.invalid),
                         name = item.candidate_path:match("([^/]+)$") or item.candidate_path } }
end

-- ---- calibration ----

-- This device's calibration from the store, measured (in a worker) and stored when missing;
-- returned as the workers take it (M.worker_argv), or nil when it could not be measured.
function M.calibration(db, dev, log)
  local cal = db:calibration(dev.uuid)
  if not cal then cal = M.measure_calibration(db, dev, log) end
  return cal and { copy_bytes_per_s = cal.copy_bytes_per_s, flops_per_s = cal.flops_per_s,
                   device_uuid = cal.device_uuid, measured_at = cal.measured_at } or nil
end

function M.measure_calibration(db, dev, log)
  log(("no calibration of %s (%s) in %s: measuring one now (kreach calibrate)"):format(dev.name, dev.uuid, db.path))
  local r, failed = require("kreach.worker").run({ require("kreach").executable(), "worker", "calibrate" }, { timeout_s = 300 })
  if not r then
    log("the calibration failed, so there are no speed-of-light figures: " .. tostring(failed.reason))
    return nil
  end
  db:save_calibration(r.calibration)
  return db:calibration(dev.uuid)
end

-- ---- a run ----

-- Starts a run in the store: its command, configuration, device, and the versions it ran with.
function M.begin_run(db, dev, command, config, config_hash)
  local kreach = require "kreach"
  local v = kreach.versions()
  local num = require("kreach.calibrate").version_number
  return db:begin_run{ command = command, config = config, config_hash = config_hash, device = dev,
    versions = { driver = num(v.driver), runtime = num(v.runtime), nvrtc = v.nvrtc },
    kreach_version = kreach.version, kreach_revision = kreach.version:match("%(([^)]+)%)") or kreach.version }
end

-- run(o) -> { run_id, rows, summary, skipped }, or { rows = {}, skipped, nothing = true } when
-- no candidate could be planned. o: target, candidates (paths), dtype, sizes,
-- policy, timing, measure (overrides), db (path), resume, force, timeout_s, tty, command (argv),
-- log (function(line)), out (a file for the progress).
function M.run(o)
  local kreach = require "kreach"
  local store = require "kreach.store"
  local log = o.log or function(l) io.stderr:write(l, "\n") end
  local items, skipped = M.plan(o.target, o.candidates)
  for _, s in ipairs(skipped) do log("skipped: " .. s.why) end
  -- nothing to evaluate: said, and no device, database or run is touched
  if #items == 0 then return { rows = {}, skipped = skipped, nothing = true } end
  log(("%d candidate%s to evaluate on %s%s"):format(#items, #items == 1 and "" or "s", o.target,
    #skipped > 0 and (" (%d skipped)"):format(#skipped) or ""))
  local dev = kreach.require_device()
  local db, err = store.open(o.db or "results.db")
  if not db then require("kreach.problem").raise(err) end
  local ok, res = pcall(function()
    o.calibration = M.calibration(db, dev, log)
    -- the configuration an evaluation depends on, and the run's (which adds what it covers)
    local econf = { protocol = M.PROTOCOL, dtype = o.dtype, sizes = o.sizes or {},
                    policy = require("kreach.check").policy(o.policy),
                    timing = require("kreach.timing").options(o.timing),
                    measure = o.measure or {}, device = dev.uuid }
    econf.policy.steps = nil
    local econf_hash = M.hash(M.canonical(econf))
    local rconf = { evaluation = econf, target = o.target, candidates = o.candidates }
    local rconf_hash = M.hash(M.canonical(rconf))
    local run_id
    if o.resume then
      local r = db:latest_run{ config_hash = rconf_hash, status = "running" }
      if not r then
        require("kreach.problem").raise(("nothing to resume in %s: no interrupted run of this command and configuration"):format(db.path))
      end
      run_id = r.id
      db:reopen_run(run_id)
      log(("resuming run %d of %s (started %s)"):format(run_id, db.path, tostring(r.started_at)))
    else
      run_id = M.begin_run(db, dev, o.command or {}, rconf, rconf_hash)
    end
    local progress = M.progress(#items, o.tty, o.out)
    local rows = {}
    for _, item in ipairs(items) do
      local ptext = assert(M.file_text(item.problem_path, 64 * 1024 * 1024))
      -- a file that is not a usable candidate is never read: it is recorded as
      -- invalid_candidate with the reason, under a key made of its path and that reason
      local ctext, cerr
      if not item.invalid then
        ctext, cerr = M.file_text(item.candidate_path)
        if not ctext then item.invalid = tostring(cerr) end
      end
      local label = (item.candidate_path:match("([^/]+)$") or item.candidate_path)
      do
        item.problem_hash = M.hash(ptext)
        item.candidate_hash = ctext and M.hash(ctext)
          or M.hash(M.canonical({ "invalid candidate file", item.candidate_path, item.invalid }))
        item.eval_key = M.hash(M.canonical({ econf_hash, item.problem_hash, item.candidate_hash }))
        local prev = not o.force and db:find_evaluation(item.eval_key)
        local row
        if item.invalid and not prev then
          local rec = M.invalid_record(item, o)
          rec.run_id = run_id
          rec.id = db:record_evaluation(rec)
          row = M.row(item, rec)
        elseif prev then
          row = M.row(item, { verdict = { verdict = prev.verdict, reason = prev.reason, detail = prev.detail },
                              baseline_ms = prev.baseline_ms, candidate_ms = prev.candidate_ms, speedup = prev.speedup,
                              speedup_lo = prev.speedup_lo, speedup_hi = prev.speedup_hi, sol_fraction = prev.sol_fraction,
                              throttled = prev.throttled, id = prev.id }, true)
        else
          local rec = M.evaluate(item, o, function(what) progress:status(label, what) end)
          rec.run_id = run_id
          rec.problem = { suite = item.suite, problem_id = item.problem_id, name = item.problem_name,
                          path = item.problem_path, file_hash = item.problem_hash }
          local origin = item.origin
          rec.candidate = { hash = item.candidate_hash, path = item.candidate_path, name = label, source = ctext, origin = origin }
          rec.id = db:record_evaluation(rec)
          row = M.row(item, rec)
        end
        rows[#rows + 1] = row
        progress:finished(row)
      end
    end
    progress:close()
    db:finish_run(run_id, "finished")
    return { run_id = run_id, rows = rows, summary = M.summary(rows), skipped = skipped, db = db.path }
  end)
  db:close()
  if not ok then error(res, 0) end
  return res
end

return M
