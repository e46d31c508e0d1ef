-- kreach.report.html: the report as one self-contained HTML page (kreach.report.build's table):
-- the figures' SVG inline (their data in each SVG's <metadata>), a sentence in place of each
-- figure left out, the per-problem table a reader sorts by clicking a header (a few lines of
-- inline script), and each candidate's source and full record below it, linked from its row.
-- Nothing is fetched: no network, no file beside the page.
local json = require "kreach.json"
local figures = require "kreach.report.figures"

local M = {}

local function esc(s)
  return (tostring(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }))
end
M.esc = esc

local STYLE = [[
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
figure { margin: 1em 0; } figure svg { width: 100%; height: auto; max-height: 560px; }
figcaption, p.missing { font-size: 0.92em; color: #444; }
p.missing { font-style: italic; background: #f6f6f6; padding: 0.6em; }
table { border-collapse: collapse; font-size: 0.86em; width: 100%; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \25B2"; } th[aria-sort="descending"]::after { content: " \25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.v-correct td.verdict { color: #1a7a40; } tr:not(.v-correct) td.verdict { color: #b2182b; }
details { margin: 0.3em 0; } details pre { white-space: pre-wrap; word-break: break-all; background: #fafafa; padding: 0.6em; font-size: 0.85em; }
]]

-- sorting by a header: numbers by value (a cell without one last), text in natural order; the
-- second click reverses. A link to a source or a record opens its <details>.
local SCRIPT = [[
(function () {
  var table = document.getElementById('problems');
  var heads = table.tHead.rows[0].cells;
  function key(td) { return td.getAttribute('data-sort'); }
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener('click', function () {
      var asc = th.getAttribute('aria-sort') !== 'ascending';
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var numeric = th.getAttribute('data-type') === 'number';
      rows.sort(function (a, b) {
        var x = key(a.cells[col]), y = key(b.cells[col]);
        if (x === null || x === '') return (y === null || y === '') ? 0 : 1;
        if (y === null || y === '') return -1;
        var c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y, undefined, { numeric: true });
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  function open() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === 'DETAILS') el.open = true;
  }
  window.addEventListener('hashchange', open);
  open();
})();
]]

local function cell_sort(v)
  if type(v) == "number" then
    if v ~= v then return "" end
    return ("%.17g"):format(v)
  end
  return v and tostring(v) or ""
end

-- page(rep) -> the HTML text
function M.page(rep)
  local t = {}
  local function w(...) for _, x in ipairs{ ... } do t[#t + 1] = x end end
  w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    -- nothing loads from elsewhere: the page's own style and script only
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n",
    "<title>kreach report</title>\n<style>", STYLE, "</style>\n</head>\n<body>\n<h1>kreach report</h1>\n")
  w("<p>Made by <code>kreach report</code> from ", esc(#rep.sources > 0 and table.concat(rep.sources, "; ") or "no data"),
    ". Each figure says what was measured, on which device, when and over how many samples; the numbers drawn are in each figure's SVG (<code>&lt;metadata class=\"kreach-data\"&gt;</code>, JSON). docs/report.md describes every figure.</p>\n")
  if #rep.notes > 0 then
    w("<ul class=\"notes\">\n")
    for _, n in ipairs(rep.notes) do w("<li>", esc(n), "</li>\n") end
    w("</ul>\n")
  end
  for _, f in ipairs(rep.figures) do
    w(("<section class=\"figure\" id=\"%s\" data-figure=\"%s\" data-state=\"%s\">\n<h2>%s</h2>\n"):format(
      esc("figure-" .. f.name), esc(f.name), f.missing and "missing" or "drawn", esc(f.title)))
    if f.missing then
      w("<p class=\"missing\">Not drawn: ", esc(f.missing), "</p>\n")
    else
      w("<figure>\n", f.svg, "\n<figcaption>", esc(f.caption), "</figcaption>\n</figure>\n")
    end
    w("</section>\n")
  end

  w("<section id=\"table\">\n<h2>Per problem</h2>\n")
  if #rep.rows == 0 then
    w("<p class=\"missing\">No candidate has been evaluated in the store.</p>\n")
  else
    w(("<p>%d evaluation%s of candidates (each once, as the figures count them); click a header to sort. Each row links to the candidate's source and to its full record, below.</p>\n"):format(
      #rep.rows, #rep.rows == 1 and "" or "s"))
    w("<table id=\"problems\">\n<thead><tr>")
    local numeric = {}
    for i, c in ipairs(figures.COLUMNS) do
      -- a column is numeric when every value it has is a number
      local isnum = true
      for _, r in ipairs(rep.rows) do local v = c[2](r); if v ~= nil and type(v) ~= "number" then isnum = false end end
      numeric[i] = isnum
      w(("<th data-type=\"%s\">%s</th>"):format(isnum and "number" or "text", esc(c[1])))
    end
    w("<th>record</th></tr></thead>\n<tbody>\n")
    for _, r in ipairs(rep.rows) do
      local key = r.row.report_key
      w(("<tr class=\"v-%s\" data-key=\"%s\">"):format(esc(r.row.verdict or "?"), esc(key)))
      for i, c in ipairs(figures.COLUMNS) do
        local v = c[2](r)
        local text = c[3] and c[3](r) or (v ~= nil and tostring(v) or "-")
        local cls = c[1] == "verdict" and "verdict" or (numeric[i] and "num" or nil)
        local inner = esc(text)
        if c[1] == "candidate" then inner = ("<a href=\"#src-%s\">%s</a>"):format(esc(key), esc(text)) end
        w(("<td%s data-sort=\"%s\">%s</td>"):format(cls and (" class=\"" .. cls .. "\"") or "", esc(cell_sort(v)), inner))
      end
      w(("<td><a href=\"#rec-%s\">record</a></td></tr>\n"):format(esc(key)))
    end
    w("</tbody>\n</table>\n")
    w("<h2>Sources and records</h2>\n")
    for _, r in ipairs(rep.rows) do
      local key, row = r.row.report_key, r.row
      local label = ("%s on %s (%s)"):format(row.candidate_name or row.candidate_path or "?", r.problem, row.verdict or "?")
      w(("<details id=\"src-%s\"><summary>source: %s</summary><pre>%s</pre></details>\n"):format(esc(key), esc(label),
        esc(row.candidate_source or "(the store holds no source for this candidate)")))
      w(("<details id=\"rec-%s\"><summary>record: %s</summary><pre>%s</pre></details>\n"):format(esc(key), esc(label),
        esc(json.encode(figures.record(row)))))
    end
  end
  w("</section>\n<script>", SCRIPT, "</script>\n</body>\n</html>\n")
  return table.concat(t)
end

return M
