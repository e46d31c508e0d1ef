-- kreach results export|list|runs: reads a results database (docs/results.md). A database that
-- does not open (missing, not ours, corrupt, another schema version) is status 3.
local function run_id(s)
  local n = math.tointeger(tonumber(s))
  if not n or n < 1 then return nil, "a run id is a positive integer" end
  return n
end

local function open(path)
  local db, err = require("kreach.store").open(path, { readonly = true })
  if not db then io.stderr:write("kreach results: ", err, "\n") end
  return db
end

return {
  summary = "Export or list what a results database holds.",
  parser = function(p)
    p:command_target("command")
    p:require_command(true)
    local function common(c)
      c:option("--db", "The results database.", "results.db")
      c:option("--run", "Only this run's evaluations."):convert(run_id)
    end
    local e = p:command("export", "Write the evaluations as JSON lines, CSV or KernelBench's eval_results.json.")
    common(e)
    e:option("--format", "jsonl, csv or kernelbench."):choices(require("kreach.results").FORMATS):args(1)
      :count(1)
    e:option("-o --output", "Write to this file (default: standard output).")
    common(p:command("list", "A table of the evaluations."))
    p:command("runs", "A table of the runs."):option("--db", "The results database.", "results.db")
  end,
  run = function(args)
    local results = require "kreach.results"
    local db = open(args.db)
    if not db then return 3 end
    local store_error = function(e)
      return type(e) == "table" or (type(e) == "string" and e:sub(1, #db.path + 1) == db.path .. ":")
    end
    local ok, err = xpcall(function()
      if args.command == "export" then
        local out, write = io.stdout, nil
        if args.output then
          local f, ferr = io.open(args.output, "w")
          if not f then error({ msg = ferr, status = 1 }) end
          out = f
        end
        write = function(...) out:write(...) end
        results.export(db, args.format, { run_id = args.run }, write)
        if out ~= io.stdout then
          local cok, cerr = out:close()
          if not cok then error({ msg = cerr, status = 1 }) end
        end
      elseif args.command == "list" then
        results.list(db:evaluations{ run_id = args.run }, io.write)
      else
        local counts = {}
        for _, r in ipairs(db.sql:query("SELECT run_id, count(*) AS n FROM evaluations GROUP BY run_id")) do
          counts[r.run_id] = r.n
        end
        results.runs(db:runs(), counts, io.write)
      end
    end, function(e) return store_error(e) and e or debug.traceback(tostring(e), 2) end)
    db:close()
    if not ok then
      if type(err) == "table" then
        io.stderr:write("kreach results: ", tostring(err.msg), "\n")
        return err.status
      end
      -- a failing statement on a database that opened (it went bad under us) is status 3;
      -- anything else is a bug, with its traceback
      if not store_error(err) then error(err, 0) end
      io.stderr:write("kreach results: ", err, "\n")
      return 3
    end
    return 0
  end,
}
