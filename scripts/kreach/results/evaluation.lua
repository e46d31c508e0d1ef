-- kreach.results.evaluation: the one owner of an evaluation record's fields. An evaluation is a flat
-- table (a verdict with its reason, the measurements, the check's and the timing's results, and
-- the problem and candidate it was of); FIELDS below lists every field once, and everything
-- else is derived from that list: the evaluations table's columns and its INSERT (kreach.results.store),
-- the decoding of stored rows, the record made from a worker's results, the brief row of
-- `eval --json` and the text report, and the CSV columns of `results export`. Adding a
-- measurement is one entry here: its name, its kind, and `from` (how the timing result gives it).
local json = require "kreach.json"
local stats = require "kreach.stats"
local text = require "kreach.text"

local M = {}

local function measured(t) return t and (t.candidate or t.baseline) or nil end

-- name: the field; kind: "integer", "real", "text", "bool" (stored as 0 or 1) or "json" (stored
-- as text through kreach.json, non-finite numbers as bare tokens, read back exactly);
-- column: stored in the evaluations table, with these constraints after the type;
-- joined: read from the problems (p) or candidates (c) row the evaluation refers to;
-- from: a measurement, taken from a timing worker's result (nil when it has none);
-- brief: in the brief row (eval --json, reports); list: in `results list --json`; csv: in `results export --format csv`, under this
-- header (true: the field's name), csv_get reading the value when it is not the field itself.
M.FIELDS = {
  { name = "id", kind = "integer", list = true, column = "INTEGER PRIMARY KEY", brief = true, csv = true },
  { name = "run_id", kind = "integer", list = true, column = "INTEGER NOT NULL REFERENCES runs(id)", csv = true },
  { name = "problem_ref", kind = "integer", column = "INTEGER NOT NULL REFERENCES problems(id)" },
  { name = "candidate_ref", kind = "integer", column = "INTEGER REFERENCES candidates(id)" },
  { name = "suite", kind = "text", joined = "p.suite", csv = true },
  { name = "problem_id", kind = "integer", list = true, joined = "p.problem_id", brief = true, csv = true },
  { name = "problem_name", kind = "text", list = true, joined = "p.name", brief = true, csv = "problem" },
  { name = "path", kind = "text", joined = "p.path" },
  { name = "candidate_name", kind = "text", list = true, joined = "c.name",
    csv = "candidate", csv_get = function(r) return r.candidate_name or r.candidate_path end },
  { name = "candidate_path", kind = "text", list = true, joined = "c.path", brief = true },
  { name = "candidate_hash", kind = "text", list = true, joined = "c.hash", csv = true },
  { name = "origin", kind = "json", joined = "c.origin" },
  { name = "eval_key", kind = "text", column = "TEXT NOT NULL" },
  { name = "dtype", kind = "text", list = true, column = "TEXT NOT NULL", brief = true, csv = true },
  { name = "sizes", kind = "json", column = "TEXT", brief = true },
  { name = "verdict", kind = "text", list = true, column = "TEXT NOT NULL", brief = true, csv = true },
  { name = "reason", kind = "text", list = true, column = "TEXT", brief = true, csv = true },
  { name = "detail", kind = "text", column = "TEXT", brief = true },
  -- KernelBench's own test beside kreach's verdict: "pass" when its allclose (atol = rtol =
  -- KernelBench's tolerance of the dtype) held for every output of every trial the check
  -- compared, else "fail"; derived from the check's result (nil when nothing was compared)
  { name = "kernelbench", kind = "text", list = true, brief = true, csv = "kernelbench_allclose",
    derive = function(r) return M.kernelbench_verdict(r.check_result) end },
  { name = "baseline_ms", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) return t.baseline and t.baseline.summary.median end },
  { name = "candidate_ms", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) return t.candidate and t.candidate.summary.median end },
  { name = "speedup", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) return t.speedup and t.speedup.ratio end },
  { name = "speedup_lo", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) return t.speedup and t.speedup.lo end },
  { name = "speedup_hi", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) return t.speedup and t.speedup.hi end },
  -- PyTorch timed in the same run (docs/timing.md, "PyTorch in the same run"): eager, and
  -- torch.compile'd with --torch-compile; the candidate's speedup against each (KernelBench's
  -- speedup is the one against eager), and the baseline's time over eager's (below 1: kreach's
  -- baseline is faster than PyTorch)
  { name = "pytorch_ms", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) return t.pytorch and t.pytorch.summary.median end },
  { name = "pytorch_compiled_ms", kind = "real", column = "REAL", brief = true, csv = true,
    from = function(t) return t.pytorch_compiled and t.pytorch_compiled.summary.median end },
  { name = "speedup_pytorch", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) return t.ratios and t.ratios.speedup_pytorch and t.ratios.speedup_pytorch.ratio end },
  { name = "speedup_pytorch_lo", kind = "real", column = "REAL", brief = true, csv = true,
    from = function(t) return t.ratios and t.ratios.speedup_pytorch and t.ratios.speedup_pytorch.lo end },
  { name = "speedup_pytorch_hi", kind = "real", column = "REAL", brief = true, csv = true,
    from = function(t) return t.ratios and t.ratios.speedup_pytorch and t.ratios.speedup_pytorch.hi end },
  { name = "speedup_compiled", kind = "real", column = "REAL", brief = true, csv = true,
    from = function(t) return t.ratios and t.ratios.speedup_compiled and t.ratios.speedup_compiled.ratio end },
  { name = "speedup_compiled_lo", kind = "real", column = "REAL", brief = true, csv = true,
    from = function(t) return t.ratios and t.ratios.speedup_compiled and t.ratios.speedup_compiled.lo end },
  { name = "speedup_compiled_hi", kind = "real", column = "REAL", brief = true, csv = true,
    from = function(t) return t.ratios and t.ratios.speedup_compiled and t.ratios.speedup_compiled.hi end },
  { name = "baseline_vs_pytorch", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) return t.ratios and t.ratios.baseline_vs_pytorch and t.ratios.baseline_vs_pytorch.ratio end },
  -- of the kernel under test: the candidate's, or the baseline's when it is timed alone
  { name = "sol_fraction", kind = "real", list = true, column = "REAL", brief = true, csv = true,
    from = function(t) local m = measured(t); return m and m.sol and m.sol.fraction end },
  { name = "throttled", kind = "bool", list = true, column = "INTEGER", brief = true, csv = true,
    from = function(t) if t.baseline then return t.throttled or false end end },
  -- how the candidate's time was measured (kreach.candidate.python.METHOD, kreach.judge.measure.LUA_METHOD),
  -- how many of its timed calls queued work on other streams than the caller's (their times are
  -- the all-streams span), and the timing's warnings; derived from the stored timing result
  { name = "time_method", kind = "text", brief = true, csv = true,
    derive = function(r) return M.candidate_method(r.timing, "method") end },
  { name = "other_stream_calls", kind = "integer", brief = true, csv = true,
    derive = function(r) return M.candidate_method(r.timing, "other_streams") end },
  { name = "timing_warnings", kind = "json", brief = true, csv = true,
    csv_get = function(r) return r.timing_warnings and table.concat(r.timing_warnings, "; ") or nil end,
    derive = function(r)
      local w = type(r.timing) == "table" and r.timing.warnings
      return type(w) == "table" and #w > 0 and w or nil
    end },
  { name = "check_result", kind = "json", column = "TEXT" },
  { name = "timing", kind = "json", column = "TEXT" },
  { name = "wall_s", kind = "real", column = "REAL", brief = true, csv = true },
  { name = "started_at", kind = "text", column = "TEXT" },
  { name = "finished_at", kind = "text", list = true, column = "TEXT", csv = true },
  -- where an evaluation came from (issue 36; schema version 4): the model that wrote the
  -- candidate (its origin's model when kreach generate wrote it, or `kreach results import
  -- --model`); harness, the harness that measured it when it was imported ("kernelbench",
  -- "kreach"; nil: measured by kreach in the run it points at); measured_here, false for an
  -- imported row (true for kreach's own); source_file and source_hash, the imported file as it
  -- was named and its hash (kreach.results.import). The problem's and candidate's stored rows
  -- come with it, so that an export holds all an import needs: problem_hash and
  -- candidate_source.
  { name = "model", kind = "text", list = true, column = "TEXT", csv = true },
  { name = "harness", kind = "text", list = true, column = "TEXT", csv = true },
  { name = "measured_here", kind = "bool", list = true, column = "INTEGER", csv = true },
  { name = "source_file", kind = "text", column = "TEXT", csv = true },
  { name = "source_hash", kind = "text", column = "TEXT" },
  { name = "problem_hash", kind = "text", joined = "p.file_hash" },
  { name = "candidate_source", kind = "text", joined = "c.source" },
}

local BY_NAME = {}
for _, f in ipairs(M.FIELDS) do BY_NAME[f.name] = f end
M.BY_NAME = BY_NAME

local function now() return os.date("!%Y-%m-%dT%H:%M:%SZ") end

-- candidate_method(timing, key) -> the field `key` of how the candidate's time was measured
-- (timing.candidate.method), or nil
function M.candidate_method(t, key)
  local m = type(t) == "table" and type(t.candidate) == "table" and t.candidate.method
  if type(m) ~= "table" then return nil end
  return m[key]
end

-- ---- records ----

-- new(item, o) -> a record being made: the problem and candidate it is of (item, from the
-- campaign's plan: problem_path, problem_id, problem_name, suite, problem_hash; candidate_path,
-- candidate_hash, origin, candidate_source; eval_key), the configuration (o.dtype, o.sizes) and
-- its start. `problem` and `candidate` are the rows kreach.results.store refers to.
function M.new(item, o)
  local rec = {
    eval_key = item.eval_key, dtype = o.dtype, sizes = o.sizes or {}, started_at = now(),
    suite = item.suite, problem_id = item.problem_id, problem_name = item.problem_name,
    path = item.problem_path, candidate_path = item.candidate_path, candidate_hash = item.candidate_hash,
    origin = item.origin,
    problem = { suite = item.suite, problem_id = item.problem_id, name = item.problem_name,
                path = item.problem_path, file_hash = item.problem_hash },
  }
  if item.candidate_path then
    rec.candidate_name = item.candidate_path:match("([^/]+)$") or item.candidate_path
    rec.candidate = { hash = item.candidate_hash, path = item.candidate_path, name = rec.candidate_name,
                      source = item.candidate_source, origin = item.origin }
  end
  return rec
end

-- finish(rec, {verdict =, check =, timing =, wall_s =}) -> rec: the verdict (a kreach.verdict),
-- the check's and the timing's results as the workers gave them, and every measurement the
-- timing result holds (FIELDS' `from`).
function M.finish(rec, r)
  local v = r.verdict
  rec.verdict, rec.reason = v.verdict, v.reason
  rec.detail = type(v.detail) == "table" and json.encode(v.detail) or v.detail
  rec.check_result, rec.timing = r.check, r.timing
  for _, f in ipairs(M.FIELDS) do
    if f.derive then rec[f.name] = f.derive(rec) end
  end
  if type(r.timing) == "table" then
    for _, f in ipairs(M.FIELDS) do
      if f.from then rec[f.name] = f.from(r.timing) end
    end
  end
  rec.finished_at = now()
  rec.wall_s = r.wall_s
  return rec
end

-- brief(rec) -> the fields marked brief (what `eval --json` lists per evaluation), and
-- `reused` when the evaluation was found stored rather than made by this run.
function M.brief(rec)
  local b = M.pick(rec, "brief")
  b.reused = rec.reused or nil
  return b
end

-- pick(rec, flag) -> the fields of rec marked with flag ("brief", "list").
function M.pick(rec, flag)
  local t = {}
  for _, f in ipairs(M.FIELDS) do
    if f[flag] then t[f.name] = rec[f.name] end
  end
  return t
end

-- ---- storage (kreach.results.store) ----

-- The fields that are columns of the evaluations table, in order.
function M.columns()
  local c = {}
  for _, f in ipairs(M.FIELDS) do if f.column then c[#c + 1] = f end end
  return c
end

-- The CREATE TABLE statement of the evaluations table.
function M.create_sql()
  local cols = {}
  for _, f in ipairs(M.columns()) do cols[#cols + 1] = f.name .. " " .. f.column end
  return "CREATE TABLE evaluations(" .. table.concat(cols, ", ") .. ");"
end

local encode_json = function(v) return json.encode(v, { nonfinite = "token" }) end

local function encode(f, v)
  if v == nil or v == json.null then return nil end
  if f.kind == "json" then return encode_json(v) end
  if f.kind == "bool" then return v and 1 or 0 end
  if f.kind == "text" and type(v) == "table" then return encode_json(v) end
  return v
end

-- insert_sql(rec) -> the INSERT statement and its values (every column but id; problem_ref and
-- candidate_ref as rec has them, set by the store).
-- With keep_id, rec.id is inserted too (kreach results import keeps an imported row's id where
-- it is free).
function M.insert_sql(rec, keep_id)
  local names, marks, values = {}, {}, {}
  for _, f in ipairs(M.columns()) do
    if f.name ~= "id" or (keep_id and rec.id ~= nil) then
      local n = #names + 1
      names[n], marks[n], values[n] = f.name, "?", encode(f, rec[f.name]) -- values may hold nils
    end
  end
  return ("INSERT INTO evaluations(%s) VALUES (%s)"):format(table.concat(names, ", "), table.concat(marks, ", ")),
    values, #names
end

-- The SELECT of stored evaluations with their joined fields (add WHERE and ORDER BY).
function M.select_sql()
  local cols = { "e.*" }
  for _, f in ipairs(M.FIELDS) do
    if f.joined then cols[#cols + 1] = f.joined .. " AS " .. f.name end
  end
  return "SELECT " .. table.concat(cols, ", ")
    .. " FROM evaluations e JOIN problems p ON p.id = e.problem_ref LEFT JOIN candidates c ON c.id = e.candidate_ref"
end

-- decode(row [, bad]) -> the stored row as a record: JSON fields decoded, booleans as booleans.
-- A JSON field that does not decode raises; with bad, a function(name, why), it is left out
-- instead and bad is told.
function M.decode(row, bad)
  if not row then return nil end
  for _, f in ipairs(M.FIELDS) do
    local v = row[f.name]
    if v ~= nil then
      if f.kind == "json" then
        if bad then
          local ok, x = pcall(json.decode, v)
          row[f.name] = ok and x or nil
          if not ok then bad(f.name, x) end
        else
          row[f.name] = json.decode(v)
        end
      elseif f.kind == "bool" then row[f.name] = v ~= 0 end
    end
  end
  for _, f in ipairs(M.FIELDS) do
    if f.derive then row[f.name] = f.derive(row) end
  end
  return row
end

-- kernelbench_verdict(check_result) -> "pass", "fail", or nil when no trial compared outputs:
-- KernelBench's allclose over the trials a check made (kreach.judge.check's trial.kernelbench).
function M.kernelbench_verdict(chk)
  if type(chk) ~= "table" or type(chk.trials) ~= "table" then return nil end
  local seen, pass = false, true
  for _, t in ipairs(chk.trials) do
    if type(t) == "table" and type(t.kernelbench) == "table" then
      seen = true
      pass = pass and t.kernelbench.pass == true
    end
  end
  if not seen then return nil end
  return pass and "pass" or "fail"
end

-- ---- exports ----

-- The CSV columns: { header, get(record) }, in FIELDS' order.
function M.csv_columns()
  local cols = {}
  for _, f in ipairs(M.FIELDS) do
    if f.csv then
      local name = f.name
      local get = f.csv_get or function(r) return r[name] end
      cols[#cols + 1] = { f.csv == true and name or f.csv, get }
    end
  end
  return cols
end

-- ---- the text report ----

local function fmt_ms(x) return x and ("%.4g"):format(x) or "-" end

-- The columns of the text table of evaluations: { header, cell(record) -> string, right-aligned }.
-- Reasons and file names can hold a candidate's words: they reach the terminal cleaned.
M.REPORT = {
  { "problem", function(r) return ("%03d %s"):format(r.problem_id or 0, (r.problem_name or "?"):sub(1, 28)) end },
  { "candidate", function(r)
      return text.clean((r.candidate_path or "-"):match("([^/]+)$") or "-", 256)
    end },
  { "verdict", function(r)
      local v = r.verdict .. (r.reason and r.verdict ~= "correct" and (" (" .. r.reason .. ")") or "")
      return text.clean(v, 256):sub(1, 40)
    end },
  { "KB", function(r) return r.kernelbench or "-" end, false, optional = true },
  { "base ms", function(r) return fmt_ms(r.baseline_ms) end, true },
  { "cand ms", function(r) return fmt_ms(r.candidate_ms) end, true },
  { "speedup [95% CI]", function(r)
      if not r.speedup then return "-" end
      return ("%.3fx [%.3f, %.3f]"):format(r.speedup, r.speedup_lo or 0 / 0, r.speedup_hi or 0 / 0)
    end, true },
  -- PyTorch's, when it was timed (columns all "-" are left out of the table)
  { "torch ms", function(r) return fmt_ms(r.pytorch_ms) end, true, optional = true },
  { "vs torch [95% CI]", function(r)
      if not r.speedup_pytorch then return "-" end
      return ("%.3fx [%.3f, %.3f]"):format(r.speedup_pytorch, r.speedup_pytorch_lo or 0 / 0, r.speedup_pytorch_hi or 0 / 0)
    end, true, optional = true },
  { "compiled ms", function(r) return fmt_ms(r.pytorch_compiled_ms) end, true, optional = true },
  { "vs compiled [95% CI]", function(r)
      if not r.speedup_compiled then return "-" end
      return ("%.3fx [%.3f, %.3f]"):format(r.speedup_compiled, r.speedup_compiled_lo or 0 / 0, r.speedup_compiled_hi or 0 / 0)
    end, true, optional = true },
  { "%SOL", function(r) return r.sol_fraction and ("%.0f%%"):format(100 * r.sol_fraction) or "-" end, true },
  { "", function(r) return (r.throttled and "throttled" or "") .. (r.reused and " stored" or "") end },
}

-- cells(rec) -> the report's cells of one record, by column header.
function M.cells(rec)
  local c = {}
  for i, col in ipairs(M.REPORT) do c[i] = col[2](rec) end
  return c
end

-- table_text(records) -> the text table (header and one line per record).
function M.table_text(records)
  local cols = {}
  for _, col in ipairs(M.REPORT) do
    local keep = not col.optional
    for _, r in ipairs(records) do
      if keep then break end
      keep = col[2](r) ~= "-"
    end
    if keep then cols[#cols + 1] = col end
  end
  local rows = { {} }
  for i, col in ipairs(cols) do rows[1][i] = col[1] end
  for _, r in ipairs(records) do
    local c = {}
    for i, col in ipairs(cols) do c[i] = col[2](r) end
    rows[#rows + 1] = c
  end
  local w = {}
  for _, c in ipairs(rows) do for i, x in ipairs(c) do w[i] = math.max(w[i] or 0, #x) end end
  local out = {}
  for _, c in ipairs(rows) do
    local parts = {}
    for i, x in ipairs(c) do
      parts[i] = cols[i][3] and (" "):rep(w[i] - #x) .. x or x .. (" "):rep(w[i] - #x)
    end
    out[#out + 1] = (table.concat(parts, "  "):gsub("%s+$", ""))
  end
  return table.concat(out, "\n") .. "\n"
end

-- ---- the summary of a set of evaluations ----

M.FAST_P = { 0, 0.5, 0.8, 1, 1.5, 2 }

-- The references a speedup is stated against: kreach's baseline, PyTorch eager (KernelBench's
-- and the study's reference: its fast_p is the one KernelBench defines) and torch.compile.
M.REFERENCES = {
  { key = "baseline", field = "speedup", lo = "speedup_lo", title = "kreach's baseline" },
  { key = "pytorch", field = "speedup_pytorch", lo = "speedup_pytorch_lo", title = "PyTorch eager (KernelBench's fast_p)" },
  { key = "compiled", field = "speedup_compiled", lo = "speedup_compiled_lo", title = "torch.compile" },
}

-- One reference's figures over the rows: a win is a correct candidate whose speedup interval
-- lies above 1; fast_p counts correct candidates faster than p times the reference; both are
-- fractions of all evaluated candidates (KernelBench's fast_p). `measured` counts the correct
-- candidates with a speedup against this reference.
local function against(rows, ref)
  local n, wins, speedups = #rows, 0, {}
  for _, r in ipairs(rows) do
    if r.verdict == "correct" and r[ref.field] then
      speedups[#speedups + 1] = r[ref.field]
      if r[ref.lo] and r[ref.lo] > 1 then wins = wins + 1 end
    end
  end
  local a = { wins = wins, measured = #speedups, win_rate = n > 0 and wins / n or nil,
              median_speedup = #speedups > 0 and stats.median(speedups) or nil,
              geomean_speedup = stats.geomean(speedups), fast_p = {} }
  for _, p in ipairs(M.FAST_P) do
    local c = 0
    for _, x in ipairs(speedups) do if x > p then c = c + 1 end end
    a.fast_p[#a.fast_p + 1] = { p = p, value = n > 0 and c / n or nil }
  end
  return a
end

-- summary(records) -> { n, correct, by_verdict = {verdict = count}, against = { baseline =,
-- pytorch =, compiled = } (each: wins, measured, win_rate, median_speedup, geomean_speedup,
-- fast_p = { {p =, value =}, ... }; pytorch and compiled only where some record has them) },
-- with the baseline's figures also at the top level (wins, win_rate, median_speedup,
-- geomean_speedup, fast_p).
function M.summary(rows)
  local n, correct, by_verdict = #rows, 0, {}
  for _, r in ipairs(rows) do
    by_verdict[r.verdict] = (by_verdict[r.verdict] or 0) + 1
    if r.verdict == "correct" then correct = correct + 1 end
  end
  local s = { n = n, correct = correct, by_verdict = by_verdict, against = {} }
  for _, ref in ipairs(M.REFERENCES) do
    local a = against(rows, ref)
    if ref.key == "baseline" or a.measured > 0 then s.against[ref.key] = a end
  end
  for k, v in pairs(s.against.baseline) do if k ~= "measured" then s[k] = v end end
  -- KernelBench's own test beside kreach's verdicts: where the two disagree
  local kb = { compared = 0, pass = 0, rejects_correct = 0, accepts_incorrect = 0 }
  for _, r in ipairs(rows) do
    if r.kernelbench then
      kb.compared = kb.compared + 1
      if r.kernelbench == "pass" then
        kb.pass = kb.pass + 1
        if r.verdict == "incorrect" then kb.accepts_incorrect = kb.accepts_incorrect + 1 end
      elseif r.verdict == "correct" then
        kb.rejects_correct = kb.rejects_correct + 1
      end
    end
  end
  if kb.compared > 0 then s.kernelbench = kb end
  return s
end

-- summary_text(s) -> the summary's lines: the verdicts, then each reference's figures.
function M.summary_text(s)
  local function pct(x) return x and ("%.1f%%"):format(100 * x) or "-" end
  local lines = {
    ("%d evaluated, %d correct (%s)"):format(s.n, s.correct, pct(s.n > 0 and s.correct / s.n or nil)),
  }
  for _, ref in ipairs(M.REFERENCES) do
    local a = s.against and s.against[ref.key]
    if a then
      local fp = {}
      for _, f in ipairs(a.fast_p) do fp[#fp + 1] = ("fast_%g %s"):format(f.p, pct(f.value)) end
      lines[#lines + 1] = ("against %s: wins %d (%s: speedup interval above 1); median %s, geometric mean %s; %s"):format(
        ref.title, a.wins, pct(a.win_rate),
        a.median_speedup and ("%.3fx"):format(a.median_speedup) or "-",
        a.geomean_speedup and ("%.3fx"):format(a.geomean_speedup) or "-", table.concat(fp, ", "))
    end
  end
  local kb = s.kernelbench
  if kb then
    lines[#lines + 1] = ("KernelBench's allclose: passes %d of %d compared; it rejects %d that kreach finds correct and accepts %d that kreach finds incorrect"):format(
      kb.pass, kb.compared, kb.rejects_correct, kb.accepts_incorrect)
  end
  local vs = {}
  for k, c in pairs(s.by_verdict) do vs[#vs + 1] = ("%s %d"):format(k, c) end
  table.sort(vs)
  lines[#lines + 1] = "verdicts: " .. table.concat(vs, ", ")
  return table.concat(lines, "\n") .. "\n"
end

return M
