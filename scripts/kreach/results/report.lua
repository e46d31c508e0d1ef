-- kreach.results.report: what is in a results database, written out for other tools: JSON lines (every
-- column), CSV (the flat columns) and KernelBench's eval_results.json layout; and the short
-- text tables of `kreach results list` and `runs`. Every writer takes the store's decoded rows
-- and a write(string) function, so a caller chooses the destination; `kreach results
-- generations`' table too, and read(db, what), what each `kreach results` subcommand reads. Part
-- of the results stage (kreach.results.store's header says what it owns and may require).
local evaluation = require "kreach.results.evaluation"
local store = require "kreach.results.store"
local text = require "kreach.text"
-- exports are outputs: kreach.json with non-finite numbers as the strings "NaN", "Infinity"
local json = require "kreach.json"

local M = {}

M.FORMATS = { "jsonl", "csv", "kernelbench" }

-- ---- JSON lines ----

-- One object per evaluation: every column of the evaluation, JSON columns decoded, the problem's
-- and candidate's fields joined (see kreach.results.store's evaluations()). Keys are sorted.
function M.jsonl(rows, write)
  for _, r in ipairs(rows) do write(json.encode(r), "\n") end
  return #rows
end

-- ---- CSV ----

-- The columns: kreach.results.evaluation's fields marked csv, { header, get(row) }.
M.CSV_COLUMNS = evaluation.csv_columns()

-- RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. Text
-- a spreadsheet would run as a formula (a candidate's name "=HYPERLINK(...)", a reason that
-- starts with "-") gets a leading apostrophe (kreach.text.csv_cell); numbers are written as
-- numbers, so a negative one stays a number.
local function csv_field(v)
  if v == nil then return "" end
  local s
  if type(v) == "number" then s = json.encode(v, { nonfinite = "token" }) -- NaN, Infinity: bare in CSV
  elseif type(v) == "boolean" then s = v and "true" or "false"
  else s = text.csv_cell(tostring(v)) end
  if s:find('[,"\r\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end
M.csv_field = csv_field

function M.csv(rows, write)
  local head = {}
  for i, c in ipairs(M.CSV_COLUMNS) do head[i] = c[1] end
  write(table.concat(head, ","), "\n")
  for _, r in ipairs(rows) do
    local f = {}
    for i, c in ipairs(M.CSV_COLUMNS) do
      f[i] = csv_field(c[2](r))
    end
    write(table.concat(f, ","), "\n")
  end
  return #rows
end

-- ---- KernelBench ----

local NO_COMPILE = { compile_error = true, invalid_candidate = true }

-- compiled(r) -> KernelBench's `compiled` for an evaluation row: false for compile errors and
-- invalid candidates, and for a timeout while the candidate was still being loaded or built
-- (the worker's phase 'load' or 'compile', or a KernelBench-format candidate's Python worker
-- "while loading it", where its load_inline builds run); true otherwise.
local function compiled(r)
  if NO_COMPILE[r.verdict] then return false end
  if r.verdict == "timeout" then
    local why = tostring(r.reason or "")
    local phase = why:match("^phase '([^']*)' ran past")
    if phase == "load" or phase == "compile" then return false end
    if why:find("the Python worker did not answer within [%d%.]+ s while loading it") then return false end
  end
  return true
end

local function population_std(xs)
  local n = #xs
  if n == 0 then return nil end
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  local mean, ss = s / n, 0
  for _, x in ipairs(xs) do ss = ss + (x - mean) ^ 2 end
  return math.sqrt(ss / n)
end

local function float(x) if x == nil then return nil end return x + 0.0 end

-- One KernelBench sample from an evaluation row (nil for a baseline-only row). `hardware` is the
-- device name of the row's run.
function M.kernelbench_sample(r, hardware)
  -- a baseline timed alone has no candidate; a skipped candidate was never judged (kreach could
  -- not: no PyTorch, a mode it cannot time in), which KernelBench has no way to say
  if r.candidate_ref == nil or r.verdict == "skipped" then return nil end
  local null = json.null
  local tc = type(r.timing) == "table" and r.timing.candidate or nil
  local summary = type(tc) == "table" and tc.summary or nil
  local runtime = (summary and summary.median) or r.candidate_ms or -1.0
  local stats = {}
  if type(summary) == "table" then
    -- from the samples kreach took; an imported row has none, only the std its harness gave
    local std = type(tc.samples) == "table" and population_std(tc.samples) or summary.std
    stats = { mean = float(summary.mean) or null, std = float(std) or null, min = float(summary.min) or null,
              max = float(summary.max) or null, num_trials = summary.n or (tc.samples and #tc.samples) or null,
              hardware = hardware or null, device = "cuda:0" }
  end
  return {
    sample_id = (type(r.origin) == "table" and math.tointeger(r.origin.sample)) or 0,
    compiled = compiled(r),
    correctness = r.verdict == "correct",
    -- KernelBench states speedups against PyTorch eager (ref_runtime / runtime): those are
    -- `speedup` and `ref_runtime` here, from the PyTorch times kreach measured in the same run
    -- (absent where PyTorch was not timed); kreach's own baseline comes beside them
    metadata = { verdict = r.verdict, reason = r.reason, detail = r.detail, dtype = r.dtype,
                 kreach_eval_id = r.id, kreach_run_id = r.run_id, problem = r.problem_name,
                 candidate_hash = r.candidate_hash, speedup = r.speedup_pytorch, ref_runtime = r.pytorch_ms,
                 speedup_compiled = r.speedup_compiled, ref_runtime_compiled = r.pytorch_compiled_ms,
                 speedup_vs_kreach_baseline = r.speedup, baseline_ms = r.baseline_ms },
    runtime = float(runtime),
    runtime_stats = stats,
  }
end

-- eval_results.json: { "<problem_id>": [ sample, ... ] }, problem ids in numeric order, one
-- sample a line. `runs` maps a run id to its row (for the device name). Baseline-only and skipped rows are
-- left out. Returns the number of samples written.
function M.kernelbench(rows, runs, write)
  local by, keys = {}, {}
  for _, r in ipairs(rows) do
    local run = runs and runs[r.run_id]
    local hw = run and type(run.device) == "table" and run.device.name or nil
    local s = M.kernelbench_sample(r, hw)
    if s then
      local k = tostring(r.problem_id or r.problem_name)
      if not by[k] then by[k] = {}; keys[#keys + 1] = k end
      table.insert(by[k], s)
    end
  end
  table.sort(keys, function(a, b)
    local na, nb = tonumber(a), tonumber(b)
    if na and nb then return na < nb end
    if na or nb then return na ~= nil end
    return a < b
  end)
  local n = 0
  write("{")
  for i, k in ipairs(keys) do
    table.sort(by[k], function(a, b)
      if a.sample_id ~= b.sample_id then return a.sample_id < b.sample_id end
      return a.metadata.kreach_eval_id < b.metadata.kreach_eval_id
    end)
    write(i > 1 and ",\n" or "\n", json.encode(k), ": [")
    for j, s in ipairs(by[k]) do
      write(j > 1 and ",\n  " or "\n  ", json.encode(s))
      n = n + 1
    end
    write("\n]")
  end
  write(#keys > 0 and "\n}\n" or "}\n")
  return n
end

-- fetch(db, {run_id =}) -> what an export reads from the database: { rows =, runs = {id ->
-- run} }. Reading is kept apart from writing so that a reader can read again (store.read).
function M.fetch(db, opts)
  opts = opts or {}
  local runs = {}
  for _, r in ipairs(db:runs()) do runs[r.id] = r end
  return { rows = db:evaluations{ run_id = opts.run_id }, runs = runs }
end

-- write(format, data, write) -> number of records written; data from fetch
function M.write(format, data, write)
  if format == "jsonl" then return M.jsonl(data.rows, write)
  elseif format == "csv" then return M.csv(data.rows, write)
  elseif format == "kernelbench" then return M.kernelbench(data.rows, data.runs, write)
  end
  error(("unknown export format '%s' (jsonl, csv, kernelbench)"):format(tostring(format)), 2)
end

-- export(db, format, {run_id =}, write) -> number of records written
function M.export(db, format, opts, write)
  return M.write(format, M.fetch(db, opts), write)
end

-- read(db, what, {run_id =}) -> what `kreach results <what>` shows, read from the database:
-- export: fetch's { rows, runs }; list: the evaluations; generations: db:generation_list();
-- runs: { runs = db:runs(), counts = run id -> number of evaluations }
function M.read(db, what, opts)
  opts = opts or {}
  if what == "export" then return M.fetch(db, { run_id = opts.run_id })
  elseif what == "list" then return db:evaluations{ run_id = opts.run_id }
  elseif what == "generations" then return db:generation_list() end
  return { runs = db:runs(), counts = db:run_counts() }
end

-- ---- text tables ----

-- A cell of a text table: made safe for a terminal (kreach.text.clean: a candidate's file name
-- or reason holding ESC or CR is shown as "\x1b", never obeyed), then cut to n bytes.
local function cut(s, n)
  s = text.clean(tostring(s or "-"), 4096)
  if #s > n then return s:sub(1, n - 1) .. "~" end
  return s
end

local function fmt_speedup(r)
  if r.speedup == nil then return "-" end
  if r.speedup_lo and r.speedup_hi then
    return ("%.3g [%.3g, %.3g]"):format(r.speedup, r.speedup_lo, r.speedup_hi)
  end
  return ("%.3g"):format(r.speedup)
end

function M.list(rows, write)
  write(("%6s  %-36s %-20s %-5s %-18s %s\n"):format("id", "problem", "candidate", "dtype", "verdict", "speedup"))
  for _, r in ipairs(rows) do
    local cand = r.candidate_name or r.candidate_path or (r.candidate_hash and r.candidate_hash:sub(1, 12))
      or "(baseline)"
    local v = tostring(r.verdict or "-") .. (r.reason and ("/" .. tostring(r.reason)) or "")
    write(("%6d  %-36s %-20s %-5s %-18s %s\n"):format(r.id, cut(r.problem_name, 36), cut(cand, 20),
      cut(r.dtype, 5), cut(v, 18), fmt_speedup(r)))
  end
  return #rows
end

-- The rows of `list` and `runs` as one JSON object (--json): { "<key>": [ ... ] }, keys sorted
-- within each row; an empty list is written as [].
local function json_list(key, items, write)
  write(json.encode({ [key] = json.array(items) }), "\n")
end

function M.list_json(rows, write)
  local items = {}
  for i, r in ipairs(rows) do items[i] = evaluation.pick(r, "list") end
  json_list("evaluations", items, write)
  return #rows
end

function M.runs_json(runs, counts, write)
  local items = {}
  for i, r in ipairs(runs) do
    items[i] = { id = r.id, status = r.status, started_at = r.started_at, finished_at = r.finished_at,
                 evaluations = counts[r.id] or 0, config_hash = r.config_hash,
                 command = type(r.command) == "table" and r.command or nil }
  end
  json_list("runs", items, write)
  return #runs
end

-- runs: rows of db:runs(); counts: run id -> number of evaluations
function M.runs(runs, counts, write)
  write(("%4s  %-9s %-20s %-20s %6s  %-12s %s\n"):format("id", "status", "started_at", "finished_at",
    "evals", "config", "command"))
  for _, r in ipairs(runs) do
    local cmd = "-"
    if type(r.command) == "table" then
      local parts = {}
      for i, a in ipairs(r.command) do parts[i] = tostring(a) end
      cmd = table.concat(parts, " ")
    end
    write(("%4d  %-9s %-20s %-20s %6d  %-12s %s\n"):format(r.id, cut(r.status, 9), cut(r.started_at, 20),
      cut(r.finished_at, 20), counts[r.id] or 0, cut(r.config_hash, 12), cut(cmd, 60)))
  end
  return #runs
end

-- generations(rows, db, write): the rows of db:generation_list() as a table, one line each; an
-- empty table says so and how one is filled (db: the database's path)
function M.generations(rows, db, write)
  if #rows == 0 then
    write(("no generations stored in %s (kreach generate stores each request it makes there)\n"):format(db))
    return 0
  end
  write(("%5s  %-20s %-24s %-28s %6s %4s  %-9s %8s %8s %9s  %s\n"):format("id", "created_at", "model", "problem",
    "sample", "turn", "status", "in_tok", "out_tok", "cost_usd", "candidate"))
  for _, r in ipairs(rows) do
    local prob = r.problem_name or (r.suite and r.problem_id and ("%s/%s"):format(r.suite, r.problem_id)) or "-"
    write(("%5d  %-20s %-24s %-28s %6s %4s  %-9s %8s %8s %9s  %s\n"):format(r.id, cut(r.created_at, 20),
      cut(r.model, 24), cut(prob, 28), cut(r.sample, 6), cut(r.turn, 4), cut(r.status, 9), cut(r.input_tokens, 8),
      cut(r.output_tokens, 8), r.cost_usd and ("%.4f"):format(r.cost_usd) or "-",
      cut(r.candidate_file or (r.error and ("error: " .. r.error)), 60)))
  end
  return #rows
end

-- generations_json(rows, db, write): { db =, generations = [...] } on one line (--json)
function M.generations_json(rows, db, write)
  write(json.encode({ db = db, generations = json.array(rows) }), "\n")
  return #rows
end

return M
