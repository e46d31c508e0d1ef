-- kreach results export|list|runs: reads a results database (docs/results.md). A database that
-- does not open (missing, not ours, corrupt, another schema version) is status 3.
local function run_id(s)
  local n = math.tointeger(tonumber(s))
  if not n or n < 1 then return nil, "a run id is a positive integer" end
  return n
end

return {
  summary = "Export or list what a results database holds.",
  parser = function(p)
    p:command_target("command")
    p:require_command(true)
    local function common(c)
      require("kreach.cli").db_option(c)
      c:option("--run", "Only this run's evaluations."):convert(run_id)
    end
    local e = p:command("export", "Write the evaluations as JSON lines, CSV or KernelBench's eval_results.json.")
    common(e)
    e:option("--format", "jsonl, csv or kernelbench."):choices(require("kreach.results").FORMATS):args(1)
      :count(1)
    e:option("-o --output", "Write to this file (default: standard output).")
    local l = p:command("list", "A table of the evaluations.")
    common(l)
    l:flag("--json", "Print one JSON object: { evaluations = [...] }.")
    local r = p:command("runs", "A table of the runs.")
    require("kreach.cli").db_option(r)
    r:flag("--json", "Print one JSON object: { runs = [...] }.")
  end,
  run = function(args)
    local results = require "kreach.results"
    local store = require "kreach.store"
    local output = require "kreach.output"
    -- the output is checked before the database opens: naming the database (or its -wal or
    -- -shm) as the output is a usage error, and nothing is written
    local out
    if args.command == "export" then
      local oerr, ostatus
      out, oerr, ostatus = output.open(args.output, { protect = output.database_files(args.db) })
      if not out then
        io.stderr:write("kreach results: ", oerr, "\n")
        return ostatus
      end
    end
    -- everything is read first, through a read-only connection that leaves no file beside the
    -- database (store.read reads again when a writer changed it meanwhile); then written
    local path = args.db
    local function store_error(e)
      return type(e) == "table" or (type(e) == "string" and e:sub(1, #path + 1) == path .. ":")
    end
    local ok, opened, data = xpcall(store.read, function(e)
      return store_error(e) and e or debug.traceback(tostring(e), 2)
    end, path, function(db)
      if args.command == "export" then return results.fetch(db, { run_id = args.run })
      elseif args.command == "list" then return db:evaluations{ run_id = args.run } end
      local counts = {}
      for _, r in ipairs(db.sql:query("SELECT run_id, count(*) AS n FROM evaluations GROUP BY run_id")) do
        counts[r.run_id] = r.n
      end
      return { runs = db:runs(), counts = counts }
    end)
    -- a database that does not open, or a failing statement on one that did (it went bad
    -- under us), is status 3; anything else is a bug, with its traceback
    if not ok or not opened then
      if out then out:abort() end -- the old file, if any, stays as it was
      local msg = ok and data or opened
      if not ok and not store_error(msg) then error(msg, 0) end
      io.stderr:write("kreach results: ", tostring(msg), "\n")
      return 3
    end
    if args.command == "export" then
      -- a write that fails raises { msg =, status = 1 } (kreach.output)
      local wok, werr = pcall(function()
        results.write(args.format, data, function(...) out:write(...) end)
        local cok, cerr = out:commit()
        if not cok then error(output.write_error(cerr), 0) end
      end)
      if not wok then
        out:abort()
        if type(werr) ~= "table" then error(werr, 0) end
        io.stderr:write("kreach results: ", tostring(werr.msg), "\n")
        return werr.status
      end
    elseif args.command == "list" then
      if args.json then results.list_json(data, io.write) else results.list(data, io.write) end
    else
      if args.json then results.runs_json(data.runs, data.counts, io.write)
      else results.runs(data.runs, data.counts, io.write) end
    end
    return 0
  end,
}
