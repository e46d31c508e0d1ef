-- kreach.run.evaluate: evaluation runs (docs/evaluation.md). Candidates are matched to problems,
-- judged by the correctness protocol in a worker process, timed against their baseline in a
-- second, fresh worker process when correct, and every finished evaluation is committed to the
-- results store at once. A run killed at any moment loses at most the evaluation in flight;
-- `resume` continues it, and evaluations already stored under the same configuration are
-- reused unless `force`. This module is the parent's side: it never touches candidate code.
local campaign = require "kreach.run.campaign"
local candidate = require "kreach.candidate.lua"
local core = require "kreach.core"
local cudnn = require "kreach.cudnn"
local errors = require "kreach.errors"
local evaluation = require "kreach.results.evaluation"
local fs = require "kreach.core.fs"
local json = require "kreach.json"
local kinds = require "kreach.kinds"
local jpolicy = require "kreach.judge.policy"
local kbcandidate = require "kreach.candidate.pylint"
local lfs = require "lfs"
local problem = require "kreach.problem"
local protocol = require "kreach.run.protocol"
local pytorch = require "kreach.pytorch"
local text = require "kreach.text"
local verdict = require "kreach.verdict"
local worker = require "kreach.run.worker"

local M = {}

-- Bumped when a change of the protocol makes old evaluations incomparable with new ones.
-- 2: the timed calls rotate over input sets with new values every round, outputs poisoned
-- before every call, and what they produce checked (kreach.judge.measure).
-- 3: a KernelBench-format candidate's time is the guard's (CUDA events and the all-streams span,
-- taken in C), its outputs plain tensors, and a thread or process it leaves is invalid_candidate.
M.PROTOCOL = 3

-- The most a candidate file (and a manifest) may hold; a larger one is invalid_candidate.
M.MAX_CANDIDATE_BYTES = candidate.MAX_FILE_BYTES

-- file_text(path, max_bytes) -> the file's bytes, or nil and why not: the parent reads
-- candidate files (to hash and store them), so only a regular file of at most max_bytes
-- (default MAX_CANDIDATE_BYTES) is read; a FIFO, /dev/zero or a directory is refused at once
-- instead of hanging or exhausting the harness (kreach.core.fs.read_regular).
function M.file_text(path, max_bytes)
  return fs.read_regular(path, max_bytes or M.MAX_CANDIDATE_BYTES)
end

-- Why a candidate file cannot be used (nil when it can): it must be a regular file (links are
-- followed) of at most MAX_CANDIDATE_BYTES, and, for a manifest's entry, resolve inside
-- `inside` (the manifest's directory, resolved).
function M.check_candidate_file(path, inside)
  local resolved, exists = fs.resolve(path)
  if not resolved then -- "<path>: <why>"
    local why = tostring(exists)
    return why:sub(1, #path + 2) == path .. ": " and why:sub(#path + 3) or why
  end
  if not exists then
    return lfs.symlinkattributes(path) and "a link to nothing" or "No such file or directory"
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

-- manifest_entries(m) -> the number of entries of a decoded manifest (a JSON null among them
-- is a hole, which the caller names), or nil and why it is not a list.
local function manifest_entries(m)
  if type(m) ~= "table" then return nil, ("a JSON %s, not a list"):format(type(m) == "nil" and "null" or type(m)) end
  local n = 0
  for k in pairs(m) do
    if math.type(k) ~= "integer" or k < 1 then return nil, "a JSON object, not a list [{\"file\": ...}, ...]" end
    if k > n then n = k end
  end
  if n == 0 then return nil, "an empty list" end
  return n
end

-- manifest_problem(v) -> the problem id an entry's "problem" names (nil when it names none),
-- or nil and what is wrong with it: a whole number (19, or the string "19"), nothing else.
local function manifest_problem(v)
  if v == nil then return nil end
  local id
  if math.type(v) == "integer" then id = v
  elseif type(v) == "string" and v:match("^%d+$") then id = math.tointeger(tonumber(v))
  elseif math.type(v) == "float" and v == math.floor(v) and v >= 0 and v < 2 ^ 53 then id = math.tointeger(v) end
  if id and id >= 0 then return id end
  local shown = type(v) == "string" and ("%q"):format(text.clean(v, 64)) or tostring(v)
  if type(v) == "table" then shown = "a JSON " .. ((next(v) == nil or v[1] ~= nil) and "list" or "object") end
  return nil, ("must be a problem id, a whole number such as 19, not %s"):format(shown)
end

-- The candidate files of the arguments: files as given, directories expanded. A directory with
-- a manifest.json lists its candidates there: [{ "file": "x.lua", "problem": 19,
-- "origin": { "model": "...", "sample": 0 } }, ...]; otherwise its files named
-- <problem id>_<anything>.lua (or .py) are taken, in name order; each found in a directory
-- has from_dir set (plan then keeps, for one problem, only those that name it). A file that
-- cannot be a candidate (check_candidate_file: not a regular file, too large, or a manifest's
-- entry that resolves outside the manifest's directory, such as "../../etc/passwd" or a link
-- out) comes back with `invalid` set to the reason: it is recorded as invalid_candidate,
-- never read.
function M.candidate_files(args)
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
        if mtext then ok, m = pcall(json.decode, mtext) end
        local n, why = manifest_entries(m)
        if not ok or not n then
          errors[#errors + 1] = ("%s: not a JSON list of candidates (%s)"):format(mpath,
            ok and why or text.clean(tostring(m), 1024))
        else
          local inside = fs.resolve(dir)
          for i = 1, n do
            local e = m[i]
            local problem_id, perr
            if type(e) == "table" then problem_id, perr = manifest_problem(e.problem) end
            if e == nil then
              errors[#errors + 1] = ("%s: entry %d is null, not an object {\"file\": ...}"):format(mpath, i)
            elseif type(e) ~= "table" or type(e.file) ~= "string" or e.file == "" then
              errors[#errors + 1] = ("%s: entry %d has no \"file\""):format(mpath, i)
            elseif perr then
              errors[#errors + 1] = ("%s: entry %d: \"problem\" %s"):format(mpath, i, perr)
            else
              local path = dir .. "/" .. e.file
              local invalid = M.check_candidate_file(path, inside)
              -- the name comes from the manifest: shown and stored only cleaned and bounded
              if invalid then path = text.clean(path, 1024) end
              out[#out + 1] = { path = path, problem = problem_id, origin = type(e.origin) == "table" and e.origin or nil,
                                invalid = invalid and text.clean(invalid, 2048) or nil, from_dir = true }
            end
          end
        end
      else
        local names = {}
        for f in lfs.dir(dir) do
          if f:match("^%d+_") and kinds.kind_of_file(f) then names[#names + 1] = f end
        end
        table.sort(names)
        for _, f in ipairs(names) do out[#out + 1] = { path = dir .. "/" .. f, from_dir = true } end
        if #names == 0 then errors[#errors + 1] = ("%s: no candidate files (<id>_<name>.lua or .py) and no manifest.json"):format(dir) end
      end
    else
      errors[#errors + 1] = ("%s: no such file or directory"):format(a)
    end
  end
  return out, errors
end

-- plan(target, candidate_args) -> items, skipped. target is a suite name or a problem (path,
-- id or name). For one problem, a candidate found in a directory is taken only when it names
-- that problem (its manifest entry's "problem", else its file name's leading id) or names
-- none; the others are skipped (a file given by name is always taken). Each item:
-- { problem_path, problem_id, problem_name, suite, candidate_path, origin, invalid (why the
-- file cannot be a candidate, or nil) }; each skipped: { candidate_path, why }.
function M.plan(target, cand_args)
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
  local single_p = single and problem.load(single)
  local items = {}
  for _, c in ipairs(files) do
    local path
    if single then
      local id = c.from_dir and (c.problem or math.tointeger(tonumber((c.path:match("([^/]+)$") or ""):match("^(%d+)_"))))
      if id and id ~= single_p.id then
        skipped[#skipped + 1] = { candidate_path = c.path, why = ("%s: names problem %d, not %s (%d)"):format(
          text.clean(c.path, 1024), id, single_p.name, single_p.id) }
      else
        path = single
      end
    else
      local id = c.problem or math.tointeger(tonumber((c.path:match("([^/]+)$") or ""):match("^(%d+)_")))
      if not id then
        skipped[#skipped + 1] = { candidate_path = c.path, why = ("%s: the file name does not start with a problem id (<id>_<name>.lua) and no manifest names its problem"):format(text.clean(c.path, 1024)) }
      elseif not by_id[id] then
        skipped[#skipped + 1] = { candidate_path = c.path, why = ("problem %d is not in suite %s"):format(id, suite_name) }
      else
        path = by_id[id]
      end
    end
    if path then
      local p = problem.load(path)
      items[#items + 1] = { problem_path = path, problem_id = p.id, problem_name = p.name, suite = p.suite,
                            candidate_path = c.path, origin = c.origin, invalid = c.invalid,
                            label = c.path:match("([^/]+)$") or c.path }
    end
  end
  return items, skipped
end

-- ---- one evaluation ----

-- draw_salt() -> a whole number in [2^40, 2^41) from /dev/urandom: added to the seeds of the
-- timed calls' inputs (kreach.judge.measure), so that a candidate cannot know them in advance (the
-- trials' seeds are --seed's, and a candidate that memorised answers to the trials' inputs
-- would be found while timing). Not part of the evaluation's key: an evaluation's inputs are a
-- random draw, stored with it (sets.draw_salt).
function M.draw_salt()
  local f = assert(io.open("/dev/urandom", "rb"))
  local b = f:read(5)
  f:close()
  local n = 0
  for i = 1, 5 do n = n * 256 + b:byte(i) end
  return (1 << 40) + n
end

local function worker_spec(item, o, extra)
  local spec = { problem = item.problem_path, candidate = item.candidate_path, dtype = o.dtype, sizes = o.sizes }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return spec
end

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
  local py
  if kbcandidate.is_python(item.candidate_path) then
    -- a KernelBench-format candidate: its static lint here (unless --no-lint), then the Python
    -- worker's protocol
    local lv = not o.no_lint and kbcandidate.lint(item.candidate_path, problem.load(item.problem_path))
    if lv then return evaluation.finish(rec, { verdict = lv, wall_s = core.now() - t0 }) end
    if not o.python then
      return evaluation.finish(rec, { verdict = verdict.new("skipped", ("a KernelBench-format candidate needs a python3 with CUDA PyTorch: %s"):format(
        tostring(o.python_note))), wall_s = core.now() - t0 })
    end
    py = o.python
  end
  local cspec = worker_spec(item, o, { policy = o.policy, python = py })
  local limits = { timeout_s = o.timeout_s, memory_bytes = o.memory_bytes, timeouts = protocol.timeouts("check", cspec, o.timeout_s) }
  status("correctness")
  local chk, failed = worker.run(protocol.argv("check", cspec), limits)
  if not chk then chk = { verdict = failed, trials = {} } end
  local v = chk.verdict
  local tres
  if v.verdict == "correct" then
    status("timing")
    local spec = worker_spec(item, o, { policy = o.policy, timing = o.timing, measure = o.measure,
                                        calibration = ctx.calibration, pytorch = o.pytorch, python = py,
                                        draw_salt = o.random_draws and M.draw_salt() or nil })
    local r, tfailed = worker.run(protocol.argv("time", spec), { timeout_s = o.timeout_s, memory_bytes = o.memory_bytes,
                                                                 timeouts = protocol.timeouts("time", spec, o.timeout_s) })
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

-- identify(item) -> the parts of an item's key: the hashes of its problem file and its
-- candidate file, which it reads (item.candidate_source). A file that is not a usable
-- candidate is never read: it is recorded as invalid_candidate with the reason, under a key
-- made of its path and that reason.
function M.identify(item)
  local ptext = assert(M.file_text(item.problem_path, 64 * 1024 * 1024))
  if not item.invalid then
    local ctext, cerr = M.file_text(item.candidate_path)
    if ctext then item.candidate_source = ctext else item.invalid = tostring(cerr) end
  end
  item.problem_hash = campaign.hash(ptext)
  item.candidate_hash = item.candidate_source and campaign.hash(item.candidate_source)
    or campaign.key({ "invalid candidate file", item.candidate_path, item.invalid })
  if item.invalid then
    item.candidate_source = ("-- kreach did not read this file: %s\n"):format(item.invalid)
  end
  return { item.problem_hash, item.candidate_hash }
end

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

-- find_python() -> { python =, dirs = } (what a worker needs to run a KernelBench-format
-- candidate: the interpreter and the directories its seal lets it read), or nil and why not.
function M.find_python()
  if not core.has_device() then return nil, "no CUDA device" end
  local found, why = pytorch.find()
  if not found then return nil, why .. " (KREACH_PYTHON names a python3 with CUDA PyTorch)" end
  return { python = found.python, dirs = found.dirs }
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
  if topts and topts.mode == "graph" then
    return nil, "PyTorch is not timed in graph mode (a replay of kreach's graph has no PyTorch call in it)"
  end
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
-- policy, timing, measure (overrides), db (path), resume, force, timeout_s, memory_bytes, tty,
-- command (argv), log (function(line)), out (a file for the progress).
function M.run(o)
  local log = o.log or function(l) io.stderr:write(l, "\n") end
  local conf = M.resolve(o)
  if conf.pytorch_note then log(conf.pytorch_note) end
  conf.pytorch_note = nil
  local items, skipped = M.plan(o.target, o.candidates)
  for _, s in ipairs(skipped) do log("skipped: " .. s.why) end
  -- nothing to evaluate: said, and no device, database or run is touched
  if #items == 0 then return { records = {}, skipped = skipped, nothing = true } end
  log(("%d candidate%s to evaluate on %s%s"):format(#items, #items == 1 and "" or "s", o.target,
    #skipped > 0 and (" (%d skipped)"):format(#skipped) or ""))
  local eo = { dtype = conf.dtype, sizes = conf.sizes, policy = conf.policy, timing = conf.timing, no_lint = conf.no_lint,
               measure = conf.measure, pytorch = conf.pytorch, timeout_s = o.timeout_s, memory_bytes = o.memory_bytes, log = log,
               -- the timed calls' inputs from an unpredictable seed, unless --timing-seed gave one
               random_draws = not (o.measure and o.measure.seed) }
  -- KernelBench-format candidates run in the Python worker: its interpreter, found once (not
  -- part of the configuration's hash: where python3 lives does not change a verdict)
  for _, it in ipairs(items) do
    if kbcandidate.is_python(it.candidate_path) and eo.python == nil and eo.python_note == nil then
      eo.python, eo.python_note = M.find_python()
      if eo.python_note then log("KernelBench-format candidates are skipped: " .. eo.python_note) end
    end
  end
  local res = campaign.run{
    db = o.db, command = o.command, config = conf, scope = { target = o.target, candidates = o.candidates },
    items = items, resume = o.resume, reuse = not o.force, log = log, tty = o.tty, out = o.out,
    identify = M.identify,
    evaluate = function(item, ctx) return M.evaluate(item, eo, ctx) end,
  }
  res.skipped = skipped
  return res
end

-- The text table of a run's evaluations and its summary.
function M.report(records, summary, out)
  out = out or io.stdout
  out:write(evaluation.table_text(records), "\n", evaluation.summary_text(summary))
end

return M
