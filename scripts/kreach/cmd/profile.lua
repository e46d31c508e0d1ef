-- kreach profile: the share of a CUDA program's GPU time that custom kernels could replace
-- (docs/profiling.md).
--   kreach profile [options] -- <command...>      run it under the injection library, report
--   kreach profile import <trace> [options]        read a trace (kreach, PyTorch profiler, nsys)
--   kreach profile report <id|file> [options]      report a stored profile or a trace file
--   kreach profile list [--db PATH] [--json]       the stored profiles
-- A recorded or imported trace (its selected steps) is stored in the results database (--db,
-- $KREACH_DB, else results.db) unless --no-store. Checking the options and doing each form's work
-- are kreach.profile.forms' (running the program, selecting the steps, storing and building the
-- report, kreach.profile.run's); this file parses, calls and prints.
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local forms = require "kreach.profile.forms"
local json = require "kreach.json"
local report = require "kreach.profile.report"
local run = require "kreach.profile.run"
local text = require "kreach.text"

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

-- kreach profile list: the stored profiles of the results database, one line each (or one
-- JSON object: { "profiles": [...] }).
local function print_list(args, rows)
  if args.json then
    io.write(json.encode({ db = args.db, profiles = json.array(rows) }), "\n")
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

-- kreach profile -- <command...>: the report, then (on standard error) the program's failure
local function print_run(args, o)
  local res, err, kind, warnings = forms.program(args, o)
  for _, w in ipairs(warnings) do io.stderr:write("kreach profile: warning: ", text.clean(w), "\n") end
  if not res then return forms.fail(err, forms.status_of(kind), kind) end
  emit(res.report, args, res.stored)
  -- the report is the output (under --json its one object): the program's failure is said on
  -- standard error only
  if not res.ok then
    io.stderr:write("kreach profile: ", text.clean("the program " .. run.exit_text(res.exit)), "\n")
    return errors.STATUS.failed
  end
  return 0
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
      :choices(forms.OUTPUT_FORMATS_AND_TRACE)
    p:option("--trace-format", "(import, report) The trace's format.", "auto"):choices(forms.TRACE_FORMATS)
    p:option("--speedups", "Project end-to-end gains for these kernel speedups: family=x[,family=x...].")
    p:option("--rules", "A Lua file of classification rules, tried before the built-in ones.")
    p:option("--top", "How many kernels the table lists.", nil):convert(cli.positive_integer)
    p:flag("--allow-partial", "Analyse a trace without its footer (the program was killed).")
    p:mutex(p:flag("--json", "Print one JSON object (as --format json)."),
      p:flag("--csv", "Deprecated: --format csv."))
  end,
  run = function(args)
    local form, o = forms.options(args)
    if form == "import" then
      local rep, stored = forms.import(args, o)
      return emit(rep, args, stored)
    elseif form == "report" then
      local rep, stored = forms.report(args, o)
      return emit(rep, args, stored, true)
    elseif form == "list" then
      return print_list(args, forms.list(args))
    end
    return print_run(args, o)
  end,
}
