-- kreach report [--db DB]... [--data DIR] [--profiles FILE]... -o FILE [--format html|md]: one
-- page of figures and a per-problem table from stored data (docs/report.md): a self-contained
-- HTML file, or Markdown with an SVG per figure beside it. No GPU; gnuplot draws the figures.
local cli = require "kreach.cli"
local catalog = require "kreach.problem.catalog"
local report = require "kreach.report"

return {
  summary = "Write a report (HTML or Markdown with SVG figures) from results databases, data files and profiles.",
  parser = function(p)
    p:option("--db", "A results database (repeatable; default: $KREACH_DB, else results.db, when no --data is given)."):count("*")
    p:option("--data", "A folder of kreach's JSON lines (kreach results export --format jsonl), with sources.tsv, *dlrm-measure.json and *addressable*.json (docs/report.md, \"Inputs\").")
    p:option("--profiles", "A profile report (kreach profile --json) or experiments/addressable_fraction.lua --json's file (repeatable)."):count("*")
    p:option("-o --output", "The file to write (report.html, or report.md with its SVGs beside it)."):argname("<file>"):count(1)
    p:option("--format", "html or md (default: from the output's name, else html).", nil):choices(report.FORMATS)
  end,
  run = function(args)
    local dbs = args.db or {}
    if #dbs == 0 and not args.data then dbs = { cli.default_db() } end
    local files = report.make{ dbs = dbs, data = args.data, profiles = args.profiles, output = args.output, format = args.format, progress = true,
                               categories = function(paths) return catalog.load("problem", paths) end }
    for _, f in ipairs(files) do io.write(f, "\n") end
    return 0
  end,
}
