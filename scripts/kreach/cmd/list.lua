-- kreach list [suite]: the suites, or the problems of one suite with their sizes. Suite and
-- problem files are trusted code, but each is loaded in a loader process with a time limit
-- (kreach.problem.catalog): one that hangs or fails is reported with why, and the listing goes on
-- (exit status 3 at the end when one did not load). The listing and its tables are
-- kreach.problem.listing's.
local catalog = require "kreach.problem.catalog"
local cli = require "kreach.cli"
local json = require "kreach.json" -- sorted keys: the same listing, the same text
local listing = require "kreach.problem.listing"
local problem = require "kreach.problem"

return {
  summary = "List the problem suites, or the problems of a suite.",
  parser = function(p)
    p:argument("suite", "A suite (kreach list shows them)."):args("?")
    p:flag("--json", "Print JSON.")
    p:option("--load-timeout --timeout", "Seconds each suite or problem file may take to load (--timeout is the old spelling).",
      tostring(catalog.DEFAULT_TIMEOUT_S)):convert(cli.positive_seconds):target("timeout"):argname("<seconds>")
  end,
  run = function(args)
    local timeout = args.timeout -- checked by the parser (cli.positive_seconds)
    if not args.suite then
      local names = problem.suites()
      if #names == 0 then
        -- nothing found is said, not listed as an empty success
        local roots, looked = problem.roots()
        io.stderr:write(("kreach list: no suites found (looked in: %s); problems of your own go in a directory named by KREACH_PROBLEMS\n"):format(
          table.concat(#roots > 0 and roots or looked, ", ")))
        if args.json then io.write('{"errors":[],"suites":[]}\n') end
        return 1
      end
      local l = listing.suites(names, timeout)
      if args.json then io.write(json.encode({ suites = l.suites, errors = l.errors }), "\n")
      else io.write(listing.suites_text(l)) end
      return #l.errors > 0 and 3 or 0
    end
    local l = listing.suite(args.suite, timeout)
    if args.json then
      io.write(json.encode({ suite = l.suite.name, problems = l.rows, pending = l.suite.pending, errors = l.errors }), "\n")
      return #l.errors > 0 and 3 or 0
    end
    io.write(listing.problems_text(l))
    if #l.errors > 0 then
      io.stderr:write(("kreach list: %d problem%s of %s did not load\n"):format(#l.errors, #l.errors == 1 and "" or "s", l.suite.name))
      return 3
    end
    return 0
  end,
}
