-- kreach profile: the share of a CUDA program's GPU time that custom kernels could replace
-- (docs/profiling.md).
--   kreach profile [options] -- <command...>      run it under the injection library, report
--   kreach profile import <trace> [options]        read a trace (kreach, PyTorch profiler, nsys)
--   kreach profile report <id|file> [options]      report a stored profile or a trace file
--   kreach profile list [--db PATH] [--json]       the stored profiles
-- A recorded or imported trace (its selected steps) is stored in the results database (--db,
-- $KREACH_DB, else results.db) unless --no-store. Running the program, selecting the steps,
-- storing and building the report are kreach.profile.run's; this file parses, calls and prints.
local kreach = require "kreach"
local cli = require "kreach.cli"
local cjson_safe = require "cjson.safe"
local errors = require "kreach.errors"
local json = require "kreach.json"
local lfs = require "lfs"
local classify = require "kreach.profile.classify"
local families = require "kreach.profile.families"
local report = require "kreach.profile.report"
local run = require "kreach.profile.run"
local text = require "kreach.text"
local trace_mod = require "kreach.profile.trace"

-- Exit statuses (docs/cli.md, kreach.errors.STATUS): 1 a failure (the program failed, a trace
-- that is incomplete, no such steps or stored profile), 2 usage, 3 an input file that cannot be
-- loaded (a trace named on the command line that is missing, unreadable or not a trace; a rules
-- file) or a results database that cannot be used.
local FAILED, USAGE, LOAD = errors.STATUS.failed, errors.STATUS.usage, errors.STATUS.load
local function status_of(kind) return kind and errors.STATUS[kind] or FAILED end

-- A message for the user carries no position in kreach's own code (kreach.errors.message; a rules
-- file's own "<file>:<line>:" is kept: it says where the user's mistake is).
local clean = errors.message

-- and a kernel's or a file's name in it is written with its terminal controls visible. A
-- failure is raised as a user error (kreach.errors), which kreach.cli prints and, under --json,
-- writes as the one JSON object on standard output.
local function fail(msg, status, kind)
  errors.raise(status or FAILED, text.clean(clean(msg)), kind)
end

-- ---- options shared by the three forms ----

local TRACE_FORMATS = { "auto", "kreach", "kineto", "nsys" }
local OUTPUT_FORMATS_AND_TRACE = { "text", "json", "csv", "auto", "kreach", "kineto", "nsys" }

-- --format, --json and the deprecated --csv as one choice, args.format (text, json or csv), with
-- args.json and args.csv set from it for the code below (and kreach.cli's JSON errors); a trace
-- format given to --format (its meaning before --trace-format) becomes args.trace_format.
local function output_format(args)
  local f = args.format
  if f and f ~= "text" and f ~= "json" and f ~= "csv" then
    if args.trace_format ~= "auto" and args.trace_format ~= f then
      fail(("--format %s and --trace-format %s: give the trace's format once, as --trace-format"):format(f, args.trace_format), USAGE)
    end
    args.trace_format, f = f, nil
  end
  if args.csv then
    io.stderr:write("kreach profile: warning: --csv is deprecated; use --format csv\n")
    if f and f ~= "csv" then fail(("--csv and --format %s: give one (--format csv)"):format(f), USAGE) end
    f = "csv"
  end
  if args.json then
    if f and f ~= "json" then fail(("--json and --format %s: give one"):format(f), USAGE) end
    f = "json"
  end
  args.format = f or "text"
  args.json, args.csv = args.format == "json", args.format == "csv"
end

local function common(args)
  local o = {}
  if args.speedups then
    local s, err = families.parse(args.speedups)
    if not s then return nil, err, USAGE end
    o.speedups = s
  end
  if args.rules then
    local rules, err = classify.load(args.rules)
    if not rules then return nil, err, LOAD end
    o.rules = rules
  end
  if o.speedups then
    -- checked before anything is stored
    local known = { unclassified = true }
    local fams = classify.new(o.rules):families()
    for _, f in ipairs(fams) do known[f] = true end
    for f in pairs(o.speedups) do
      if not known[f] then
        return nil, ("unknown family '%s' in --speedups (families: %s)"):format(f, table.concat(fams, ", ")), USAGE
      end
    end
  end
  if args.knobs then
    local k = cjson_safe.decode(args.knobs)
    if type(k) ~= "table" or (next(k) ~= nil and k[1] ~= nil) then
      return nil, "--knobs takes a JSON object, such as '{\"batch\": 32}'", USAGE
    end
    o.knobs = k
  end
  if args.skip and not args.steps then return nil, "--skip needs --steps", USAGE end
  if args.alternate and not args.steps then
    return nil, "--alternate needs --steps: it traces every other range of that name", USAGE
  end
  -- --skip and --top are checked by the parser (cli.nonnegative_integer, cli.positive_integer)
  o.db = args.db
  o.store = not args.no_store
  return o
end

-- Prints a report; `stored` is { id =, db = } when the trace is in a database: stored by this
-- command (import, run), or read from it (report, where `read` is true).
local function emit(rep, args, stored, read)
  if stored then rep.stored = stored end
  if args.json then
    io.write(report.json(rep), "\n")
  elseif args.csv then
    io.write(report.csv(rep))
  else
    io.write(report.text(rep))
    if stored then
      io.write(("%s profile %s %s %s\n"):format(read and "read:" or "stored:", tostring(stored.id),
        read and "of" or "in", stored.db))
    end
  end
  return 0
end

local function build(t, args, o)
  local rep, err = run.build(t, { rules = o.rules, speedups = o.speedups, top = args.top })
  if not rep then return nil, fail(err, USAGE) end
  return rep
end

local function selection(args, o)
  return { steps = args.steps, skip = args.skip, workload = args.workload, knobs = o.knobs }
end

-- A trace file named on the command line: the trace, or nil and the status of failing (3 when
-- it cannot be loaded; 1 when it is a trace whose program did not exit normally).
local function read_trace(path, args)
  local t, err, why = trace_mod.read(path, { format = args.trace_format, allow_partial = args.allow_partial })
  if not t then return nil, fail(err, why == "partial" and FAILED or LOAD) end
  return t
end

-- ---- the three forms ----

local function import(args, o)
  local path = args.words[2]
  if not path or args.words[3] then return fail("usage: kreach profile import <trace> [options]", USAGE) end
  local t, status = read_trace(path, args)
  if not t then return status end
  local sel, err = run.select(t, selection(args, o))
  if not sel then return fail(err) end
  -- the report first: a trace whose report cannot be made (a rule that fails on its kernels'
  -- names) is not stored
  local rep, bstatus = build(sel, args, o)
  if not rep then return bstatus end
  local stored
  if o.store then
    local id, serr, kind = run.store(sel, o.db)
    if not id then return fail(serr, status_of(kind), kind) end
    stored = { id = id, db = o.db }
  end
  return emit(rep, args, stored)
end

local function report_cmd(args, o)
  local what = args.words[2]
  if not what or args.words[3] then return fail("usage: kreach profile report <id|file> [options]", USAGE) end
  local t, status
  if what:match("^%d+$") and not lfs.attributes(what) then
    local err, kind
    t, err, kind = run.load(math.tointeger(tonumber(what)), o.db)
    if not t then return fail(err, status_of(kind), kind) end
  else
    t, status = read_trace(what, args)
    if not t then return status end
  end
  local sel, serr = run.select(t, selection(args, o))
  if not sel then return fail(serr) end
  local rep, bstatus = build(sel, args, o)
  if not rep then return bstatus end
  return emit(rep, args, sel.meta and sel.meta.stored, true)
end

local function run_program(args, o)
  -- KREACH_TRACE_KINDS (what the library traces; docs/profiling-inject.md), checked here so that a
  -- mistake stops before the program runs
  local spec = os.getenv("KREACH_TRACE_KINDS")
  local kinds, kerr = run.kinds(spec)
  if not kinds then return fail(kerr, USAGE) end
  if args.steps and not kinds.marker then
    return fail(("--steps needs the program's NVTX ranges, and KREACH_TRACE_KINDS=%s leaves out 'marker'"):format(spec), USAGE)
  end
  if args.alternate and not (kinds.kernel or kinds.memcpy or kinds.memset) then
    return fail(("--alternate has nothing to alternate: KREACH_TRACE_KINDS=%s traces only 'marker'"):format(spec), USAGE)
  end
  local lib, lerr = run.inject_lib()
  if not lib then return fail(lerr) end
  -- the library never overwrites a trace: it writes <path>.<pid> beside an existing one
  if args.output and lfs.attributes(args.output) then
    return fail(("%s exists (a trace is never overwritten): remove it or name another with -o"):format(args.output))
  end
  kreach.require_device("kreach profile")
  local opts = selection(args, o)
  opts.lib, opts.output, opts.kinds, opts.allow_partial = lib, args.output, spec, args.allow_partial
  opts.alternate = args.alternate and args.steps or nil
  -- the program's standard output goes to standard error when ours carries JSON or CSV
  opts.stdout = (args.json or args.csv) and io.stderr or io.stdout
  -- and its standard error is ours, written as it comes (progress bars show live)
  opts.pass_stderr = true
  opts.db = o.store and o.db or nil
  opts.rules, opts.speedups, opts.top = o.rules, o.speedups, args.top
  io.stdout:flush()
  local res, err, partial = run.profile(args.words, opts)
  local ran = res or partial
  for _, w in ipairs(ran and ran.warnings or {}) do io.stderr:write("kreach profile: warning: ", text.clean(w), "\n") end
  if not res then return fail(err, status_of(partial and partial.error_kind), partial and partial.error_kind) end
  emit(res.report, args, res.stored)
  -- the report is the output (under --json its one object): the program's failure is said on
  -- standard error only
  if not res.ok then
    io.stderr:write("kreach profile: ", text.clean("the program " .. run.exit_text(res.exit)), "\n")
    return FAILED
  end
  return 0
end

-- kreach profile list: the stored profiles of the results database, one line each (or one
-- JSON object: { "profiles": [...] }). A database that cannot be used is status 3, as for report.
local function list(args)
  if args.words[2] then return fail("usage: kreach profile list [--db PATH] [--json]", USAGE) end
  local rows, err, kind = run.list(args.db)
  if not rows then return fail(err, status_of(kind), kind) end
  if args.json then
    io.write(json.encode({ db = args.db, profiles = json.array(rows) }), "\n")
  elseif args.csv then
    return fail("--format csv applies to a report; kreach profile list prints text or --json", USAGE)
  elseif #rows == 0 then
    io.write(("no profiles stored in %s (kreach profile -- <command...> or kreach profile import <trace> stores one)\n"):format(args.db))
  else
    io.write(("%4s  %-20s %-7s %8s %9s  %-20s %s\n"):format("id", "created_at", "source", "kernels", "wall_s", "workload", "command"))
    for _, r in ipairs(rows) do
      local cmd = tostring(r.command or "-")
      if type(r.command) == "table" then
        local words = {}
        for i, w in ipairs(r.command) do words[i] = tostring(w) end
        cmd = table.concat(words, " ")
      end
      io.write(("%4d  %-20s %-7s %8d %9s  %-20s %s\n"):format(r.id, text.clean(tostring(r.created_at or "-"), 20),
        text.clean(tostring(r.source), 7), r.n_kernels or 0, r.wall_s and ("%.4g"):format(r.wall_s) or "-",
        text.clean(tostring(r.workload or "-"), 20), text.clean(cmd, 80)))
    end
  end
  return 0
end

-- The words that name a form rather than a program to run.
local FORMS = { "import", "list", "report" }

-- Whether `word` is a program kreach profile could run: a file (a path with a slash, or one in
-- the working directory), or a file in a directory of PATH, as the program is looked up.
local function runnable(word)
  if lfs.attributes(word, "mode") == "file" then return true end
  if word:find("/", 1, true) then return false end
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    if lfs.attributes(dir .. "/" .. word, "mode") == "file" then return true end
  end
  return false
end

-- Whether the words came after "--" (kreach profile -- prog): then they are a program, whatever
-- they are called. `arg` holds the command line as given (arg[1..] after the command's name).
local function after_dashdash()
  for _, a in ipairs(arg or {}) do if a == "--" then return true end end
  return false
end

return {
  summary = "Measure the share of a program's GPU time custom kernels could replace (needs a GPU to run one).",
  parser = function(p)
    p:usage([==[usage: kreach profile [options] -- <command...>
       kreach profile import <trace> [options]
       kreach profile report <id|file> [options]
       kreach profile list [--db PATH] [--json]]==])
    p:epilog([[Runs the command with the CUPTI injection library, or reads a trace (kreach JSON Lines, a
PyTorch profiler Chrome trace, an Nsight Systems SQLite export), classifies every kernel into a
family and reports the addressable fraction of GPU and wall time (docs/profiling.md).]])
    p:argument("words", "The command to run after --, or import <trace>, report <id|file> or list."):args("*")
    p:option("-o --output", "Keep the recorded trace (JSON Lines) in this file."):argname("<file>")
    cli.db_option(p)
    p:flag("--no-store", "Do not store the profile.")
    p:option("--steps", "Measure only inside the NVTX ranges of this name (ProfilerStep matches ProfilerStep#N).")
    p:option("--skip", "Skip the first N of those ranges (warm-up).", nil):convert(cli.nonnegative_integer)
    p:flag("--alternate", "Trace kernels and memory operations in every other --steps range only (the 1st, 3rd...): the run pays half the tracing, and the report measures what tracing cost its steps.")
    p:option("--workload", "A name for the workload, stored with the profile.")
    p:option("--knobs", "The workload's knobs as a JSON object, stored with the profile.")
    -- --format names the output, as kreach results export --format does; a trace's format is
    -- --trace-format (--format auto|kreach|kineto|nsys still means it: the names are apart)
    p:option("--format", "The report's format: text (the default), json or csv. (A trace format given here is taken as --trace-format.)")
      :choices(OUTPUT_FORMATS_AND_TRACE)
    p:option("--trace-format", "(import, report) The trace's format.", "auto"):choices(TRACE_FORMATS)
    p:option("--speedups", "Project end-to-end gains for these kernel speedups: family=x[,family=x...].")
    p:option("--rules", "A Lua file of classification rules, tried before the built-in ones.")
    p:option("--top", "How many kernels the table lists.", nil):convert(cli.positive_integer)
    p:flag("--allow-partial", "Analyse a trace without its footer (the program was killed).")
    p:mutex(p:flag("--json", "Print one JSON object (as --format json)."),
      p:flag("--csv", "Deprecated: --format csv."))
  end,
  run = function(args)
    output_format(args)
    local o, err, status = common(args)
    if not o then return fail(err, status) end
    local first = args.words[1]
    if first == nil then return fail("nothing to run: kreach profile [options] -- <command...> (or import, report, list)", 2) end
    if (first == "import" or first == "report" or first == "list") and args.alternate then
      return fail("--alternate applies when kreach profile runs a program (a trace says itself whether it alternated)", 2)
    end
    if first == "import" then return import(args, o) end
    if first == "report" then return report_cmd(args, o) end
    if first == "list" then return list(args) end
    -- a mistyped form (kreach profile imprt) is a usage error, not a program to run: a first word
    -- not after "--", that is no file and no command on PATH, and is within 2 edits of a form
    local near = not after_dashdash() and not runnable(first) and text.suggest(first, FORMS)
    if near then
      return fail(("'%s' is not a form of kreach profile nor a program on PATH: did you mean '%s'? (run a program as kreach profile -- <command...>)")
        :format(first, near), USAGE)
    end
    if args.trace_format ~= "auto" then return fail("--trace-format applies to import and report", 2) end
    return run_program(args, o)
  end,
}
