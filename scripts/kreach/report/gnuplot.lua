-- kreach.report.gnuplot: the report's one contact with its plotting tool, gnuplot (Debian's
-- gnuplot-nox, its svg terminal). A figure is a gnuplot script whose data are inline datablocks
-- ($name << EOD); gnuplot runs on it in a temporary directory and its SVG comes back, made fit
-- to sit inline in a page beside other figures: no XML prologue, every id prefixed with the
-- figure's name (gnuplot names its markers gpPt0... in every file), and the figure's data as
-- JSON in the SVG's <metadata>, so that a reader (or a test) can check what was drawn.
-- docs/report.md says why gnuplot.
local atomic = require "kreach.atomic"
local json = require "kreach.json"
local text = require "kreach.text"

local M = {}

M.PROGRAM = "gnuplot"

-- available() -> true, or nil and why gnuplot cannot run here
function M.available()
  local p = io.popen(M.PROGRAM .. " --version 2>&1")
  local out = p:read("a")
  local ok = p:close()
  if not ok or not out:match("^gnuplot") then
    return nil, ("%s does not run (%s); tools/install-deps installs it (Debian's gnuplot-nox)"):format(
      M.PROGRAM, text.one_line(out ~= "" and out or "not found"))
  end
  return true
end

-- quote(s) -> s as a gnuplot single-quoted string (a ' is doubled; control characters dropped)
function M.quote(s)
  s = tostring(s):gsub("[%c]", " ")
  return "'" .. s:gsub("'", "''") .. "'"
end

-- a data field: a number as %.17g (exact), a string double-quoted (a " becomes ')
local function field(v)
  if type(v) == "number" then
    if v ~= v then return "NaN" end
    return math.type(v) == "integer" and tostring(v) or ("%.17g"):format(v)
  end
  return '"' .. tostring(v):gsub('[%c"]', function(c) return c == '"' and "'" or " " end) .. '"'
end

-- datablock(name, rows) -> the text of an inline datablock: one line a row of fields
function M.datablock(name, rows)
  local t = { ("$%s << EOD"):format(name) }
  for _, r in ipairs(rows) do
    local f = {}
    for i, v in ipairs(r) do f[i] = field(v) end
    t[#t + 1] = table.concat(f, " ")
  end
  t[#t + 1] = "EOD"
  return table.concat(t, "\n")
end

local function xml_text(s)
  return (s:gsub("[&<>]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;" }))
end

-- the SVG made inline-ready: prologue dropped, ids prefixed, data and name added
local function adapt(svg, name, data)
  svg = svg:gsub("^%s*<%?xml.-%?>%s*", "")
  local ids = {}
  for id in svg:gmatch("%sid=['\"]([^'\"]+)['\"]") do ids[id] = true end
  local prefix = "fig-" .. name .. "-"
  svg = svg:gsub("(%sid=['\"])([^'\"]+)(['\"])", function(a, id, b) return a .. prefix .. id .. b end)
  svg = svg:gsub("(['\"(])#([%w_%-]+)", function(a, id)
    if ids[id] then return a .. "#" .. prefix .. id end
  end)
  local meta = ('<metadata class="kreach-data">%s</metadata>'):format(xml_text(json.encode(data)))
  svg = svg:gsub("<svg%s", ('<svg class="kreach-figure" data-figure="%s" role="img" '):format(name), 1)
  svg = svg:gsub("(<svg[^>]*>)", "%1\n" .. meta, 1)
  return svg
end

-- render{ name =, script = (the plot commands, after the terminal and the datablocks),
-- blocks = { {name, rows}, ... }, data = (embedded as JSON), width =, height = } -> the SVG
-- text, or nil and gnuplot's error. The output is a function of the arguments alone.
function M.render(o)
  local dir, err = atomic.tmpdir()
  if not dir then return nil, err end
  local parts = {
    ("set terminal svg size %d,%d fixed noenhanced font 'sans,11' background '#ffffff'"):format(o.width or 720, o.height or 400),
    ("set output '%s/out.svg'"):format(dir),
    "set encoding utf8",
  }
  for _, b in ipairs(o.blocks or {}) do parts[#parts + 1] = M.datablock(b[1], b[2]) end
  parts[#parts + 1] = o.script
  parts[#parts + 1] = "unset output"
  local script = dir .. "/plot.gp"
  local f = assert(io.open(script, "w"))
  f:write(table.concat(parts, "\n"), "\n")
  f:close()
  local p = io.popen(("%s %s 2>&1"):format(M.PROGRAM, text.shell_quote(script)))
  local out = p:read("a")
  local ok = p:close()
  local svg
  local g = io.open(dir .. "/out.svg", "rb")
  if g then svg = g:read("a"); g:close() end
  atomic.remove_tree(dir)
  if not ok or not svg or svg == "" then
    return nil, ("gnuplot failed on figure '%s': %s"):format(o.name, text.clean(out, 2048))
  end
  return adapt(svg, o.name, o.data)
end

return M
