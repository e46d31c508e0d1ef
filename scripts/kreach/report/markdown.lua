-- kreach.report.markdown: the report as Markdown (kreach.report.build's table), for terminals,
-- READMEs and papers: each figure an image of the SVG written beside the page, with its caption,
-- or the sentence saying why it is left out; the per-problem table; each candidate's source and
-- record in a <details> block its row links to.
local json = require "kreach.json"
local figures = require "kreach.report.figures"
local html = require "kreach.report.html"

local M = {}

-- a table cell: a candidate's words (its name, a reason) are text, never markup a renderer would
-- run or load (&, < and > as entities), and never break the table (| escaped, lines joined)
local function cell(s)
  return (tostring(s):gsub("[&<>]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;" }):gsub("|", "\\|"):gsub("[\r\n]+", " "))
end

-- page(rep, svgs) -> the Markdown text; svgs: figure name -> the SVG file's name (beside the page)
function M.page(rep, svgs)
  local t = {}
  local function w(...) for _, x in ipairs{ ... } do t[#t + 1] = x end end
  w("# kreach report\n\n")
  w("Made by `kreach report` from ", #rep.sources > 0 and table.concat(rep.sources, "; ") or "no data",
    ". The numbers drawn are in each SVG's `<metadata class=\"kreach-data\">` (JSON).\n\n")
  for _, n in ipairs(rep.notes) do w("- ", n, "\n") end
  if #rep.notes > 0 then w("\n") end
  for _, f in ipairs(rep.figures) do
    w("## ", f.title, "\n\n")
    if f.missing then
      w("*Not drawn:* ", f.missing, "\n\n")
    else
      w(("![%s](%s)\n\n"):format(f.title, svgs[f.name]), f.caption, "\n\n")
    end
  end
  w("## Per problem\n\n")
  if #rep.rows == 0 then
    w("No candidate has been evaluated in the store.\n")
    return table.concat(t)
  end
  local h, sep = {}, {}
  for i, c in ipairs(figures.COLUMNS) do h[i] = cell(c[1]); sep[i] = "---" end
  h[#h + 1], sep[#sep + 1] = "record", "---"
  w("| ", table.concat(h, " | "), " |\n| ", table.concat(sep, " | "), " |\n")
  for _, r in ipairs(rep.rows) do
    local c = {}
    for i, col in ipairs(figures.COLUMNS) do
      local v = col[2](r)
      local text = col[3] and col[3](r) or (v ~= nil and tostring(v) or "-")
      c[i] = cell(text)
      if col[1] == "candidate" then c[i] = ("[%s](#src-%s)"):format(c[i], r.row.report_key) end
    end
    c[#c + 1] = ("[record](#rec-%s)"):format(r.row.report_key)
    w("| ", table.concat(c, " | "), " |\n")
  end
  w("\n## Sources and records\n\n")
  for _, r in ipairs(rep.rows) do
    local key, row = r.row.report_key, r.row
    local label = html.esc(("%s on %s (%s)"):format(row.candidate_name or row.candidate_path or "?", r.problem, row.verdict or "?"))
    w(("<details id=\"src-%s\"><summary>source: %s</summary>\n\n<pre>%s</pre>\n</details>\n"):format(key, label,
      html.esc(row.candidate_source or "(the store holds no source for this candidate)")))
    w(("<details id=\"rec-%s\"><summary>record: %s</summary>\n\n<pre>%s</pre>\n</details>\n"):format(key, label,
      html.esc(json.encode(figures.record(row)))))
  end
  return table.concat(t)
end

return M
