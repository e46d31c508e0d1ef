-- kreach.report: `kreach report`, one page of figures and a per-problem table made from stored
-- data (docs/report.md). A stage beside results/: it reads through kreach.results (the store and
-- its summary) and kreach.profile (the profiles' report), and may require base modules; never
-- judge/, candidate/ or run/ (tests/layering.lua). data gathers the inputs, figures makes each
-- figure's data and gnuplot script, gnuplot draws them, html and markdown write the page.
-- build() makes the report apart from writing it; the output is a function of the data alone
-- (no date, no path of this machine beyond those the caller names), so a committed report can
-- be checked against the script that made it.
local atomic = require "kreach.atomic"
local errors = require "kreach.errors"
local data = require "kreach.report.data"
local figures = require "kreach.report.figures"
local gnuplot = require "kreach.report.gnuplot"
local html = require "kreach.report.html"
local markdown = require "kreach.report.markdown"
local progress = require "kreach.progress"

local M = {}

M.FORMATS = { "html", "md" }

-- build(o) -> { figures = { {name, title, caption, svg, data} | {name, title, missing} }, rows
-- (the per-problem table), notes, sources }. o is kreach.report.data.gather's, plus progress
-- (true: kreach.progress's line on standard error, a step per input read and per figure drawn).
-- Raises a user error when gnuplot cannot run or a named input cannot be read.
function M.build(o)
  local ok, why = gnuplot.available()
  if not ok then errors.failed("kreach report: %s", why) end
  -- the steps: reading the inputs, then each figure (their number known once read)
  local t = o.progress and progress.new{ prefix = "kreach report", total = 1, every_pct = 25 } or nil
  if t then t:start("reading the data") end
  local d = data.gather(o)
  local figs = figures.all(d)
  if t then t.total = 1 + #figs; t:finished() end
  for _, f in ipairs(figs) do
    if t then t:start(f.name) end
    if not f.missing then
      local svg, err = gnuplot.render{ name = f.name, script = f.script, blocks = f.blocks, data = f.data,
                                       width = f.width or 760, height = f.height or 400 }
      if not svg then if t then t:close() end; errors.failed("%s", err) end
      f.svg = svg
    end
    if t then t:finished() end
  end
  if t then t:close() end
  return { figures = figs, rows = figures.table_rows(d), notes = d.notes, sources = d.sources, models = d.models }
end

local function write_file(path, text, protect)
  local out, err, status = atomic.open(path, { protect = protect })
  if not out then errors.raise(status, ("cannot write %s: %s"):format(path, tostring(err))) end
  local ok, werr = pcall(out.write, out, text)
  if ok then ok, werr = out:commit() else out:abort() end
  if not ok then errors.failed("cannot write %s: %s", path, errors.message(werr)) end
end

-- write(rep, path, format) -> the list of files written: the page (html: one self-contained file),
-- or the Markdown and, beside it, one SVG per figure drawn (<stem>-<figure>.svg). protect: paths
-- never written over (the databases read: kreach.atomic.database_files)
function M.write(rep, path, format, protect)
  if format == "md" then
    local dir, base = path:match("^(.*)/([^/]*)$")
    dir, base = dir or ".", base or path
    local stem = base:gsub("%.md$", "")
    local written = {}
    local svgs = {}
    for _, f in ipairs(rep.figures) do
      if f.svg then
        local name = ("%s-%s.svg"):format(stem, f.name)
        svgs[f.name] = name
        write_file(dir .. "/" .. name, f.svg, protect)
        written[#written + 1] = dir .. "/" .. name
      end
    end
    write_file(path, markdown.page(rep, svgs), protect)
    table.insert(written, 1, path)
    return written
  end
  write_file(path, html.page(rep), protect)
  return { path }
end

-- check_output(path, dbs) -> the paths to protect (the databases' files): raises the usage error
-- (or failure) of an output that cannot be written, or that is one of the databases, before
-- anything is read
function M.check_output(path, dbs)
  local protect = {}
  for _, db in ipairs(dbs or {}) do for _, f in ipairs(atomic.database_files(db)) do protect[#protect + 1] = f end end
  local probe, err, status = atomic.open(path, { protect = protect })
  if not probe then errors.raise(status, ("cannot write %s: %s"):format(path, tostring(err))) end
  probe:abort()
  return protect
end

-- make{ dbs, data, profiles, categories, progress (as build's), output = (the file), format = "html"|"md"
-- (default: from the output's name, else html) } -> the files written: build and write in one,
-- the databases read protected from being written over (kreach report, kreach eval --report)
function M.make(o)
  local format = o.format or (o.output:match("%.md$") and "md") or "html"
  local protect = M.check_output(o.output, o.dbs)
  return M.write(M.build(o), o.output, format, protect)
end

return M
