-- The addressable fraction of real workloads (issue 6): every run of
-- experiments/workloads/list.json is profiled as `kreach profile --steps step` profiles it (the
-- program unchanged, under the CUPTI injection library; kreach.profile.run, through
-- workloads/runs.lua), its steps stored in the results database under the run's name, and
-- one table printed: workload, knobs, GPU-busy %, vendor-library share, addressable fraction by
-- GPU time and by wall time, and the largest addressable kernel.
-- usage: kreach experiments/addressable_fraction.lua [--db FILE] [--only a,b] [--core]
--                                                    [--python python3] [--json FILE]
local kreach = require "kreach"
kreach.skip_without_device()
local cjson = require "cjson"
local report = require "kreach.profile.report"

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local root = here .. "/.."
local db, only, core, python, json_out = "results.db", nil, false, "python3", nil
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--db" then i = i + 1; db = arg[i]
  elseif a == "--only" then i = i + 1; only = {}; for n in arg[i]:gmatch("[^,]+") do only[n] = true end
  elseif a == "--core" then core = true
  elseif a == "--python" then i = i + 1; python = arg[i]
  elseif a == "--json" then i = i + 1; json_out = arg[i]
  else io.stderr:write("addressable_fraction: unknown option ", a, "\n"); os.exit(2) end
  i = i + 1
end

package.path = here .. "/workloads/?.lua;" .. package.path
local runs = require "runs"
local list = runs.load(here .. "/workloads")

-- the knobs that move the answer, in a short form
local function knob_text(k)
  if type(k) ~= "table" then return "-" end
  local parts = {}
  local function add(key, label) if k[key] ~= nil and k[key] ~= cjson.null then parts[#parts + 1] = (label or key) .. "=" .. tostring(k[key]) end end
  add("mode"); add("precision"); add("batch"); add("seq"); add("dropout"); add("compile")
  add("vocab_padded", "vocab"); add("memory_format", "layout"); add("dlrm_grad", "grad"); add("max_rows")
  return table.concat(parts, " ")
end

local rows = {}
for _, run in ipairs(list.runs) do
  if (not only or only[run.name]) and (not core or run.core ~= false) then
    local t0 = kreach.now()
    local res, why, out = runs.profile(run, runs.program(run, root, python), { db = db })
    local row = { name = run.name, wall_s = kreach.now() - t0 }
    if not res then
      row.error = ("the profile failed: %s: %s"):format(why, (out:sub(-300):gsub("\n", " | ")))
    else
      for k, v in pairs(runs.figures(res.report)) do row[k] = v end
    end
    rows[#rows + 1] = row
    io.stderr:write(("profiled %s in %.1f s%s\n"):format(run.name, row.wall_s, row.error and (": " .. row.error) or ""))
  end
end

local function pct(x) return x and ("%.1f%%"):format(100 * x) or "-" end
print(("%-22s %-58s %7s %8s %8s %8s %7s  %s"):format("workload", "knobs", "busy", "library", "addr/GPU", "addr/wall",
  "unclass", "largest addressable kernel (family, share of GPU time)"))
for _, r in ipairs(rows) do
  if r.error then
    print(("%-22s FAILED %s"):format(r.name, r.error))
  else
    local top = r.top and ("%s (%s, %s)"):format(report.short_name(r.top.name, 50), r.top.family, pct(r.top.frac_gpu)) or "-"
    print(("%-22s %-58s %7s %8s %8s %8s %7s  %s"):format(r.name, knob_text(r.knobs):sub(1, 58), pct(r.busy), pct(r.vendor_gpu),
      pct(r.addr_gpu), pct(r.addr_wall), pct(r.unclassified_gpu), top))
  end
end
if json_out then
  local f = assert(io.open(json_out, "w"))
  f:write(cjson.encode({ device = kreach.device().name, rows = rows }), "\n")
  f:close()
end
