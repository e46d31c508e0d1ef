-- kreach list-loader suite|problem <items...>: the loader process of kreach.problem.catalog, started by
-- `kreach list`, never by hand: it loads each suite or problem file and reports it on one line,
-- so that the listing can give every file a time limit without stopping at one that hangs.
local util = require "kreach.core.util"
local catalog = require "kreach.problem.catalog"

return {
  summary = "(internal) Loads suites or problems for kreach list, one line each.",
  hidden = true,
  parser = function(p)
    p:argument("kind", "What the items are."):choices({ "suite", "problem" })
    p:argument("items", "Suite names or problem files."):args("*")
  end,
  run = function(args)
    -- the loader ends with the listing that started it
    util.die_with_parent()
    catalog.serve(args.kind, args.items)
    return 0
  end,
}
