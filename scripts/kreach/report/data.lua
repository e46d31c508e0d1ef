-- kreach.report.data: what a report is made from, gathered in one plain table: the evaluations
-- of results databases (read through kreach.results.summary, as `kreach results summary` reads
-- them), the evaluations of a folder of kreach's JSON lines (imported into a temporary database,
-- as experiments/paper/run.lua does), the profiles stored in those databases or given as files,
-- and a DLRM end-to-end measurement (experiments/dlrm/measure.lua --json). Missing pieces are
-- left empty; a file that is named and cannot be read is an error naming it. docs/report.md,
-- "Inputs", gives the shapes.
local lfs = require "lfs"
local errors = require "kreach.errors"
local json = require "kreach.json"
local store = require "kreach.results.store"
local import = require "kreach.results.import"
local summary = require "kreach.results.summary"
local preport = require "kreach.profile.report"

local M = {}

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then errors.load("%s", err) end
  local s = f:read("a")
  f:close()
  return s
end

local function decode_file(path)
  local ok, v = pcall(json.decode, read_file(path))
  if not ok or type(v) ~= "table" then
    errors.load("%s: not a JSON object: %s", path, ok and type(v) or errors.message(v))
  end
  return v
end

local function device_name(d)
  if type(d) == "table" then return d.name end
  if type(d) == "string" and d ~= "" then return d end
end

-- a profile report (kreach.profile.report.build's, or kreach profile --json's) as the figure has
-- it: the shares of GPU time and of wall time of the library's kernels (not addressable), the
-- addressable ones and the unclassified ones
local function profile_entry(rep, name, source, when)
  local function shares(key)
    local lib, add, un = rep.not_addressable[key], rep.addressable[key], rep.unclassified and rep.unclassified[key] or 0
    return { library = lib, addressable = add, unclassified = un }
  end
  return { name = name, device = device_name(rep.device), when = when, source = source,
           kernels = rep.totals and rep.totals.kernels, gpu = shares("frac_gpu"), wall = shares("frac_wall") }
end

-- the profiles of a --profiles file: a kreach profile --json report, or what
-- experiments/addressable_fraction.lua --json writes ({ device, rows = { {name, vendor_gpu,
-- addr_gpu, addr_wall, unclassified_gpu} } }: the wall time is not split there beyond the
-- addressable share)
local function profiles_of_file(path)
  local v = decode_file(path)
  local out, notes = {}, {}
  if type(v.addressable) == "table" and type(v.not_addressable) == "table" then
    out[1] = profile_entry(v, v.workload or path:match("[^/]+$"), path, nil)
  elseif type(v.rows) == "table" then
    for i, r in ipairs(v.rows) do
      if type(r) ~= "table" or type(r.name) ~= "string" then errors.load("%s: rows[%d] has no name", path, i) end
      if r.error then
        notes[#notes + 1] = ("%s: %s was not profiled: %s"):format(path, r.name, tostring(r.error))
      elseif type(r.addr_gpu) == "number" and type(r.vendor_gpu) == "number" then
        out[#out + 1] = { name = r.name, device = device_name(v.device), source = path, kernels = r.kernels,
                          gpu = { library = r.vendor_gpu, addressable = r.addr_gpu, unclassified = r.unclassified_gpu or 0 },
                          wall = { addressable = r.addr_wall } }
      else
        errors.load("%s: rows[%d] (%s) has no addr_gpu or vendor_gpu", path, i, r.name)
      end
    end
  else
    errors.load("%s: neither a profile report (kreach profile --json) nor addressable_fraction.lua's rows", path)
  end
  return out, notes
end

-- the DLRM measurement of experiments/dlrm/measure.lua --json: { results = { {config, step_ms,
-- subs = { {problem, candidate, share, op_speedup, projected, measured, measured_lo, measured_hi,
-- skip, void} }, all = {...} } } }
local function dlrm_of_file(path)
  local v = decode_file(path)
  if type(v.results) ~= "table" then errors.load("%s: no 'results' list (experiments/dlrm/measure.lua --json writes one)", path) end
  local points, skipped = {}, 0
  for i, c in ipairs(v.results) do
    if type(c) ~= "table" or type(c.subs) ~= "table" then errors.load("%s: results[%d] has no 'subs'", path, i) end
    local function add(s, label)
      if type(s.measured) == "number" and type(s.projected) == "number" and not s.void then
        points[#points + 1] = { config = c.config or ("config " .. i), problem = label, candidate = s.candidate,
                                projected = s.projected, measured = s.measured, lo = s.measured_lo or s.measured,
                                hi = s.measured_hi or s.measured, share = s.share, op_speedup = s.op_speedup }
      else
        skipped = skipped + 1
      end
    end
    for _, s in ipairs(c.subs) do add(s, tostring(s.problem)) end
    if type(c.all) == "table" then add(c.all, "all") end
  end
  return { file = path, points = points, skipped = skipped, device = device_name(v.device) }
end

local function list_dir(dir, pattern)
  local t = {}
  if lfs.attributes(dir, "mode") ~= "directory" then errors.load("--data %s: not a folder", dir) end
  for f in lfs.dir(dir) do if f:match(pattern) then t[#t + 1] = f end end
  table.sort(t)
  return t
end

-- one database's rows, runs and profiles, read through a read-only connection; rows are marked
-- with where they came from (key: unique over the report, source, device)
local function read_db(path, index, label, described)
  local ok, opened, d = pcall(store.read, path, function(db)
    local data = summary.read(db)
    data.runs = summary.runs(db)
    data.profiles, data.notes = {}, {}
    for _, p in ipairs(db:profiles()) do
      local t = db:load_profile(p.id)
      local rok, rep = pcall(preport.build, t)
      if rok then
        data.profiles[#data.profiles + 1] = profile_entry(rep, p.workload or ("profile " .. p.id),
          ("%s, profile %d"):format(label, p.id), p.created_at)
      else
        -- a stored trace that does not make a report (no window to select) is named, not drawn
        data.notes[#data.notes + 1] = ("%s: profile %d is left out: %s"):format(label, p.id, errors.message(rep))
      end
    end
    return data
  end)
  if not ok then error(opened, 0) end
  if not opened then errors.database("%s", d) end
  for _, r in ipairs(d.rows) do
    r.report_key = ("%d-%d"):format(index, r.id or 0)
    local run = d.runs[r.run_id]
    r.report_device = run and device_name(run.device)
    local file = r.source_file and r.source_file:match("[^/]+$")
    r.report_source = (file and described and described[file]) or label
  end
  return d
end

-- gather{ dbs = {paths}, data = (a folder), profiles = {files}, categories = function(paths) ->
-- kreach.problem.catalog.load's results (nil: no categories), root = (the folder relative
-- problem paths of --data are read from; default ".") } -> { rows, models, profiles, dlrm,
-- notes, sources, categories }
function M.gather(o)
  local out = { rows = {}, models = {}, profiles = {}, notes = {}, sources = {} }
  local function merge(d)
    for _, r in ipairs(d.rows) do out.rows[#out.rows + 1] = r end
    for k, v in pairs(d.models) do out.models[k] = out.models[k] or v end
    for _, p in ipairs(d.profiles) do out.profiles[#out.profiles + 1] = p end
    for _, n in ipairs(d.notes or {}) do out.notes[#out.notes + 1] = n end
  end
  for i, path in ipairs(o.dbs or {}) do
    if not lfs.attributes(path) then errors.database("%s: no such results database", path) end
    merge(read_db(path, i, path))
    out.sources[#out.sources + 1] = path
  end
  local root = o.root or "."
  if o.data then
    local dir = o.data
    local described = import.descriptions(dir)
    local files = list_dir(dir, "%.jsonl$")
    if #files > 0 then
      local paths = {}
      for i, f in ipairs(files) do paths[i] = dir .. "/" .. f end
      import.into_temporary(paths, function(db_path)
        local d = read_db(db_path, #(o.dbs or {}) + 1, dir, described)
        -- an imported row's problem path is the repository's, relative to its root
        for _, r in ipairs(d.rows) do
          if r.path and r.path:sub(1, 1) ~= "/" then r.path = root .. "/" .. r.path end
        end
        merge(d)
      end)
      for _, f in ipairs(files) do out.sources[#out.sources + 1] = described[f] and ("%s/%s (%s)"):format(dir, f, described[f]) or (dir .. "/" .. f) end
    end
    -- the DLRM measurement: dlrm-measure.json or <machine>-<date>-dlrm-measure.json, the last by
    -- name when there are several (the newest, as experiments/paper/run.lua takes it)
    local measures = list_dir(dir, "dlrm%-measure%.json$")
    if #measures > 0 then out.dlrm = dlrm_of_file(dir .. "/" .. measures[#measures]) end
    for _, f in ipairs(list_dir(dir, "addressable[%w%-]*%.json$")) do
      local ps, notes = profiles_of_file(dir .. "/" .. f)
      for _, p in ipairs(ps) do out.profiles[#out.profiles + 1] = p end
      for _, n in ipairs(notes) do out.notes[#out.notes + 1] = n end
    end
  end
  for _, f in ipairs(o.profiles or {}) do
    if lfs.attributes(f, "mode") ~= "file" then errors.load("--profiles %s: no such file", f) end
    local ps, notes = profiles_of_file(f)
    for _, p in ipairs(ps) do out.profiles[#out.profiles + 1] = p end
    for _, n in ipairs(notes) do out.notes[#out.notes + 1] = n end
  end
  if o.categories then out.categories = summary.categories(out.rows, o.categories) end
  return out
end

return M
