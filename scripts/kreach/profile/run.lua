-- kreach.profile.run: runs a program under kreach's CUPTI injection library (libkreach_inject.so)
-- and hands back what it recorded as Lua tables: the trace, and with profile() the selected
-- steps, where they were stored and the report. `kreach profile -- <command...>`
-- (cmd/profile.lua) and the experiments use it alike.
--
-- The program is started with kreach.core.proc from an argv list (argv[1] is looked up on PATH;
-- no shell), with its environment built here, explicitly: this process's own, the caller's
-- `env` applied to it, then the library's variables (docs/profiling-inject.md):
--   CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH  the library (both: kernels and NVTX ranges)
--   KREACH_TRACE_FILE       the trace: opts.output, or a file in a fresh temporary directory
--   KREACH_PROFILE_KNOBS    a file the program may write a JSON object of its knobs to
--   KREACH_TRACE_KINDS      opts.kinds, else as inherited (unset: every kind)
--   KREACH_TRACE_ALTERNATE  opts.alternate (an NVTX range name), else unset
-- What kreach.core.proc gives the program: standard input from /dev/null, standard output read
-- here line by line (captured, copied to a file handle, or handed to a function), standard error
-- collected (its last 64 KiB, returned as `stderr`) or, with pass_stderr, ours, a process group
-- of its own (a time limit kills all of it).
--
-- Expected failures (no library, a program that cannot start, writes no trace or a bad one) return
-- nil, a message, and the result so far (the program's output and exit, when it ran); misuse (an
-- argv that is not a list of strings, an unknown option) raises.
local core = require "kreach.core"
local proc = require "kreach.core.proc"
local lfs = require "lfs"
local cjson_safe = require "cjson.safe"
local errors = require "kreach.errors"
local inject = require "kreach.inject"
local report = require "kreach.profile.report"
local store = require "kreach.results.store"
local output = require "kreach.atomic"
local trace_mod = require "kreach.profile.trace"

local M = {}

-- The variables this module sets or removes; the rest of the environment is passed on.
M.VARIABLES = { "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "KREACH_TRACE_FILE", "KREACH_PROFILE_KNOBS",
                "KREACH_TRACE_KINDS", "KREACH_TRACE_ALTERNATE" }

-- A message without positions in kreach's own code ("scripts/kreach/results/store.lua:12: "), from a
-- string or a kreach.errors error: it is about the program, the trace or the database, not about
-- where kreach noticed.
local clean = errors.message

local function is_file(path) return lfs.attributes(path, "mode") == "file" end

local function check_options(opts, known, fn)
  if opts == nil then return {} end
  if type(opts) ~= "table" then error(("%s: an options table expected, got %s"):format(fn, type(opts)), 3) end
  for k in pairs(opts) do
    if not known[k] then error(("%s: unknown option '%s'"):format(fn, tostring(k)), 3) end
  end
  return opts
end

local function check_argv(argv, fn)
  if type(argv) ~= "table" or argv[1] == nil then
    error(("%s: argv must be a list of strings, the program first"):format(fn), 3)
  end
  local copy = {}
  for i, a in ipairs(argv) do
    if type(a) ~= "string" then error(("%s: argv[%d] is a %s, not a string"):format(fn, i, type(a)), 3) end
    copy[i] = a
  end
  return copy
end

-- ---- what the program is started with ----

-- inject_lib({override =, executable =}) -> the injection library's path, or nil and why.
-- $KREACH_INJECT_LIB (override: another value; "" ignores it), else libkreach_inject.so beside
-- the kreach binary (a build tree), else in lib/kreach beside its bin/ (an installed kreach).
function M.inject_lib(opts)
  opts = check_options(opts, { override = true, executable = true }, "inject_lib")
  return inject.lib(opts.override, opts.executable)
end

-- kinds(spec) -> the set of activity kinds KREACH_TRACE_KINDS=spec traces ({kernel = true, ...}),
-- or nil and why. spec: nil or "" (every kind), a comma-separated list of kernel, memcpy, memset,
-- marker or all (the library's syntax), or a list of those names.
function M.kinds(spec)
  local all = {}
  for _, k in ipairs(trace_mod.TRACE_KINDS) do all[k] = true end
  if type(spec) == "table" then spec = table.concat(spec, ",") end
  if spec == nil or spec == "" then return all end
  if type(spec) ~= "string" then error(("kinds: a string or a list of names expected, got %s"):format(type(spec)), 2) end
  local set = {}
  for item in (spec .. ","):gmatch("([^,]*),") do
    local name = item:match("^%s*(.-)%s*$")
    if name == "all" then
      for k in pairs(all) do set[k] = true end
    elseif all[name] then
      set[name] = true
    else
      return nil, ("KREACH_TRACE_KINDS=%s: %s (kinds: %s, all)"):format(spec,
        name == "" and "an empty kind name" or ("unknown kind '%s'"):format(name), table.concat(trace_mod.TRACE_KINDS, ", "))
    end
  end
  return set
end

-- inherited() -> { NAME = value }: this process's environment, as it is now. Lua can only look a
-- name up, so the names come from /proc/self/environ (the environment the process started with)
-- and the variables kreach sets itself later, and each value from os.getenv.
M.inherited = inject.inherited

-- command(argv, {lib =, trace_path =, knobs_path =, kinds =, alternate =, env =, base =}) ->
-- { argv =, env = {"NAME=value", ...} (sorted by name), vars = {NAME = value} (the library's
-- variables set) }, or nil and why (a bad kinds). Builds what the program is started with, and
-- nothing else. base: the environment to start from (default inherited()); env: { NAME = value
-- or false } applied to it, false removing a variable; the library's variables come last and win.
function M.command(argv, opts)
  argv = check_argv(argv, "command")
  opts = check_options(opts, { lib = true, trace_path = true, knobs_path = true, kinds = true, alternate = true,
                               env = true, base = true }, "command")
  if type(opts.lib) ~= "string" or type(opts.trace_path) ~= "string" then
    error("command: lib and trace_path (strings) are needed", 2)
  end
  if opts.alternate ~= nil and (type(opts.alternate) ~= "string" or opts.alternate == "") then
    error("command: alternate must be the name of an NVTX range", 2)
  end
  local kinds_text = opts.kinds
  if type(kinds_text) == "table" then kinds_text = table.concat(kinds_text, ",") end
  if kinds_text ~= nil then
    local ok, err = M.kinds(kinds_text)
    if not ok then return nil, err end
  end
  local env = {}
  for k, v in pairs(opts.base or M.inherited()) do env[k] = v end
  for k, v in pairs(opts.env or {}) do
    if type(k) ~= "string" or k == "" or k:find("[=\0]") then error(("command: bad variable name '%s'"):format(tostring(k)), 2) end
    if v == false then env[k] = nil
    elseif type(v) == "string" or type(v) == "number" then env[k] = tostring(v)
    else error(("command: the value of %s must be a string, a number or false"):format(k), 2) end
  end
  local vars = {
    CUDA_INJECTION64_PATH = opts.lib,
    NVTX_INJECTION64_PATH = opts.lib,
    KREACH_TRACE_FILE = opts.trace_path,
    KREACH_PROFILE_KNOBS = opts.knobs_path,
    KREACH_TRACE_KINDS = kinds_text,
    KREACH_TRACE_ALTERNATE = opts.alternate,
  }
  for _, k in ipairs(M.VARIABLES) do
    if vars[k] ~= nil then env[k] = vars[k]
    elseif k ~= "KREACH_TRACE_KINDS" then env[k] = nil end -- (the kinds otherwise pass on as inherited)
  end
  local names = {}
  for k in pairs(env) do names[#names + 1] = k end
  table.sort(names)
  local list = {}
  for i, k in ipairs(names) do list[i] = k .. "=" .. env[k] end
  return { argv = argv, env = list, vars = vars }
end

-- ---- running it ----

local function exit_text(exit)
  if exit.timed_out then return ("was stopped after its time limit of %g s"):format(exit.limit_s) end
  if exit.how == "signal" then
    return ("was killed by signal %d%s"):format(exit.status, exit.signal and (" (" .. exit.signal .. ")") or "")
  end
  return ("exited with status %d"):format(exit.status)
end
M.exit_text = exit_text

-- The files <trace>.<pid> beside the trace: those of other processes of the program that used
-- CUDA (the library never overwrites a trace), as a set of paths.
local function pid_traces(trace_path)
  local dir, base = trace_path:match("^(.*)/([^/]*)$")
  if not dir then dir, base = ".", trace_path end
  if dir == "" then dir = "/" end
  local found = {}
  local ok, iter, state = pcall(lfs.dir, dir)
  if not ok then return found end
  for f in iter, state do
    if f:sub(1, #base + 1) == base .. "." and f:sub(#base + 2):match("^%d+$") then
      found[(dir == "/" and "" or dir) .. "/" .. f] = true
    end
  end
  return found
end

-- The program's standard output, each line to deliver(line), until it ends or `deadline`
-- (core.now() seconds) passes: nil, or why it was stopped ("timeout" or "too long": then the
-- program is killed).
local function pump(w, deadline, deliver)
  while true do
    local line, why = w:read_line(deadline and math.max(deadline - core.now(), 0) or nil)
    if not line then
      if why == "eof" then return nil end
      w:kill()
      return why
    end
    deliver(line)
  end
end

-- The knobs the program wrote to its knobs file (KREACH_PROFILE_KNOBS) into t.knobs, when it is a
-- JSON object; a file that holds something else is a warning.
local function read_knobs(knobs_path, t, warnings)
  local kf = io.open(knobs_path, "rb")
  if kf then
    local text = kf:read("a") or ""
    kf:close()
    local k = cjson_safe.decode(text)
    if type(k) == "table" and (next(k) == nil or k[1] == nil) then
      t.knobs = k
    elseif text:find("%S") then
      warnings[#warnings + 1] = "the program's knobs file is not a JSON object; ignored"
    end
  end
end

local RUN_OPTIONS = { lib = true, output = true, kinds = true, alternate = true, env = true, stdout = true,
                      timeout_s = true, allow_partial = true, pass_stderr = true }

-- run(argv, opts) -> result, or nil, why and the result so far. opts:
--   output         keep the trace in this file (which must not exist); else a temporary one, removed
--   kinds          KREACH_TRACE_KINDS (a string or a list); alternate: KREACH_TRACE_ALTERNATE
--   env            { NAME = value | false } for the program's environment
--   stdout         "capture" (the default: result.stdout), a file handle to copy each line to
--                  (io.stdout, io.stderr), or a function called with each line (no newline)
--   pass_stderr    the program writes to our standard error as it goes (a progress bar shows
--                  live), instead of having it collected into result.stderr
--   timeout_s      kill the program (and all it started) after this many seconds
--   allow_partial  read a trace without its footer (the program was killed)
--   lib            the injection library (default inject_lib())
-- result: { argv =, exit = { how = "exit"|"signal", status =, signal = "SIGKILL"|nil,
--   timed_out = true|nil, limit_s = }, ok = (exited with status 0), run_s =, stdout =, stderr =,
--   warnings = { text, ... }, others = { paths } (kept with output only), trace_path = (output),
--   trace = the trace (kreach.profile.trace's shape, with command = argv, knobs from the program,
--   meta.exit and meta.run_s) }. A program that fails still gives a result when its trace reads.
function M.run(argv, opts)
  argv = check_argv(argv, "run")
  opts = check_options(opts, RUN_OPTIONS, "run")
  local sink = opts.stdout or "capture"
  if not (sink == "capture" or type(sink) == "function" or (io.type(sink) == "file")) then
    error("run: stdout must be \"capture\", an open file or a function", 2)
  end
  if opts.timeout_s ~= nil and not (type(opts.timeout_s) == "number" and opts.timeout_s > 0) then
    error("run: timeout_s must be a positive number of seconds", 2)
  end
  local res = { argv = argv, warnings = {} }
  local lib, lerr = opts.lib, nil
  if lib == nil then lib, lerr = M.inject_lib() elseif not is_file(lib) then
    lerr = ("the injection library is missing: %s"):format(lib)
    lib = nil
  end
  if not lib then return nil, lerr, res end
  if opts.output and lfs.attributes(opts.output) then
    return nil, ("%s exists (a trace is never overwritten): remove it or name another"):format(opts.output), res
  end
  local dir, derr = output.tmpdir()
  if not dir then return nil, derr, res end
  local trace_path = opts.output or (dir .. "/trace.jsonl")
  local knobs_path = dir .. "/knobs.json"
  local before = pid_traces(trace_path)
  local others = {}
  local function cleanup()
    os.remove(knobs_path)
    if not opts.output then
      os.remove(trace_path)
      for _, f in ipairs(others) do os.remove(f) end
    end
    os.remove(dir)
  end
  local plan, perr = M.command(argv, { lib = lib, trace_path = trace_path, knobs_path = knobs_path, kinds = opts.kinds,
                                       alternate = opts.alternate, env = opts.env })
  if not plan then cleanup(); return nil, perr, res end

  local captured = {}
  local function deliver(line)
    if sink == "capture" then captured[#captured + 1] = line .. "\n"
    elseif type(sink) == "function" then sink(line)
    else sink:write(line, "\n"); sink:flush() end
  end
  local t0 = core.now()
  local w, serr = proc.spawn(plan.argv, { env = plan.env, pass_stderr = opts.pass_stderr == true })
  if not w then cleanup(); return nil, serr, res end
  local stopped = pump(w, opts.timeout_s and t0 + opts.timeout_s, deliver)
  local how, code, name = w:wait()
  res.run_s = core.now() - t0
  res.stderr = w:stderr()
  w:free()
  res.exit = how == "signaled" and { how = "signal", status = code, signal = name } or { how = "exit", status = code }
  if stopped == "timeout" then res.exit.timed_out, res.exit.limit_s = true, opts.timeout_s end
  res.ok = how == "exited" and code == 0 and not stopped
  if sink == "capture" then res.stdout = table.concat(captured) end
  if stopped == "too long" then
    res.warnings[#res.warnings + 1] = ("the program wrote a line of more than %d MiB to its standard output, and was stopped"):format(
      proc.MAX_LINE // (1024 * 1024))
  end

  for f in pairs(pid_traces(trace_path)) do
    if not before[f] then others[#others + 1] = f end
  end
  table.sort(others)
  if #others > 0 then
    res.warnings[#res.warnings + 1] = ("%d other process%s of the program traced CUDA too; only the first is analysed%s"):format(
      #others, #others == 1 and "" or "es", opts.output and (": " .. table.concat(others, ", ")) or " (keep them with -o)")
    if opts.output then res.others = others end
  end
  if not is_file(trace_path) then
    cleanup()
    return nil, ("the program wrote no trace to %s%s: is it a CUDA program, and did it exit normally?"):format(trace_path,
      res.ok and "" or (" (it %s)"):format(exit_text(res.exit))), res
  end
  local t, err = trace_mod.read_kreach(trace_path, { allow_partial = opts.allow_partial })
  if not t then
    cleanup()
    if not res.ok then err = err .. (" (the program %s)"):format(exit_text(res.exit)) end
    return nil, err, res
  end
  t.command = argv
  t.meta.exit, t.meta.run_s = res.exit, res.run_s
  t.meta.path = opts.output
  read_knobs(knobs_path, t, res.warnings)
  cleanup()
  if opts.output then res.trace_path = opts.output end
  res.trace = t
  return res
end

-- ---- after the run: steps, the store, the report ----

-- select(trace, {steps =, skip =, workload =, knobs =}) -> the trace with the knobs added (to the
-- program's own) and the workload named, its steps selected (the NVTX ranges called `steps`
-- after the first `skip`; without steps, the first kernel's start to the last one's end unless
-- the trace has a window already), or nil and why.
function M.select(t, opts)
  opts = check_options(opts, { steps = true, skip = true, workload = true, knobs = true }, "select")
  if opts.knobs then
    t.knobs = t.knobs or {}
    for k, v in pairs(opts.knobs) do t.knobs[k] = v end
  end
  if opts.workload then t.workload = opts.workload end
  if opts.steps then return trace_mod.select(t, { range = opts.steps, skip = opts.skip or 0 }) end
  if opts.skip and opts.skip ~= 0 then error("select: skip needs steps", 2) end
  if t.window then return t end
  return trace_mod.select(t)
end

-- What went wrong with a results database, for an exit status (kreach.errors.STATUS):
-- "database" when it cannot be used (it cannot be opened, is not kreach's, a statement failed on
-- it); nil for anything else. `e` is what store.open returned or raised.
local function kind_of(e)
  if errors.is(e) then return e.kind end
  return "database"
end

-- store(trace, db) -> the profile's id in the results database at path `db`, or nil, why and
-- "database" when the database cannot be used.
function M.store(t, db)
  local function failed(e, kind) return nil, ("cannot store the profile in %s: %s"):format(db, clean(e)), kind end
  local ok, s, oerr = pcall(store.open, db)
  if not ok then return failed(s, kind_of(s)) end
  if not s then return failed(oerr, "database") end
  local sok, id = pcall(s.save_profile, s, t)
  s:close()
  if not sok then return failed(id, errors.is(id) and id.kind or nil) end
  return id
end

-- load(id, db) -> the stored profile `id` of the results database at `db` (a trace, with
-- meta.stored = {id =, db =}), or nil, why and "database" when the database cannot be used, or
-- "usage" when it has no such profile (an id that names nothing, like a problem name). Read-only: it leaves nothing beside the database.
function M.load(id, db)
  local ok, opened, t = pcall(store.read, db, function(s) return s:load_profile(id) end)
  if not ok then return nil, clean(opened), kind_of(opened) end
  if not opened then return nil, clean(t), "database" end
  if t == nil then return nil, ("no profile %d in %s"):format(id, db), "usage" end
  t.meta = t.meta or {}
  t.meta.stored = { id = id, db = db }
  return t
end

-- list(db) -> the stored profiles of the results database at `db`, in id order: { id,
-- created_at, source, command, workload, knobs, device, wall_s, dropped, n_kernels } each (no
-- kernels: kreach profile report <id> reads one), or nil, why and "database" when the database
-- cannot be used. Read-only, as load is.
function M.list(db)
  local ok, opened, rows = pcall(store.read, db, function(s) return s:profiles() end)
  if not ok then return nil, clean(opened), kind_of(opened) end
  if not opened then return nil, clean(rows), "database" end
  local out = {}
  for i, r in ipairs(rows) do
    out[i] = { id = r.id, created_at = r.created_at, source = r.source, command = r.command, workload = r.workload,
               knobs = r.knobs, device = r.device, wall_s = r.wall_s, dropped = r.dropped, n_kernels = r.n_kernels }
  end
  return out
end

-- build(trace, {rules =, speedups =, top =, addressable =}) -> report.build's report, or nil and
-- why (an unknown family in the speedups, say).
function M.build(t, opts)
  local ok, rep = pcall(report.build, t, opts)
  if not ok then return nil, clean(rep) end
  return rep
end

local PROFILE_OPTIONS = { steps = true, skip = true, workload = true, knobs = true, db = true, rules = true,
                          speedups = true, top = true, addressable = true }
for k in pairs(RUN_OPTIONS) do PROFILE_OPTIONS[k] = true end

-- profile(argv, opts) -> result, or nil, why and the result so far. run(argv) with run's
-- options, then select() with steps, skip, workload and knobs, store() in the results database
-- at opts.db (none without it), and the report (rules, speedups, top, addressable:
-- report.build's options). The result is run's, plus selected (the trace of the selected
-- steps), stored ({id =, db =} when stored) and report (with report.stored); on failure, the
-- result so far has error_kind "database" when the database could not be used.
function M.profile(argv, opts)
  argv = check_argv(argv, "profile")
  opts = check_options(opts, PROFILE_OPTIONS, "profile")
  local ropts = {}
  for k in pairs(RUN_OPTIONS) do ropts[k] = opts[k] end
  local res, err, partial = M.run(argv, ropts)
  if not res then return nil, err, partial end
  local sel, serr = M.select(res.trace, { steps = opts.steps, skip = opts.skip, workload = opts.workload, knobs = opts.knobs })
  if not sel then return nil, serr, res end
  res.selected = sel
  if opts.db then
    local id, derr, kind = M.store(sel, opts.db)
    if not id then
      res.error_kind = kind
      return nil, derr, res
    end
    res.stored = { id = id, db = opts.db }
  end
  local rep, rerr = M.build(sel, { rules = opts.rules, speedups = opts.speedups, top = opts.top, addressable = opts.addressable })
  if not rep then return nil, rerr, res end
  rep.stored = res.stored
  res.report = rep
  return res
end

return M
