-- kreach results export|list|runs|generations|summary|import|merge: reads a results database (and
-- import and merge write one) (docs/results.md). A database that
-- does not open (missing, not ours, corrupt, another schema version) is status 3.
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local output = require "kreach.atomic"
local import = require "kreach.results.import"
local merge = require "kreach.results.merge"
local results = require "kreach.results.report"
local store = require "kreach.results.store"
local summary = require "kreach.results.summary"
local catalog = require "kreach.problem.catalog"

local function run_id(s)
  local n = math.tointeger(tonumber(s))
  if not n or n < 1 then return nil, "a run id is a positive integer" end
  return n
end

return {
  summary = "Export or list what a results database holds (evaluations, runs, generations).",
  parser = function(p)
    p:command_target("command")
    p:require_command(true)
    local function common(c)
      cli.db_option(c)
      c:option("--run", "Only this run's evaluations."):convert(run_id)
    end
    local e = p:command("export", "Write the evaluations as JSON lines, CSV or KernelBench's eval_results.json.")
    common(e)
    -- kernelbench by default, as kreach export's --format: a command line that worked (it had to
    -- name the format) means the same
    e:option("--format", "jsonl, csv or kernelbench (the default, as kreach export's).", "kernelbench")
      :choices(results.FORMATS):args(1)
    e:option("-o --output", "The file to write (default: standard output)."):argname("<file>")
    local l = p:command("list", "A table of the evaluations.")
    common(l)
    l:flag("--json", "Print one JSON object: { evaluations = [...] }.")
    local r = p:command("runs", "A table of the runs.")
    cli.db_option(r)
    r:flag("--json", "Print one JSON object: { runs = [...] }.")
    local g = p:command("generations", "A table of the requests kreach generate made and their outcomes.")
    cli.db_option(g)
    g:flag("--json", "Print one JSON object: { generations = [...] }.")
    -- summary: the figures of the database by group (docs/results.md, "Summaries")
    local s = p:command("summary", "Verdicts, pass@k, verified speedups, fast_p and KernelBench's disagreements, by group.")
    cli.db_option(s)
    s:option("--by", ("Group by these keys, comma-separated, in this order: %s (default: one group of everything)."):format(
      table.concat(summary.BY, ", ")), ""):show_default(false)
    s:option("--against", ("The reference of the speedups and fast_p: %s (default: baseline)."):format(
      table.concat(summary.AGAINST, ", ")), "baseline"):show_default(false)
    s:mutex(s:flag("--json", "Print one JSON object."), s:flag("--csv", "Print CSV, one line per group."),
      s:flag("--md", "Print Markdown tables."))
    -- import and merge (issue 36; docs/results.md, "Importing other harnesses' results", "Merging shards")
    local im = p:command("import", "Read other harnesses' results (KernelBench's eval_results.json) or kreach's JSON lines into a database.")
    im:argument("files", "The files to import."):args("+")
    cli.db_option(im)
    im:option("--format", "kernelbench or jsonl (default: from the file).")
      :choices(import.FORMATS):args(1)
    im:option("--model", "The model the imported candidates came from (stored on each row)."):argname("<name>")
    im:option("--suite", "The suite KernelBench's problem ids are of.", import.DEFAULT_SUITE)
    im:option("--baseline-times", "KernelBench's baseline timing JSON: PyTorch's times, for the speedups."):argname("<file>")
    local mg = p:command("merge", "Combine results databases (shards of one study) into a new one.")
    mg:argument("inputs", "The databases to merge."):args("+")
    mg:option("-o --output", "The new database to write (must not exist)."):argname("<db>"):count(1)
  end,
  run = function(args)
    if args.command == "summary" then
      local by, against = summary.parse_by(args.by), summary.parse_against(args.against)
      local ok, opened, data = pcall(store.read, args.db, summary.read)
      if not ok then error(opened, 0) end
      if not opened then errors.database(data) end
      local categories -- each problem file's category, loaded in kreach's loader
      for _, k in ipairs(by) do
        if k == "category" then
          categories = summary.categories(data.rows, function(paths) return catalog.load("problem", paths) end)
        end
      end
      local s = summary.compute(data, { by = by, against = against, categories = categories })
      summary.write(s, (args.json and "json") or (args.csv and "csv") or (args.md and "md") or "text", io.write, args.db)
      return 0
    elseif args.command == "import" then
      -- every file is read and checked before the database is opened
      local opts = { format = args.format, model = args.model, suite = args.suite, baseline_times = args.baseline_times }
      local prepared = import.prepare(args.files, opts)
      local db, err = store.open(args.db)
      if not db then errors.database(err) end
      local ok, res = pcall(import.import, db, prepared, opts)
      db:close()
      if not ok then error(res, 0) end
      import.report(res, args.db, io.write)
      return 0
    elseif args.command == "merge" then
      local res = merge.merge(args.inputs, args.output)
      merge.report(res, args.output, io.write)
      return 0
    end
    -- the output is checked before the database opens: naming the database (or its -wal or
    -- -shm) as the output is a usage error, and nothing is written
    local out
    if args.command == "export" then
      local oerr, ostatus
      out, oerr, ostatus = output.open(args.output, { protect = output.database_files(args.db) })
      if not out then errors.raise(ostatus, oerr) end
    end
    -- everything is read first, through a read-only connection that leaves no file beside the
    -- database (store.read reads again when a writer changed it meanwhile); then written. A
    -- database that does not open, or a failing statement on one that did (it went bad under
    -- us), is a database error (status 3); the old output file, if any, stays as it was.
    -- a column that cannot be read (JSON text that does not decode, edited by hand) leaves that
    -- field out of its row; the rest is read and written, each such column is named on
    -- standard error, and the status is 1 (docs/results.md, "kreach results")
    local damaged
    local ok, opened, data = pcall(store.read, args.db, function(db)
      db.warn = false
      damaged = db.damaged
      -- a run id that names no run is a usage error, as a problem name that names nothing is
      if args.run and not db:get_run(args.run) then
        errors.usage("--run %d: there is no run %d in %s (kreach results runs lists them)", args.run, args.run, args.db)
      end
      return results.read(db, args.command, { run_id = args.run })
    end)
    if not ok or not opened then
      if out then out:abort() end
      if not ok then error(opened, 0) end -- a database error, or a bug (with its traceback)
      errors.database(data)
    end
    for _, d in ipairs(damaged or {}) do io.stderr:write("kreach results: warning: ", d.message, "\n") end
    if args.command == "export" then
      local wok, werr = pcall(results.write, args.format, data, function(...) out:write(...) end)
      if not wok then
        out:abort()
        error(werr, 0) -- kreach.atomic's write error is a kreach.errors error (status 1)
      end
      -- a commit that fails (a full disk when the file is closed) has closed it: no abort
      local cok, cerr = out:commit()
      if not cok then errors.file(args.output, tostring(cerr), errors.STATUS.failed) end
    elseif args.command == "list" then
      if args.json then results.list_json(data, io.write) else results.list(data, io.write) end
    elseif args.command == "generations" then
      if args.json then results.generations_json(data, args.db, io.write)
      else results.generations(data, args.db, io.write) end
    else
      if args.json then results.runs_json(data.runs, data.counts, io.write)
      else results.runs(data.runs, data.counts, io.write) end
    end
    if damaged and #damaged > 0 then
      io.stderr:write(("kreach results: %d column%s of %s could not be read and %s left out (see above)\n"):format(
        #damaged, #damaged == 1 and "" or "s", args.db, #damaged == 1 and "was" or "were"))
      return 1
    end
    return 0
  end,
}
