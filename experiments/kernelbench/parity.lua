-- kreach baseline against PyTorch eager, measured in the same run (kreach bench with PyTorch
-- timed beside, docs/timing.md): a markdown parity table from one or more results databases.
--   kreach experiments/kernelbench/parity.lua DB... [--category convolution]
-- Per problem and dtype (one baseline record of each: from the last database that has one, the
-- newest there): kreach's baseline ms, PyTorch eager ms, their ratio with its 95% interval
-- (below 1: kreach's baseline is faster), and the baseline's backend where it can differ (cuDNN
-- and the engine it ran, or kreach's kernels); then, per dtype and for
-- the convolutions alone, the geometric mean and the problems above 1.5 and below 0.9.
local stats = require "kreach.stats"
local store = require "kreach.results.store"

local dbs, only = {}, nil
local i = 1
while arg[i] do
  if arg[i] == "--category" then only = arg[i + 1]; i = i + 2
  else dbs[#dbs + 1] = arg[i]; i = i + 1 end
end
if #dbs == 0 then io.stderr:write("usage: kreach experiments/kernelbench/parity.lua DB... [--category NAME]\n"); os.exit(2) end

local CONV = {}
for id = 54, 87 do CONV[id] = true end
CONV[50] = true

local rows = {}
for di, path in ipairs(dbs) do
  local db = assert(store.open(path, { readonly = true }))
  for _, r in ipairs(db:evaluations{}) do
    if r.verdict == "baseline" and r.pytorch_ms then
      local k = r.dtype .. ":" .. r.problem_name -- names, not ids: dlrm-bench repeats ids 1 to 12
      r.db_index = di
      -- ids are per database: a later database wins, then the newer record within one
      if not rows[k] or rows[k].db_index < di or rows[k].id < r.id then rows[k] = r end
    end
  end
  db:close()
end
local list = {}
for _, r in pairs(rows) do
  if not only or (only == "convolution" and CONV[r.problem_id]) then list[#list + 1] = r end
end
table.sort(list, function(a, b)
  if a.dtype ~= b.dtype then return a.dtype > b.dtype end
  return a.problem_id < b.problem_id
end)
print("| id | problem | dtype | kreach ms | PyTorch ms | kreach / PyTorch [95% CI] | baseline |")
print("| ---: | --- | --- | ---: | ---: | ---: | --- |")
local by = {}
for _, r in ipairs(list) do
  local t = r.timing or {}
  local q = t.ratios and t.ratios.baseline_vs_pytorch or {}
  local be = t.baseline_backend
  print(("| %d | %s | %s | %.4f | %.4f | %.3f [%.3f, %.3f] | %s |"):format(r.problem_id, r.problem_name, r.dtype,
    r.baseline_ms, r.pytorch_ms, r.baseline_vs_pytorch, q.lo or 0 / 0, q.hi or 0 / 0,
    be and (be.backend .. (be.version and (" " .. be.version) or "") .. (be.algo and (", " .. be.algo) or "")) or "kreach"))
  for _, g in ipairs({ r.dtype, r.dtype .. " convolutions" }) do
    if g == r.dtype or CONV[r.problem_id] then
      by[g] = by[g] or { ratios = {}, far = {}, low = {} }
      local s = by[g]
      s.ratios[#s.ratios + 1] = r.baseline_vs_pytorch
      if r.baseline_vs_pytorch > 1.5 then s.far[#s.far + 1] = ("%d (%.2f)"):format(r.problem_id, r.baseline_vs_pytorch) end
      if r.baseline_vs_pytorch < 0.9 then s.low[#s.low + 1] = r.problem_id end
    end
  end
end
print()
local keys = {}
for k in pairs(by) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do
  local s = by[k]
  print(("- %s: %d problems, geometric mean %.3f; above 1.5: %s; below 0.9: %d"):format(k, #s.ratios, stats.geomean(s.ratios),
    #s.far > 0 and table.concat(s.far, ", ") or "none", #s.low))
end
