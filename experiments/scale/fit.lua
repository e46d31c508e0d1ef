-- The model-scale sweep's fit (no GPU): reads experiments/scale/run.lua's summary JSON, fits
-- the addressable share against log10(parameters) per model family and mode (least squares,
-- t-interval for the slope; fitlib.lua says why not a bootstrap), and prints the table with a
-- sentence a group: whether "the fraction shrinks with model scale" holds on the sweep's GPU,
-- is contradicted or is undecided, and which kernel families' shares moved.
-- usage: kreach experiments/scale/fit.lua --data FILE.json [--md OUT.md] [--csv OUT.csv] [--level 0.95]
local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path
local fitlib = require "fitlib"

local function usage(msg)
  io.stderr:write("experiments/scale/fit.lua: ", msg, "\n",
    "usage: kreach experiments/scale/fit.lua --data FILE.json [--md OUT.md] [--csv OUT.csv] [--level 0.95]\n")
  os.exit(2)
end

local data, md, csv, level
local i = 1
while i <= #arg do
  local a, v = arg[i], arg[i + 1]
  if a == "--data" or a == "--md" or a == "--csv" or a == "--level" then
    if v == nil then usage(a .. " wants a value") end
    if a == "--data" then data = v elseif a == "--md" then md = v elseif a == "--csv" then csv = v
    else
      level = tonumber(v)
      if not level or level <= 0 or level >= 1 then usage("--level wants a number in (0, 1), not " .. v) end
    end
    i = i + 2
  else
    usage("unknown option " .. a)
  end
end
if not data then usage("--data FILE.json is needed (experiments/scale/run.lua --out writes it)") end

local doc, err = fitlib.load(data)
if not doc then io.stderr:write("experiments/scale/fit.lua: ", err, "\n"); os.exit(1) end
local a = fitlib.analyse(doc, level)

local function to_file(path, fn)
  local f, ferr = io.open(path, "w")
  if not f then io.stderr:write("experiments/scale/fit.lua: ", ferr, "\n"); os.exit(1) end
  fn(function(...) f:write(...) end)
  f:close()
end

local parts = {}
fitlib.write_md(a, function(...) for _, s in ipairs({ ... }) do parts[#parts + 1] = tostring(s) end end)
io.write(table.concat(parts))
if md then
  to_file(md, function(w) w("# The model-scale sweep\n\n"); fitlib.write_md(a, w); w("\nSource: `", data, "`.\n") end)
end
if csv then to_file(csv, function(w) fitlib.write_csv(a, w) end) end
