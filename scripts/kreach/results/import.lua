-- kreach.results.import: other harnesses' results (and kreach's own exports) read into a results
-- database (`kreach results import`, docs/results.md, "Importing other harnesses' results").
--
-- Two formats: KernelBench's eval_results.json, in either layout upstream has used
-- ({"<problem_id>": {"<sample_id>": sample}} and {"<problem_id>": [sample, ...]}, the second
-- what `kreach results export --format kernelbench` writes), with KernelBench's baseline timing
-- JSON beside it for the speedups against PyTorch; and kreach's JSON lines (`results export
-- --format jsonl`), read back so that an export of the imported rows is the export that was
-- read, but for the provenance the import adds.
--
-- Every file is read and checked whole before anything is written; then everything goes in
-- in one transaction: a malformed file is an error naming the file and the entry, and the
-- database is as it was. An imported row says where it came from (harness, measured_here =
-- false, source_file, source_hash) and points at a run of its own, status 'imported', whose
-- config names the file and its hash; it is never taken for a measurement of kreach's.
local atomic = require "kreach.atomic"
local errors = require "kreach.errors"
local json = require "kreach.json"
local kinds = require "kreach.kinds"
local problem = require "kreach.problem"
local util = require "kreach.core.util"
local verdicts = require "kreach.verdict"
local evaluation = require "kreach.results.evaluation"
local store = require "kreach.results.store"

local M = {}

M.FORMATS = { "kernelbench", "jsonl" }
M.DEFAULT_SUITE = "kernelbench-l1"

local function hash(...) return util.hash(table.concat({ ... }, "\0")) end

local function kind_of(v)
  if v == nil then return "nothing" end
  if type(v) == "number" then return math.type(v) == "integer" and "an integer" or "a number" end
  if type(v) == "table" then return "an object or a list" end
  return "a " .. type(v)
end

-- A malformed entry: "<file>: <where>: <what>" (status 3, an input file that cannot be used).
local function bad(file, where, fmt, ...)
  errors.load("%s: %s: " .. fmt, file, where, ...)
end

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then errors.file(path, tostring(err)) end
  local s = f:read("a")
  f:close()
  if not s then errors.file(path, "cannot be read") end
  return s
end

local function decode(path, s)
  local ok, v = pcall(json.decode, s)
  if not ok then errors.load("%s: not JSON (%s)", path, errors.message(v)) end
  return v
end

-- format_of(path, text) -> "kernelbench" or "jsonl": JSON lines when the file's first line is an
-- object of its own and more follows, or the object has kreach's eval_key
local function format_of(path, s)
  local first = s:match("^%s*([^\n]*)")
  local ok, v = pcall(json.decode, first or "")
  if ok and type(v) == "table" and (v.eval_key ~= nil or s:find("\n%s*{", #first + 1)) then return "jsonl" end
  return "kernelbench"
end

-- ---- KernelBench's baseline times ----

-- baseline_times(path) -> { level = { ["<name>.py"] = mean ms } }, checked
function M.baseline_times(path)
  local t = decode(path, read_file(path))
  if type(t) ~= "table" then errors.load("%s: KernelBench's baseline times are an object: {\"level1\": {\"<name>.py\": {\"mean\": ...}}}", path) end
  local out = {}
  for level, entries in pairs(t) do
    if type(entries) ~= "table" then bad(path, json.encode(level), "an object of problems' times expected, got %s", kind_of(entries)) end
    out[level] = {}
    for name, e in pairs(entries) do
      local where = ("%s, %s"):format(level, json.encode(name))
      if type(e) ~= "table" then bad(path, where, "an object of times expected, got %s", kind_of(e)) end
      if type(e.mean) ~= "number" or not (e.mean > 0) or e.mean == math.huge then
        bad(path, where, "mean must be a positive number of milliseconds (got %s)", kind_of(e.mean))
      end
      out[level][name] = e.mean
    end
  end
  return out
end

-- The PyTorch time of a problem in the baseline times: under the suite's level ("level1" for
-- kernelbench-l1) when there is one, else under any level; by its KernelBench file name.
local function baseline_of(times, suite, name)
  if not times then return nil end
  local level = suite and suite:match("%-l(%d+)")
  local file = name .. ".py"
  if level and times["level" .. level] then return times["level" .. level][file] end
  for _, entries in pairs(times) do
    if entries[file] then return entries[file] end
  end
  return nil
end

-- ---- the suite's problems, by id ----

local function suite_problems(suite)
  local s = problem.load_suite(suite)
  local by = {}
  for i, id in ipairs(s.ids) do by[id] = s.files[i] end
  local loaded = {}
  return function(id)
    if loaded[id] == nil then
      local f = by[id]
      if not f then loaded[id] = false
      else
        local p = problem.load(f)
        loaded[id] = { suite = suite, problem_id = id, name = p.name, path = f, file_hash = util.hash(read_file(f)) }
      end
    end
    return loaded[id] or nil
  end
end

-- ---- KernelBench's eval_results.json ----

local DTYPE = kinds.set(kinds.DTYPES)

-- A KernelBench precision ("fp32", "float16", "bfloat16", ...) or a kreach dtype as kreach's
-- dtype name (kreach.kinds), or nil
local function dtype_of(p)
  if type(p) ~= "string" then return nil end
  p = p:lower():gsub("^bfloat", "bf"):gsub("^float", "f"):gsub("^fp", "f")
  return DTYPE[p] and p or nil
end
local ERROR_KEYS = { "compilation_error", "runtime_error", "correctness_issue", "error" }
local KNOWN_VERDICT = {}
for _, k in ipairs(verdicts.KINDS) do KNOWN_VERDICT[k] = true end

-- The rows of one KernelBench sample (validated). `where` names it in errors.
local function kernelbench_row(file, where, s, ctx, p, sid)
  if type(s) ~= "table" then bad(file, where, "a sample is an object, got %s", kind_of(s)) end
  for _, k in ipairs{ "compiled", "correctness" } do
    if type(s[k]) ~= "boolean" then bad(file, where, "%s must be a boolean (got %s)", k, kind_of(s[k])) end
  end
  if s.runtime ~= nil and type(s.runtime) ~= "number" then
    bad(file, where, "runtime must be a number of milliseconds, -1 when not measured (got %s)", kind_of(s.runtime))
  end
  local rs, md = s.runtime_stats, s.metadata
  if rs ~= nil and type(rs) ~= "table" then bad(file, where, "runtime_stats must be an object (got %s)", kind_of(rs)) end
  rs = rs or {}
  for _, k in ipairs{ "mean", "std", "min", "max", "num_trials" } do
    if rs[k] ~= nil and type(rs[k]) ~= "number" then
      bad(file, where, "runtime_stats.%s must be a number (got %s)", k, kind_of(rs[k]))
    end
  end
  if md ~= nil and type(md) ~= "table" then bad(file, where, "metadata must be an object (got %s)", kind_of(md)) end
  md = md or {}
  if s.sample_id ~= nil and math.type(s.sample_id) ~= "integer" then
    bad(file, where, "sample_id must be an integer (got %s)", kind_of(s.sample_id))
  end
  local verdict, reason = "incorrect", nil
  if s.correctness then verdict = "correct"
  elseif not s.compiled then verdict = "compile_error"
  elseif md.runtime_error ~= nil then verdict = "runtime_error" end
  -- what kreach's own export adds to the metadata (its verdict, reason and dtype) is read back
  if type(md.verdict) == "string" and KNOWN_VERDICT[md.verdict] and (md.verdict == "correct") == s.correctness then
    verdict = md.verdict
  end
  if type(md.reason) == "string" then reason = md.reason
  elseif verdict ~= "correct" then
    for _, k in ipairs(ERROR_KEYS) do
      if md[k] ~= nil then reason = type(md[k]) == "string" and md[k] or json.encode(md[k]); break end
    end
  end
  local runtime = s.runtime
  local ms = (runtime and runtime >= 0) and runtime or nil
  local hw = type(md.hardware) == "string" and md.hardware or (type(rs.hardware) == "string" and rs.hardware) or nil
  if hw and not ctx.hardware then ctx.hardware = hw end
  local ref = baseline_of(ctx.times, ctx.suite, p.name)
  local model = ctx.model
  local chash = hash("kernelbench sample", ctx.source_hash, ctx.suite, tostring(p.problem_id), tostring(sid))
  return {
    eval_key = hash("kernelbench import", ctx.source_hash, ctx.suite, tostring(p.problem_id), tostring(sid)),
    dtype = dtype_of(md.precision) or dtype_of(md.dtype) or "f32",
    verdict = verdict, reason = reason,
    candidate_ms = ms,
    pytorch_ms = ref,
    -- KernelBench's speedup: the PyTorch baseline's mean over the candidate's runtime
    speedup_pytorch = (ref and ms and ms > 0) and ref / ms or nil,
    timing = { candidate = ms and { summary = { mean = rs.mean, min = rs.min, max = rs.max, std = rs.std,
                                                n = math.tointeger(rs.num_trials) } } or nil,
               runtime_stats = rs },
    check_result = { kernelbench = { compiled = s.compiled, correctness = s.correctness, metadata = md } },
    model = model,
    harness = "kernelbench", source_file = ctx.file, source_hash = ctx.source_hash,
    problem = p,
    candidate = { hash = chash, name = ("%s sample %d"):format(model or "kernelbench", sid), source = "",
                  imported = true, origin = { model = model, sample = sid, harness = "kernelbench" } },
    origin = { model = model, sample = sid, harness = "kernelbench" },
  }
end

local function id_sort(keys)
  table.sort(keys, function(a, b)
    local na, nb = tonumber(a), tonumber(b)
    if na and nb and na ~= nb then return na < nb end
    return tostring(a) < tostring(b)
  end)
  return keys
end

-- kernelbench(file, text, ctx) -> the rows of an eval_results.json, in problem and sample order
function M.kernelbench(file, text, ctx)
  local t = decode(file, text)
  if type(t) ~= "table" or #t > 0 then
    errors.load("%s: KernelBench's eval_results.json is an object: {\"<problem_id>\": [sample, ...]}", file)
  end
  local lookup = suite_problems(ctx.suite)
  local rows, keys = {}, {}
  for k in pairs(t) do keys[#keys + 1] = k end
  for _, k in ipairs(id_sort(keys)) do
    local pwhere = ("problem %s"):format(json.encode(tostring(k)))
    local pid = math.tointeger(tonumber(k))
    if type(k) ~= "string" or not pid or not k:match("^%d+$") then
      bad(file, pwhere, "a problem's key is its id in the suite, an integer")
    end
    local p = lookup(pid)
    if not p then bad(file, pwhere, "the suite %s has no problem %d (--suite names the suite)", ctx.suite, pid) end
    local samples = t[k]
    if type(samples) ~= "table" then
      bad(file, pwhere, "the samples are an object {\"<sample_id>\": sample} or a list [sample, ...], got %s", kind_of(samples))
    end
    local list = #samples > 0 or next(samples) == nil
    if list then
      for i, s in ipairs(samples) do
        local sid = type(s) == "table" and math.tointeger(s.sample_id) or nil
        local where = pwhere .. (sid and (", sample %s"):format(json.encode(tostring(sid))) or (", entry %d"):format(i))
        rows[#rows + 1] = kernelbench_row(file, where, s, ctx, p, sid or (i - 1))
      end
    else
      local sks = {}
      for sk in pairs(samples) do sks[#sks + 1] = sk end
      for _, sk in ipairs(id_sort(sks)) do
        local where = ("%s, sample %s"):format(pwhere, json.encode(tostring(sk)))
        local sid = type(sk) == "string" and sk:match("^%d+$") and math.tointeger(tonumber(sk))
        if not sid then bad(file, where, "a sample's key is its id, an integer") end
        rows[#rows + 1] = kernelbench_row(file, where, samples[sk], ctx, p, sid)
      end
    end
  end
  return rows
end

-- ---- kreach's JSON lines ----

local KIND_OK = {
  integer = function(v) return math.type(v) == "integer" end,
  real = function(v) return type(v) == "number" end,
  bool = function(v) return type(v) == "boolean" end,
  text = function(v) return type(v) == "string" end,
  json = function() return true end,
}
local KIND_NAME = { integer = "an integer", real = "a number", bool = "a boolean", text = "a string" }

-- The columns an imported JSON line gives (the rest is the store's: id, run_id, the refs).
local SKIP = { id = true, run_id = true, problem_ref = true, candidate_ref = true }

-- jsonl(file, text, ctx) -> the rows of kreach's JSON lines: every column as it was exported,
-- the problem's and candidate's rows from their joined fields, the ids to keep where free
function M.jsonl(file, text, ctx)
  local rows, n = {}, 0
  for line in (text .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do
    n = n + 1
    local where = ("line %d"):format(n)
    if line:match("%S") then
      local ok, r = pcall(json.decode, line)
      if not ok then bad(file, where, "not JSON (%s)", errors.message(r)) end
      if type(r) ~= "table" then bad(file, where, "an evaluation is an object, got %s", kind_of(r)) end
      for _, k in ipairs{ "eval_key", "dtype", "verdict", "problem_name" } do
        if type(r[k]) ~= "string" or r[k] == "" then bad(file, where, "%s must be a non-empty string (got %s)", k, kind_of(r[k])) end
      end
      for _, f in ipairs(evaluation.FIELDS) do
        local v = r[f.name]
        if v ~= nil and not KIND_OK[f.kind](v) and not (f.kind == "real" and v == "NaN") then
          bad(file, where, "%s must be %s (got %s)", f.name, KIND_NAME[f.kind], kind_of(v))
        end
      end
      local row = { id = r.id, source_run = r.run_id }
      for _, f in ipairs(evaluation.columns()) do
        if not SKIP[f.name] then row[f.name] = r[f.name] end
      end
      for _, f in ipairs(evaluation.FIELDS) do
        if f.kind == "real" and row[f.name] == "NaN" then row[f.name] = nil end
      end
      row.problem = { id = r.problem_ref, suite = r.suite, problem_id = r.problem_id, name = r.problem_name,
                      path = r.path, file_hash = r.problem_hash or "unknown" }
      if r.candidate_hash ~= nil then
        row.candidate = { id = r.candidate_ref, hash = r.candidate_hash, path = r.candidate_path,
                          name = r.candidate_name, source = r.candidate_source or "", origin = r.origin,
                          imported = true }
      end
      -- a row imported before keeps where it came from; kreach's own becomes an imported row
      if not (r.measured_here == false and type(r.harness) == "string") then
        row.harness, row.source_file, row.source_hash = "kreach", ctx.file, ctx.source_hash
      end
      if row.model == nil then row.model = ctx.model end
      rows[#rows + 1] = row
    end
  end
  return rows
end

-- ---- the import ----

-- read(file, opts) -> { file =, format =, harness =, source_hash =, rows = {...}, hardware = }:
-- one file read and checked, nothing written. opts: format (nil: from the file), suite, model,
-- times (baseline_times' result).
function M.read(file, opts)
  local text = read_file(file)
  local format = opts.format or format_of(file, text)
  local ctx = { file = file, source_hash = util.hash(text), suite = opts.suite or M.DEFAULT_SUITE,
                model = opts.model, times = opts.times }
  local rows
  if format == "kernelbench" then rows = M.kernelbench(file, text, ctx)
  elseif format == "jsonl" then rows = M.jsonl(file, text, ctx)
  else errors.usage("unknown import format '%s' (%s)", tostring(format), table.concat(M.FORMATS, ", ")) end
  return { file = file, format = format, harness = format == "jsonl" and "kreach" or "kernelbench",
           source_hash = ctx.source_hash, rows = rows, hardware = ctx.hardware }
end

-- import(db, files, opts) -> { { file =, format =, evaluations =, runs = {ids} }, ... }: every
-- file read and checked first, then written in one transaction of db (a writable store). A
-- file imported before (an import run with its hash) is refused, as are two files the same.
-- opts: format, suite, model, baseline_times (a path).
-- prepare(files, opts) -> what import writes: every file read and checked, nothing opened
-- for writing (a command calls it before it opens the database, so that a malformed file
-- leaves not even a new empty database behind).
function M.prepare(files, opts)
  opts = opts or {}
  local times = opts.baseline_times and M.baseline_times(opts.baseline_times) or nil
  local read, seen = { prepared = true }, {}
  for i, f in ipairs(files) do
    local r = M.read(f, { format = opts.format, suite = opts.suite, model = opts.model, times = times })
    if seen[r.source_hash] then
      errors.usage("%s: the same as %s (imported once)", f, seen[r.source_hash])
    end
    seen[r.source_hash] = f
    read[i] = r
  end
  return read
end

-- files: paths, or what prepare(files, opts) returned
function M.import(db, files, opts)
  opts = opts or {}
  local read = files.prepared and files or M.prepare(files, opts)
  return db:transaction(function()
    local out = {}
    for i, r in ipairs(read) do
      local prior = db:latest_run{ config_hash = "import:" .. r.source_hash }
      if prior then
        errors.usage("%s was imported already (run %d of %s holds it; its hash is %s)", r.file, prior.id, db.path, r.source_hash)
      end
      local function new_run(id)
        return db:import_run{ id = id, command = { "kreach", "results", "import", r.file },
          config_hash = "import:" .. r.source_hash,
          config = { import = { file = r.file, hash = r.source_hash, format = r.format, harness = r.harness,
                                suite = r.format == "kernelbench" and (opts.suite or M.DEFAULT_SUITE) or nil,
                                model = opts.model, baseline_times = opts.baseline_times, source_run = id } },
          device = r.hardware and { name = r.hardware } or nil }
      end
      local runs, run_ids, one = {}, {}, nil
      for _, row in ipairs(r.rows) do
        if row.source_run ~= nil then
          if not runs[row.source_run] then
            runs[row.source_run] = new_run(row.source_run)
            run_ids[#run_ids + 1] = runs[row.source_run]
          end
          row.run_id = runs[row.source_run]
        else
          if not one then one = new_run(nil); run_ids[#run_ids + 1] = one end
          row.run_id = one
        end
        row.source_run = nil
        db:import_evaluation(row)
      end
      if #r.rows == 0 then run_ids[1] = new_run(nil) end
      out[i] = { file = r.file, format = r.format, harness = r.harness, source_hash = r.source_hash,
                 evaluations = #r.rows, runs = run_ids }
    end
    return out
  end)
end

-- report(res, db, write): what `kreach results import` prints, a line per file imported
function M.report(res, db, write)
  for _, r in ipairs(res) do
    local ids = {}
    for i, id in ipairs(r.runs) do ids[i] = tostring(id) end
    write(("imported %d evaluation%s from %s (%s, hash %s) into %s as run%s %s\n"):format(r.evaluations,
      r.evaluations == 1 and "" or "s", r.file, r.harness, r.source_hash, db, #ids == 1 and "" or "s",
      table.concat(ids, ", ")))
  end
end


-- into_temporary(paths, fn) -> what fn(db_path) returns: the files imported, as `kreach results
-- import` imports them, into a results database in a new private folder, which is removed
-- afterwards whether fn returns or raises (its error raised again). For the readers of a data
-- folder: experiments/paper/run.lua and kreach report --data.
function M.into_temporary(paths, fn)
  local tmp = assert(atomic.tmpdir())
  local db_path = tmp .. "/data.db"
  local res = table.pack(pcall(function()
    local prepared = M.prepare(paths, {})
    local db = assert(store.open(db_path))
    local ok, err = pcall(M.import, db, prepared, {})
    db:close()
    if not ok then error(err, 0) end
    return fn(db_path)
  end))
  atomic.remove_tree(tmp)
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end


-- descriptions(dir) -> { [file] = words }: a data folder's sources.tsv ("file<TAB>words" a line,
-- # comments), which names each file in the tables and captions; {} without one
function M.descriptions(dir)
  local d = {}
  local f = io.open(dir .. "/sources.tsv", "rb")
  if not f then return d end
  for line in f:lines() do
    if not line:match("^#") then
      local file, what = line:match("^([^\t]+)\t(.+)$")
      if file then d[file] = what end
    end
  end
  f:close()
  return d
end

return M
