-- kreach profile: the share of a CUDA program's GPU time that custom kernels could replace
-- (docs/profiling.md).
--   kreach profile [options] -- <command...>      run it under the injection library, report
--   kreach profile import <trace> [options]        read a trace (kreach, PyTorch profiler, nsys)
--   kreach profile report <id|file> [options]      report a stored profile or a trace file
-- A recorded or imported trace (its selected steps) is stored in the results database (--db,
-- $KREACH_DB, else results.db) unless --no-store.
local kreach = require "kreach"
local trace_mod = require "kreach.profile.trace"
local report = require "kreach.profile.report"

local function fail(msg, status)
  io.stderr:write("kreach profile: ", msg, "\n")
  return status or 1
end

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function file_exists(path)
  local lfs = require "lfs"
  return lfs.attributes(path, "mode") == "file"
end

-- The injection library: $KREACH_INJECT_LIB, else libkreach_inject.so beside the binary (a
-- build tree), else in lib/kreach beside its bin/ (an installed kreach).
local function inject_lib()
  local lib = os.getenv("KREACH_INJECT_LIB")
  if lib and lib ~= "" then return lib end
  local dir = kreach.executable():match("^(.*)/[^/]*$") or "."
  local beside = dir .. "/libkreach_inject.so"
  local installed = dir .. "/../lib/kreach/libkreach_inject.so"
  if not file_exists(beside) and file_exists(installed) then return installed end
  return beside
end

-- ---- the results store (kreach.store): one call each way ----

local function store_open(path)
  local ok, store = pcall(require, "kreach.store")
  if not ok then return nil, "the results store (kreach.store) is not available in this kreach" end
  local okc, db, err = pcall(store.open, path)
  if not okc then return nil, tostring(db) end
  if not db then return nil, tostring(err) end
  return db
end

local function store_call(path, method, arg)
  local db, err = store_open(path)
  if not db then return nil, err end
  if type(db[method]) ~= "function" then return nil, ("the results store has no %s"):format(method) end
  local ok, res, rerr = pcall(db[method], db, arg)
  if type(db.close) == "function" then pcall(db.close, db) end
  if not ok then return nil, tostring(res) end
  if res == nil then return nil, tostring(rerr) end
  return res
end

local function save(trace, path) return store_call(path, "save_profile", trace) end
-- A reader: a read-only connection that leaves no -wal or -shm beside the database
-- (kreach.store.read), so that reading someone else's database, or one in a read-only
-- directory, works and changes nothing.
local function load(id, path)
  local ok, opened, t, err = pcall(require("kreach.store").read, path, function(db) return db:load_profile(id) end)
  if not ok then t, err = nil, tostring(opened)
  elseif not opened then err = tostring(t); t = nil
  elseif t == nil then err = "nil" end
  if not t and err == "nil" then err = ("no profile %d in %s"):format(id, path) end
  if t then t.meta = t.meta or {}; t.meta.stored = { id = id, db = path } end
  return t, err
end

-- ---- options shared by the three forms ----

local function common(args)
  local o = {}
  if args.speedups then
    local s, err = require("kreach.profile.families").parse(args.speedups)
    if not s then return nil, err, 2 end
    o.speedups = s
  end
  if args.rules then
    local rules, err = require("kreach.profile.classify").load(args.rules)
    if not rules then return nil, err, 3 end
    o.rules = rules
  end
  if o.speedups then
    -- checked before anything is stored
    local known = { unclassified = true }
    local fams = require("kreach.profile.classify").new(o.rules):families()
    for _, f in ipairs(fams) do known[f] = true end
    for f in pairs(o.speedups) do
      if not known[f] then
        return nil, ("unknown family '%s' in --speedups (families: %s)"):format(f, table.concat(fams, ", ")), 2
      end
    end
  end
  if args.knobs then
    local k = require("cjson.safe").decode(args.knobs)
    if type(k) ~= "table" or (next(k) ~= nil and k[1] ~= nil) then
      return nil, "--knobs takes a JSON object, such as '{\"batch\": 32}'", 2
    end
    o.knobs = k
  end
  if args.skip and not args.steps then return nil, "--skip needs --steps", 2 end
  if args.alternate and not args.steps then
    return nil, "--alternate needs --steps: it traces every other range of that name", 2
  end
  -- --skip and --top are checked by the parser (cli.nonnegative_integer, cli.positive_integer)
  o.db = args.db
  o.store = not args.no_store
  return o
end

local function select_steps(t, args)
  if args.steps then return trace_mod.select(t, { range = args.steps, skip = args.skip or 0 }) end
  if t.window then return t end
  return trace_mod.select(t)
end

-- Builds and prints the report; `stored` is { id =, db = } when the trace was stored.
local function emit(t, args, o, stored)
  local ok, rep = pcall(report.build, t, { rules = o.rules, speedups = o.speedups, top = args.top })
  if not ok then return fail(tostring(rep):gsub("^[^:]*:%d+: ", ""), 2) end
  if stored then rep.stored = stored end
  if args.json then
    io.write(report.json(rep), "\n")
  elseif args.csv then
    io.write(report.csv(rep))
  else
    io.write(report.text(rep))
    if stored then io.write(("stored: profile %s in %s\n"):format(tostring(stored.id), stored.db)) end
  end
  return 0
end

-- The trace with --knobs and --workload applied, its steps selected.
local function annotate(t, args, o)
  if o.knobs then
    t.knobs = t.knobs or {}
    for k, v in pairs(o.knobs) do t.knobs[k] = v end
  end
  if args.workload then t.workload = args.workload end
  return select_steps(t, args)
end

local function finish(t, args, o)
  local sel, err = annotate(t, args, o)
  if not sel then return nil, err end
  local stored
  if o.store then
    local id, serr = save(sel, o.db)
    if not id then return nil, ("cannot store the profile in %s: %s"):format(o.db, serr) end
    stored = { id = id, db = o.db }
  end
  return sel, stored
end

-- ---- the three forms ----

local function import(args, o)
  local path = args.words[2]
  if not path or args.words[3] then return fail("usage: kreach profile import <trace> [options]", 2) end
  local t, err = trace_mod.read(path, { format = args.format, allow_partial = args.allow_partial })
  if not t then return fail(err) end
  local sel, stored = finish(t, args, o)
  if not sel then return fail(stored) end
  return emit(sel, args, o, stored)
end

local function report_cmd(args, o)
  local what = args.words[2]
  if not what or args.words[3] then return fail("usage: kreach profile report <id|file> [options]", 2) end
  local t, err
  if file_exists(what) then
    t, err = trace_mod.read(what, { format = args.format, allow_partial = args.allow_partial })
  elseif what:match("^%d+$") then
    t, err = load(math.tointeger(tonumber(what)), o.db)
  else
    return fail(("'%s' is neither a trace file nor a profile id"):format(what), 2)
  end
  if not t then return fail(err) end
  local sel, serr = annotate(t, args, o)
  if not sel then return fail(serr) end
  return emit(sel, args, o, sel.meta and sel.meta.stored)
end

-- KREACH_TRACE_KINDS (what the library traces; docs/profiling-inject.md), checked here so that a
-- mistake stops before the program runs. Returns the set of kinds, or nil and why.
local function trace_kinds(spec)
  local known, all = {}, {}
  for _, k in ipairs(trace_mod.TRACE_KINDS) do known[k] = true; all[k] = true end
  if spec == nil or spec == "" then return all end
  local set = {}
  for item in (spec .. ","):gmatch("([^,]*),") do
    local name = item:match("^%s*(.-)%s*$")
    if name == "all" then
      for k in pairs(known) do set[k] = true end
    elseif known[name] then
      set[name] = true
    else
      return nil, ("KREACH_TRACE_KINDS=%s: %s (kinds: %s, all)"):format(spec,
        name == "" and "an empty kind name" or ("unknown kind '%s'"):format(name), table.concat(trace_mod.TRACE_KINDS, ", "))
    end
  end
  return set
end

local function run_program(args, o)
  local argv = args.words
  local kinds, kerr = trace_kinds(os.getenv("KREACH_TRACE_KINDS"))
  if not kinds then return fail(kerr, 2) end
  if args.steps and not kinds.marker then
    return fail(("--steps needs the program's NVTX ranges, and KREACH_TRACE_KINDS=%s leaves out 'marker'"):format(
      os.getenv("KREACH_TRACE_KINDS")), 2)
  end
  if args.alternate and not (kinds.kernel or kinds.memcpy or kinds.memset) then
    return fail(("--alternate has nothing to alternate: KREACH_TRACE_KINDS=%s traces only 'marker'"):format(
      os.getenv("KREACH_TRACE_KINDS")), 2)
  end
  local lib = inject_lib()
  if not file_exists(lib) then
    return fail(("the injection library is missing: %s (it is built next to the kreach binary; KREACH_INJECT_LIB names another)"):format(lib))
  end
  -- the library never overwrites a trace: it writes <path>.<pid> beside an existing one
  if args.output and require("lfs").attributes(args.output) then
    return fail(("%s exists (a trace is never overwritten): remove it or name another with -o"):format(args.output))
  end
  kreach.require_device()
  local lfs = require "lfs"
  local dir = os.tmpname()
  os.remove(dir)
  if not lfs.mkdir(dir) then return fail("cannot create a temporary directory " .. dir) end
  local trace_path = args.output or (dir .. "/trace.jsonl")
  local knobs_path = dir .. "/knobs.json"
  local env = {
    "CUDA_INJECTION64_PATH=" .. shell_quote(lib),
    "NVTX_INJECTION64_PATH=" .. shell_quote(lib),
    "KREACH_TRACE_FILE=" .. shell_quote(trace_path),
    "KREACH_PROFILE_KNOBS=" .. shell_quote(knobs_path),
  }
  -- the library counts pushes of exactly this name (docs/profiling-inject.md)
  if args.alternate then env[#env + 1] = "KREACH_TRACE_ALTERNATE=" .. shell_quote(args.steps) end
  local words = {}
  for i, a in ipairs(argv) do words[i] = shell_quote(a) end
  -- the program's standard output goes to standard error when ours carries JSON or CSV
  local cmd = table.concat(env, " ") .. " " .. table.concat(words, " ") .. ((args.json or args.csv) and " 1>&2" or "")
  io.stdout:flush()
  local t0 = kreach.now()
  local _, how, code = os.execute(cmd)
  local run_s = kreach.now() - t0
  local exit = { how = how == "signal" and "signal" or "exit", status = code }
  local failed = not (exit.how == "exit" and exit.status == 0)
  -- other processes of the program that used CUDA wrote <trace>.<pid> files
  local others = {}
  local tdir, tbase = trace_path:match("^(.*)/([^/]*)$")
  if not tdir then tdir, tbase = ".", trace_path end
  for f in lfs.dir(tdir ~= "" and tdir or "/") do
    if f:sub(1, #tbase + 1) == tbase .. "." and f:sub(#tbase + 2):match("^%d+$") then others[#others + 1] = tdir .. "/" .. f end
  end
  table.sort(others)
  local function cleanup()
    os.remove(knobs_path)
    if not args.output then
      os.remove(trace_path)
      for _, f in ipairs(others) do os.remove(f) end
    end
    os.remove(dir)
  end
  if #others > 0 then
    io.stderr:write(("kreach profile: warning: %d other process%s of the program traced CUDA too; only the first is analysed%s\n"):format(
      #others, #others == 1 and "" or "es", args.output and (": " .. table.concat(others, ", ")) or " (keep them with -o)"))
  end
  if not file_exists(trace_path) then
    cleanup()
    local why = failed and (" (it %s)"):format(exit.how == "signal" and ("was killed by signal " .. tostring(exit.status))
      or ("exited with status " .. tostring(exit.status))) or ""
    return fail(("the program wrote no trace to %s%s: is it a CUDA program, and did it exit normally?"):format(trace_path, why))
  end
  local t, err = trace_mod.read_kreach(trace_path, { allow_partial = args.allow_partial })
  if not t then
    cleanup()
    if failed then err = err .. (" (the program failed: %s %s)"):format(exit.how == "signal" and "signal" or "exit status", tostring(exit.status)) end
    return fail(err)
  end
  t.command = argv
  t.meta.exit, t.meta.run_s = exit, run_s
  if args.output then t.meta.path = args.output else t.meta.path = nil end
  local kf = io.open(knobs_path, "rb")
  if kf then
    local text = kf:read("a")
    kf:close()
    local k = require("cjson.safe").decode(text)
    if type(k) == "table" and (next(k) == nil or k[1] == nil) then
      t.knobs = k
    elseif text:find("%S") then
      io.stderr:write("kreach profile: warning: the program's knobs file is not a JSON object; ignored\n")
    end
  end
  local sel, stored = finish(t, args, o)
  cleanup()
  if not sel then return fail(stored) end
  local status = emit(sel, args, o, stored)
  if status ~= 0 then return status end
  if failed then
    io.stderr:write(("kreach profile: the program %s\n"):format(exit.how == "signal" and ("was killed by signal " .. tostring(exit.status))
      or ("exited with status " .. tostring(exit.status))))
    return 1
  end
  return 0
end

return {
  summary = "Measure the share of a program's GPU time custom kernels could replace (needs a GPU to run one).",
  parser = function(p)
    p:usage([==[usage: kreach profile [options] -- <command...>
       kreach profile import <trace> [options]
       kreach profile report <id|file> [options]]==])
    p:epilog([[Runs the command with the CUPTI injection library, or reads a trace (kreach JSON Lines, a
PyTorch profiler Chrome trace, an Nsight Systems SQLite export), classifies every kernel into a
family and reports the addressable fraction of GPU and wall time (docs/profiling.md).]])
    p:argument("words", "The command to run after --, or import <trace>, or report <id|file>."):args("*")
    p:option("-o --output", "Keep the recorded trace (JSON Lines) in this file.")
    require("kreach.cli").db_option(p)
    p:flag("--no-store", "Do not store the profile.")
    p:option("--steps", "Measure only inside the NVTX ranges of this name (ProfilerStep matches ProfilerStep#N).")
    p:option("--skip", "Skip the first N of those ranges (warm-up).", nil):convert(require("kreach.cli").nonnegative_integer)
    p:flag("--alternate", "Trace kernels and memory operations in every other --steps range only (the 1st, 3rd...): the run pays half the tracing, and the report measures what tracing cost its steps.")
    p:option("--workload", "A name for the workload, stored with the profile.")
    p:option("--knobs", "The workload's knobs as a JSON object, stored with the profile.")
    p:option("--format", "The trace's format.", "auto"):choices({ "auto", "kreach", "kineto", "nsys" })
    p:option("--speedups", "Project end-to-end gains for these kernel speedups: family=x[,family=x...].")
    p:option("--rules", "A Lua file of classification rules, tried before the built-in ones.")
    p:option("--top", "How many kernels the table lists.", nil):convert(require("kreach.cli").positive_integer)
    p:flag("--allow-partial", "Analyse a trace without its footer (the program was killed).")
    p:mutex(p:flag("--json", "Print one JSON object."), p:flag("--csv", "Print CSV."))
  end,
  run = function(args)
    local o, err, status = common(args)
    if not o then return fail(err, status) end
    local first = args.words[1]
    if first == nil then return fail("nothing to run: kreach profile [options] -- <command...> (or import, report)", 2) end
    if (first == "import" or first == "report") and args.alternate then
      return fail("--alternate applies when kreach profile runs a program (a trace says itself whether it alternated)", 2)
    end
    if first == "import" then return import(args, o) end
    if first == "report" then return report_cmd(args, o) end
    if args.format ~= "auto" then return fail("--format applies to import and report", 2) end
    return run_program(args, o)
  end,
}
