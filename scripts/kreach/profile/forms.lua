-- kreach.profile.forms: the forms of `kreach profile` (cmd/profile.lua) as library functions:
-- checking the command line's options (the output format, --speedups, --rules, --knobs and what
-- each form accepts), telling the form from a program to run, and doing each form's work (reading
-- or loading a trace, selecting its steps, storing it, running a program under the injection
-- library, listing the stored profiles). Each hands back what the command prints: a report and
-- where it is stored, the result of a run, or the stored profiles. A failure is raised as a user
-- error (kreach.errors) with the exit status of docs/cli.md: 1 a failure (the program failed, a
-- trace that is incomplete, no such steps or stored profile), 2 usage, 3 an input file that
-- cannot be loaded (a trace named on the command line that is missing, unreadable or not a
-- trace; a rules file) or a results database that cannot be used.
local cjson_safe = require "cjson.safe"
local classify = require "kreach.profile.classify"
local device = require "kreach.device"
local errors = require "kreach.errors"
local families = require "kreach.profile.families"
local lfs = require "lfs"
local run = require "kreach.profile.run"
local text = require "kreach.text"
local trace_mod = require "kreach.profile.trace"

local M = {}

-- the device, required before a program runs (raises "no CUDA device: ..." without one)
local require_device = device.require

local FAILED, USAGE, LOAD = errors.STATUS.failed, errors.STATUS.usage, errors.STATUS.load
local function status_of(kind) return kind and errors.STATUS[kind] or FAILED end
M.status_of = status_of

-- A message for the user carries no position in kreach's own code (kreach.errors.message; a rules
-- file's own "<file>:<line>:" is kept: it says where the user's mistake is).
local clean = errors.message

-- fail(msg[, status[, kind]]): raises the user error, a kernel's or a file's name in it written
-- with its terminal controls visible; kreach.cli prints it and, under --json, writes it as the
-- one JSON object on standard output.
local function fail(msg, status, kind)
  errors.raise(status or FAILED, text.clean(clean(msg)), kind)
end
M.fail = fail

-- ---- options shared by the forms ----

M.TRACE_FORMATS = { "auto", "kreach", "kineto", "nsys" }
M.OUTPUT_FORMATS_AND_TRACE = { "text", "json", "csv", "auto", "kreach", "kineto", "nsys" }

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

-- --speedups against the families the rules know, checked before anything is stored
local function check_speedups(o)
  local known = { unclassified = true }
  local fams = classify.new(o.rules):families()
  for _, f in ipairs(fams) do known[f] = true end
  for f in pairs(o.speedups) do
    if not known[f] then
      return nil, ("unknown family '%s' in --speedups (families: %s)"):format(f, table.concat(fams, ", ")), USAGE
    end
  end
  return true
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
    local ok, err, status = check_speedups(o)
    if not ok then return nil, err, status end
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

-- ---- which form ----

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

-- options(args) -> the form ("import", "report", "list" or "run") and the checked options {
-- speedups =, rules =, knobs =, db =, store = }; args.format, args.json, args.csv and
-- args.trace_format are set as output_format says. Raises a user error on a mistake.
function M.options(args)
  output_format(args)
  local o, err, status = common(args)
  if not o then return fail(err, status) end
  local first = args.words[1]
  if first == nil then return fail("nothing to run: kreach profile [options] -- <command...> (or import, report, list)", 2) end
  if (first == "import" or first == "report" or first == "list") and args.alternate then
    return fail("--alternate applies when kreach profile runs a program (a trace says itself whether it alternated)", 2)
  end
  if first == "import" or first == "report" or first == "list" then return first, o end
  -- a mistyped form (kreach profile imprt) is a usage error, not a program to run: a first word
  -- not after "--", that is no file and no command on PATH, and is within 2 edits of a form
  local near = not after_dashdash() and not runnable(first) and text.suggest(first, FORMS)
  if near then
    return fail(("'%s' is not a form of kreach profile nor a program on PATH: did you mean '%s'? (run a program as kreach profile -- <command...>)")
      :format(first, near), USAGE)
  end
  if args.trace_format ~= "auto" then return fail("--trace-format applies to import and report", 2) end
  return "run", o
end

-- ---- the forms ----

local function build(t, args, o)
  local rep, err = run.build(t, { rules = o.rules, speedups = o.speedups, top = args.top })
  if not rep then return fail(err, USAGE) end
  return rep
end

local function selection(args, o)
  return { steps = args.steps, skip = args.skip, workload = args.workload, knobs = o.knobs }
end

-- A trace file named on the command line: the trace; raises with status 3 when it cannot be
-- loaded, 1 when it is a trace whose program did not exit normally.
local function read_trace(path, args)
  local t, err, why = trace_mod.read(path, { format = args.trace_format, allow_partial = args.allow_partial })
  if not t then return fail(err, why == "partial" and FAILED or LOAD) end
  return t
end

-- import(args, o) -> the report of the trace args.words[2] (its selected steps), and { id =, db = }
-- where it was stored (nil with --no-store).
function M.import(args, o)
  local path = args.words[2]
  if not path or args.words[3] then return fail("usage: kreach profile import <trace> [options]", USAGE) end
  local t = read_trace(path, args)
  local sel, err = run.select(t, selection(args, o))
  if not sel then return fail(err) end
  -- the report first: a trace whose report cannot be made (a rule that fails on its kernels'
  -- names) is not stored
  local rep = build(sel, args, o)
  local stored
  if o.store then
    local id, serr, kind = run.store(sel, o.db)
    if not id then return fail(serr, status_of(kind), kind) end
    stored = { id = id, db = o.db }
  end
  return rep, stored
end

-- report(args, o) -> the report of a stored profile (args.words[2] an id that is no file) or of a
-- trace file, and { id =, db = } when it was read from a database.
function M.report(args, o)
  local what = args.words[2]
  if not what or args.words[3] then return fail("usage: kreach profile report <id|file> [options]", USAGE) end
  local t
  if what:match("^%d+$") and not lfs.attributes(what) then
    local err, kind
    t, err, kind = run.load(math.tointeger(tonumber(what)), o.db)
    if not t then return fail(err, status_of(kind), kind) end
  else
    t = read_trace(what, args)
  end
  local sel, serr = run.select(t, selection(args, o))
  if not sel then return fail(serr) end
  local rep = build(sel, args, o)
  return rep, sel.meta and sel.meta.stored
end

-- The options of run.profile for running args.words: checked before the program runs (KREACH_TRACE_KINDS,
-- the injection library, an -o file that exists, the device).
local function program_options(args, o)
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
  require_device("kreach profile")
  local opts = selection(args, o)
  opts.lib, opts.output, opts.kinds, opts.allow_partial = lib, args.output, spec, args.allow_partial
  opts.alternate = args.alternate and args.steps or nil
  -- the program's standard output goes to standard error when ours carries JSON or CSV
  opts.stdout = (args.json or args.csv) and io.stderr or io.stdout
  -- and its standard error is ours, written as it comes (progress bars show live)
  opts.pass_stderr = true
  opts.db = o.store and o.db or nil
  opts.rules, opts.speedups, opts.top = o.rules, o.speedups, args.top
  return opts
end

-- program(args, o) -> run.profile's result (report, stored, ok, exit...) or nil, then the message
-- of a failure and its kind, then the warnings of the run (a list, printed by the caller before
-- it raises the failure: M.fail(err, M.status_of(kind), kind)).
function M.program(args, o)
  local opts = program_options(args, o)
  io.stdout:flush()
  local res, err, partial = run.profile(args.words, opts)
  local ran = res or partial
  return res, err, partial and partial.error_kind, ran and ran.warnings or {}
end

-- list(args) -> the stored profiles of the results database (run.list's rows). A database that
-- cannot be used is status 3, as for report.
function M.list(args)
  if args.words[2] then return fail("usage: kreach profile list [--db PATH] [--json]", USAGE) end
  local rows, err, kind = run.list(args.db)
  if not rows then return fail(err, status_of(kind), kind) end
  if args.csv then
    return fail("--format csv applies to a report; kreach profile list prints text or --json", USAGE)
  end
  return rows
end

return M
