-- kreach.results.summary: the summary of a `kreach generate` run (a part of the results stage's
-- report, kept apart from kreach.results.report's exports and tables for its size): the requests
-- made and answered from the database, tokens, cost, retries, latency, the candidates, and
-- correctness where kreach eval has judged them, with the unbiased pass@k; its JSON rows and its
-- text. Pure functions of what kreach.generate.session.run returns. With --eval, the evaluation
-- figures are the second half's, over the run's candidates' evaluations (generate_results).
--
-- And `kreach results summary` (the second half): the figures of a results database by group
-- (model, category, problem, dtype, suite, run): the verdicts, the correct rate, pass@k, the
-- verified speedups against one reference (kreach's baseline, PyTorch eager or torch.compile),
-- best-of-samples, KernelBench's fast_p, where KernelBench's allclose and kreach disagree, and
-- the candidates whose time was measured with a caveat. compute() is a pure function of the
-- store's decoded rows; tables() builds what is printed (text, Markdown, CSV) apart from printing
-- it. Every convention (what each denominator counts) is stated in docs/results.md, "Summaries".
local evaluation = require "kreach.results.evaluation"
local stats = require "kreach.stats"
local text = require "kreach.text"
local verdict = require "kreach.verdict"
local errors = require "kreach.errors"
local json = require "kreach.json"
local report = require "kreach.results.report"

local M = {}

-- pass_at_k(n, c, k) -> the unbiased pass@k of n samples of which c are correct (Chen et al.):
-- 1 - C(n - c, k) / C(n, k), the chance that k of the n drawn without replacement hold a correct one
function M.pass_at_k(n, c, k)
  if n - c < k then return 1 end
  local p = 1
  for i = n - c + 1, n do p = p * (1 - k / i) end
  return 1 - p
end

-- the requests' figures (tokens, cost, retries, statuses), each job's conversation marked
-- failed, unjudged or correct; the latencies of the replies
local function count_jobs(sum, jobs, have)
  local latencies = {}
  for _, job in ipairs(jobs) do
    local r = job.row or {}
    sum.input_tokens = sum.input_tokens + (r.input_tokens or 0)
    sum.output_tokens = sum.output_tokens + (r.output_tokens or 0)
    sum.cost_usd = sum.cost_usd + (r.cost_usd or 0)
    sum.retries = sum.retries + (r.retries or 0)
    if r.latency_s then latencies[#latencies + 1] = r.latency_s end
    if r.status == "ok" then sum.candidates = sum.candidates + 1
    elseif r.status == "no_code" then sum.no_code = sum.no_code + 1
    elseif r.status == "no_candidate" then sum.no_candidate = sum.no_candidate + 1
    elseif r.status == "error" then sum.errors = sum.errors + 1; job.conv.failed = true
    else sum.not_asked = sum.not_asked + 1 end -- the run stopped before asking it
    if r.finish == "length" or r.finish == "max_tokens" then sum.truncated = sum.truncated + 1 end
    local cv = job.conv
    cv.unjudged = cv.unjudged or 0
    local e = r.candidate_hash and have[r.candidate_hash]
    if r.status == "ok" and not e then cv.unjudged = cv.unjudged + 1 end
    if e and e.verdict == "correct" then cv.correct = true end
  end
  return latencies
end

-- kreach eval's figures over the samples: each sample's best evaluation over its turns (a
-- correct one, the fastest), a sample without a candidate as an invalid one
local function best_evaluations(convs, have)
  local eval_rows = {}
  for _, cv in ipairs(convs) do
    local best
    for _, job in ipairs(cv.jobs or {}) do
      local e = job.row and job.row.candidate_hash and have[job.row.candidate_hash]
      if e then
        if not best or (e.verdict == "correct" and (best.verdict ~= "correct" or (e.speedup or 0) > (best.speedup or 0))) then
          best = e
        end
      end
    end
    eval_rows[#eval_rows + 1] = best or { verdict = "invalid_candidate" }
  end
  return eval_rows
end

-- generate(run, median, results) -> the summary of a kreach generate run (kreach.generate.session.run's
-- result): this run's requests (every turn), and correctness where kreach eval has judged the
-- candidates: a (problem, sample) is correct when a candidate of any of its turns is; a reply
-- without a candidate counts as incorrect, as KernelBench counts a failed generation. median(xs)
-- gives the median latency (kreach.generate.progress's, the one its ETA uses). With results
-- (generate --eval: M.generate_results's), the evaluation figures are that summary's, and this
-- one gives none of its own (no correct, correct_rate, pass_at or evaluation).
function M.generate(run, median, results)
  local jobs, convs, have = run.jobs, run.convs, run.verdicts
  local sum = { model = run.model, provider = run.provider, requests = run.made, cached = #jobs - run.made, jobs = #jobs,
                samples = #convs, turns = run.turns, input_tokens = 0, output_tokens = 0, cost_usd = 0, retries = 0,
                candidates = 0, no_code = 0, no_candidate = 0, errors = 0, not_asked = 0, truncated = 0, judged = 0,
                correct = 0, failed_samples = 0 }
  local latencies = count_jobs(sum, jobs, have)
  local per_problem = {}
  for _, cv in ipairs(convs) do
    local pp = per_problem[cv.inst.problem.name] or { n = 0, c = 0 }
    per_problem[cv.inst.problem.name] = pp
    pp.n = pp.n + 1
    -- a sample whose request failed has no verdict: it is neither judged nor incorrect
    if cv.failed then sum.failed_samples = sum.failed_samples + 1
    elseif (cv.unjudged or 0) == 0 then sum.judged = sum.judged + 1 end
    if cv.correct then pp.c = pp.c + 1; sum.correct = sum.correct + 1 end
  end
  sum.latency_median_s = median(latencies)
  if results then sum.correct = nil; return sum end
  -- once all are judged
  if sum.judged == #convs then sum.evaluation = evaluation.summary(best_evaluations(convs, have)) end
  if sum.judged == #convs and #convs > 0 and not run.stopped then
    sum.correct_rate = sum.correct / #convs
    sum.pass_at = {}
    for k = 1, run.samples do
      local tot, n = 0, 0
      for _, pp in pairs(per_problem) do tot = tot + M.pass_at_k(pp.n, pp.c, k); n = n + 1 end
      sum.pass_at[k] = tot / n
    end
  end
  return sum
end

-- generate_hashes(jobs) -> the set of the candidate hashes of a generate run's replies (every turn)
function M.generate_hashes(jobs)
  local t = {}
  for _, job in ipairs(jobs) do
    local r = job.row
    if r and r.status == "ok" and r.candidate_hash then t[r.candidate_hash] = true end
  end
  return t
end

-- generate_results(data, hashes, o) -> `kreach results summary`'s computation (M.compute) over
-- the evaluations of a generate run's candidates, in one group named after the model: data is
-- M.read's, hashes M.generate_hashes's; o = { model = (the group's name), dtype = (only the
-- evaluations at this dtype, the one generate --eval used), against = (the reference, default
-- "baseline") }. Its conventions are compute's (docs/results.md, "Summaries"): every evaluated
-- candidate is a sample (each turn's too), pass@k is averaged over the problems, a reply without
-- a candidate is in no figure of it (generate's own lines count those).
function M.generate_results(data, hashes, o)
  o = o or {}
  local rows = {}
  for _, r in ipairs(data.rows or {}) do
    if r.candidate_hash and hashes[r.candidate_hash] and (o.dtype == nil or r.dtype == o.dtype) then rows[#rows + 1] = r end
  end
  local s = M.compute({ rows = rows, models = data.models }, { against = o.against or "baseline" })
  s.by = { "model" }
  for _, g in ipairs(s.groups) do g.key = { model = o.model or M.UNKNOWN }; g.name = o.model or M.UNKNOWN end
  return s
end

-- generate_rows(jobs) -> one row a request for --json: the problem, sample, turn and outcome
function M.generate_rows(jobs)
  local rows = {}
  for _, job in ipairs(jobs) do
    local r = job.row or {}
    rows[#rows + 1] = { problem = job.inst.problem.name, sample = job.sample, turn = job.turn, status = r.status,
                        error = r.error, finish = r.finish, file = r.candidate_file, cached = job.cached or false,
                        input_tokens = r.input_tokens, output_tokens = r.output_tokens, cost_usd = r.cost_usd,
                        latency_s = r.latency_s, retries = r.retries }
  end
  return rows
end

-- generate_text(sum, o) -> the summary's text (lines ending in "\n"); o = { db =, out =, priced =
-- (the configuration has prices), eval_hint = (the kreach eval command that judges the rest),
-- results = (with --eval: M.generate_results's summary, printed as `kreach results summary`
-- prints it, in place of generate's correct line and kreach eval's figures) }
function M.generate_text(sum, o)
  local t = {}
  t[#t + 1] = ("%s (%s): %d request%s made, %d answered from %s; %d input and %d output tokens%s; %d retr%s%s\n"):format(
    sum.model, sum.provider, sum.requests, sum.requests == 1 and "" or "s", sum.cached, o.db, sum.input_tokens, sum.output_tokens,
    o.priced and (", $%.4f"):format(sum.cost_usd) or " (no prices configured)", sum.retries,
    sum.retries == 1 and "y" or "ies",
    sum.latency_median_s and (", median latency %.2f s"):format(sum.latency_median_s) or "")
  t[#t + 1] = ("candidates: %d of %d replies (no code %d, no loadable candidate %d, failed requests %d, truncated %d), in %s with manifest.json\n"):format(
    sum.candidates, sum.jobs, sum.no_code, sum.no_candidate, sum.errors, sum.truncated, o.out)
  if o.results then
    local rs = o.results
    if sum.failed_samples > 0 then
      t[#t + 1] = ("failed: %d of %d samples have a request that failed (the same command again asks only those)\n"):format(
        sum.failed_samples, sum.samples)
    end
    if #rs.groups == 0 then
      t[#t + 1] = ("evaluations: none of these candidates is evaluated in %s\n"):format(o.db)
    else
      t[#t + 1] = "evaluations of these candidates, as kreach results summary gives them (docs/results.md, \"Summaries\"):\n"
      local lines = {}
      M.text(rs, function(...) lines[#lines + 1] = table.concat({ ... }) end)
      for l in table.concat(lines):gmatch("([^\n]*)\n") do t[#t + 1] = (l == "" and "" or "  " .. l) .. "\n" end
    end
  elseif sum.correct_rate then
    local pk = {}
    for k, v in ipairs(sum.pass_at) do pk[#pk + 1] = ("pass@%d %.3f"):format(k, v) end
    t[#t + 1] = ("correct: %d of %d samples (%.1f%%)%s; %s\n"):format(sum.correct, sum.samples, 100 * sum.correct_rate,
      sum.turns > 1 and (" within %d turns"):format(sum.turns) or "", table.concat(pk, ", "))
    if sum.evaluation then
      t[#t + 1] = "kreach eval's figures over the samples (each its best turn):\n"
      for l in evaluation.summary_text(sum.evaluation):gmatch("[^\n]+") do t[#t + 1] = "  " .. l .. "\n" end
    end
  elseif sum.failed_samples > 0 then
    t[#t + 1] = ("correct: not given: %d of %d samples have a request that failed (the same command again asks only those)\n"):format(
      sum.failed_samples, sum.samples)
  else
    -- some samples are judged (those without a candidate count as incorrect), not all
    t[#t + 1] = ("correct: not given: %d of %d samples judged; %s judges the others, then run this command again (no request is repeated)\n"):format(
      sum.judged, sum.samples, o.eval_hint)
  end
  return table.concat(t)
end

-- ==== kreach results summary ====

-- the group keys --by takes, in the order the docs list them
M.BY = { "model", "category", "problem", "dtype", "suite", "run" }
local BY_OK = {}
for _, k in ipairs(M.BY) do BY_OK[k] = true end

M.KS = { 1, 5, 10 }
M.FAST_P = evaluation.FAST_P
M.UNKNOWN = "(unknown)"

-- the references --against takes: kreach.results.evaluation's (baseline, pytorch, compiled)
M.AGAINST = {}
local REF = {}
for _, r in ipairs(evaluation.REFERENCES) do M.AGAINST[#M.AGAINST + 1] = r.key; REF[r.key] = r end

-- the verdicts counted (every kind but "baseline": a baseline timed alone is no candidate)
M.VERDICTS = {}
for _, v in ipairs(verdict.KINDS) do if v ~= "baseline" then M.VERDICTS[#M.VERDICTS + 1] = v end end

-- parse_by(s) -> the list of group keys of "model,problem" ("" or nil: none); an unknown or
-- repeated key is a usage error
function M.parse_by(s)
  local keys, seen = {}, {}
  if s == nil or s == "" then return keys end
  for k in (s .. ","):gmatch("([^,]*),") do
    k = k:match("^%s*(.-)%s*$")
    if not BY_OK[k] then
      errors.usage("--by: unknown key '%s' (keys: %s)", text.clean(k, 64), table.concat(M.BY, ", "))
    end
    if seen[k] then errors.usage("--by: key '%s' is named twice", k) end
    seen[k] = true
    keys[#keys + 1] = k
  end
  return keys
end

-- parse_against(s) -> the reference key; an unknown one is a usage error
function M.parse_against(s)
  if not REF[s] then
    errors.usage("--against: unknown reference '%s' (references: %s)", text.clean(tostring(s), 64),
      table.concat(M.AGAINST, ", "))
  end
  return s
end

-- ---- reading ----

-- read(db) -> what compute() needs from the store: { rows = every evaluation, models =
-- candidate hash -> the model of the generations table's request that produced it }
function M.read(db)
  local models = {}
  for _, g in ipairs(db:generation_list()) do
    if g.candidate_hash and g.model and not models[g.candidate_hash] then models[g.candidate_hash] = g.model end
  end
  return { rows = db:evaluations{}, models = models }
end

-- runs(db) -> run id -> the stored run (its device, started_at, finished_at, command), for the
-- captions of kreach report's figures (kreach.report: what was measured, where and when)
function M.runs(db)
  local t = {}
  for _, r in ipairs(db:runs()) do t[r.id] = r end
  return t
end

-- categories(rows, load) -> problem path -> category, for --by category: the file's category,
-- and its subcategory after a '/' where it declares one ("convolution/transposed 2D"). load(paths)
-- is kreach.problem.catalog's load of problem files, given by the command (results/ loads no
-- problem): { {value = {category =, subcategory =}} | {why =}, ... } in the paths' order; a path
-- that does not load (moved, deleted, another machine's) has none, and its rows read "(unknown)"
function M.categories(rows, load)
  local paths, seen = {}, {}
  for _, r in ipairs(rows) do
    if r.path and not seen[r.path] then seen[r.path] = true; paths[#paths + 1] = r.path end
  end
  local t = {}
  if #paths == 0 then return t end
  for i, res in ipairs(load(paths)) do
    local v = res.value
    if type(v) == "table" and v.category then
      t[paths[i]] = v.subcategory and (v.category .. "/" .. v.subcategory) or v.category
    end
  end
  return t
end

-- model_of(row, models) -> the model a candidate came from: the evaluation's own `model` (where a
-- row carries one), its candidate's origin.model (kreach generate's manifest, a candidate file's
-- origin), the model of the generations row that produced its candidate, else "(unknown)"
function M.model_of(r, models)
  if type(r.model) == "string" and r.model ~= "" then return r.model end
  local o = r.origin
  if type(o) == "table" and type(o.model) == "string" and o.model ~= "" then return o.model end
  return (r.candidate_hash and models and models[r.candidate_hash]) or M.UNKNOWN
end

-- a problem's name in the figures: "<suite>/<name>" (or the name alone without a suite)
local function problem_of(r)
  local name = r.problem_name or tostring(r.problem_id or "?")
  return r.suite and (r.suite .. "/" .. name) or name
end
M.problem_of = problem_of

local KEY = {
  model = function(r, o) return M.model_of(r, o.models) end,
  category = function(r, o) return (o.categories and r.path and o.categories[r.path]) or M.UNKNOWN end,
  problem = problem_of,
  dtype = function(r) return r.dtype or M.UNKNOWN end,
  suite = function(r) return r.suite or M.UNKNOWN end,
  run = function(r) return tostring(r.run_id) end,
}

-- ---- the figures of one group ----

local function padded(s) return (s:gsub("%d+", function(d) return #d < 16 and ("0"):rep(16 - #d) .. d or d end)) end
local function natural_less(a, b)
  local pa, pb = padded(a), padded(b)
  if pa ~= pb then return pa < pb end
  return a < b
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, natural_less)
  return ks
end

local function median(xs) return #xs > 0 and stats.median(xs) or nil end

-- the figures of a list of speedups: { count, median, geomean }
local function spread(xs)
  return { count = #xs, median = median(xs), geomean = stats.geomean(xs) }
end

local function figures(rows, ref)
  local g = { evaluations = #rows, verdicts = {}, correct = 0, judged = 0 }
  for _, v in ipairs(M.VERDICTS) do g.verdicts[v] = 0 end
  -- per problem: n judged samples, c correct, the best correct candidate, any verified one,
  -- the fastest correct speedup
  local probs, order = {}, {}
  local measured, verified = {}, {}
  local kb = { compared = 0, pass = 0, kb_pass_not_correct = {}, kb_fail_correct = {} }
  local kb_pass_nc, kb_fail_c = {}, {}
  local timing = { other_streams = 0, warned = 0, methods = {} }
  for _, r in ipairs(rows) do
    g.verdicts[r.verdict] = (g.verdicts[r.verdict] or 0) + 1
    if r.verdict ~= "skipped" then
      g.judged = g.judged + 1
      local name = problem_of(r)
      local p = probs[name]
      if not p then
        p = { name = name, n = 0, c = 0 }
        probs[name] = p
        order[#order + 1] = name
      end
      p.n = p.n + 1
      if r.verdict == "correct" then
        g.correct = g.correct + 1
        p.c = p.c + 1
        local x, lo = r[ref.field], r[ref.lo]
        if x then
          measured[#measured + 1] = x
          if lo and lo > 1 then verified[#verified + 1] = x; p.verified = true end
          if not p.best or x > p.best.speedup then p.best = { speedup = x, lo = lo, id = r.id } end
        end
      end
    end
    if r.kernelbench then
      kb.compared = kb.compared + 1
      if r.kernelbench == "pass" then
        kb.pass = kb.pass + 1
        if r.verdict ~= "correct" then kb_pass_nc[problem_of(r)] = (kb_pass_nc[problem_of(r)] or 0) + 1 end
      elseif r.verdict == "correct" then
        kb_fail_c[problem_of(r)] = (kb_fail_c[problem_of(r)] or 0) + 1
      end
    end
    if (r.other_stream_calls or 0) > 0 then timing.other_streams = timing.other_streams + 1 end
    if type(r.timing_warnings) == "table" and #r.timing_warnings > 0 then timing.warned = timing.warned + 1 end
    if r.time_method then timing.methods[r.time_method] = (timing.methods[r.time_method] or 0) + 1 end
  end
  g.correct_rate = g.judged > 0 and g.correct / g.judged or nil
  table.sort(order, natural_less)
  g.problems = #order
  g.solved = 0
  for _, name in ipairs(order) do if probs[name].c > 0 then g.solved = g.solved + 1 end end

  -- pass@k over the problems with at least k judged samples
  g.pass_at = {}
  for _, k in ipairs(M.KS) do
    local tot, n = 0, 0
    for _, name in ipairs(order) do
      local p = probs[name]
      if p.n >= k then tot = tot + M.pass_at_k(p.n, p.c, k); n = n + 1 end
    end
    if n > 0 then g.pass_at[#g.pass_at + 1] = { k = k, value = tot / n, problems = n } end
  end

  -- the speedups against the reference: every correct candidate's, the verified ones', and the
  -- best of each problem's samples
  local best, best_list, best_verified = {}, {}, 0
  for _, name in ipairs(order) do
    local p = probs[name]
    if p.best then
      best[#best + 1] = p.best.speedup
      best_list[#best_list + 1] = { problem = name, speedup = p.best.speedup, lo = p.best.lo, id = p.best.id,
                                    verified = p.verified or false }
    end
    if p.verified then best_verified = best_verified + 1 end
  end
  g.speedup = spread(measured)
  g.verified = spread(verified)
  g.best = spread(best)
  g.best.verified = best_verified
  g.best.problems = best_list

  -- fast_p: the fraction of the problems with a correct candidate faster than p times the
  -- reference (p = 0: any correct candidate, timed against the reference or not)
  g.fast_p = {}
  for _, p in ipairs(M.FAST_P) do
    local c = 0
    for _, name in ipairs(order) do
      local pr = probs[name]
      if (p == 0 and pr.c > 0) or (pr.best and pr.best.speedup > p) then c = c + 1 end
    end
    g.fast_p[#g.fast_p + 1] = { p = p, count = c, value = #order > 0 and c / #order or nil }
  end

  local function named(t)
    local out = {}
    for _, name in ipairs(sorted_keys(t)) do out[#out + 1] = { problem = name, count = t[name] } end
    return out
  end
  local npc, nfc = 0, 0
  for _, c in pairs(kb_pass_nc) do npc = npc + c end
  for _, c in pairs(kb_fail_c) do nfc = nfc + c end
  kb.kb_pass_not_correct = { count = npc, problems = named(kb_pass_nc) }
  kb.kb_fail_correct = { count = nfc, problems = named(kb_fail_c) }
  g.kernelbench = kb
  g.timing = timing
  return g
end

-- ---- grouping ----

-- group keys in natural order: numbers within them by value (run 2 before run 10, problem
-- 1_Matmul before 19_ReLU)
local function key_less(a, b)
  for i = 1, math.max(#a, #b) do
    local x, y = a[i], b[i]
    if x ~= y then
      if x == nil or y == nil then return x == nil end
      return natural_less(x, y)
    end
  end
  return false
end

-- compute(data, {by = {keys}, against = "baseline"|"pytorch"|"compiled", categories = path ->
-- category, rows = (true: each group keeps its rows as g.rows)}) -> { by, against, reference, left_out = { baselines, repeats }, groups = { {key =
-- {values in by's order}, figures...} } }. data is read()'s. Baselines timed alone (no
-- candidate) are left out; an evaluation repeated (the same eval_key twice in a group: the same
-- candidate, problem and configuration evaluated again) counts once, its newest.
function M.compute(data, o)
  o = o or {}
  local by = o.by or {}
  local against = o.against or "baseline"
  local ref = REF[against]
  if not ref then error(("summary.compute: unknown reference '%s'"):format(tostring(against)), 2) end
  for _, k in ipairs(by) do
    if not BY_OK[k] then error(("summary.compute: unknown group key '%s'"):format(tostring(k)), 2) end
  end
  local ctx = { models = data.models or {}, categories = o.categories }
  local groups, order = {}, {}
  local left = { baselines = 0, repeats = 0 }
  for _, r in ipairs(data.rows) do
    if r.verdict == "baseline" or r.candidate_ref == nil then
      left.baselines = left.baselines + 1
    else
      local key = {}
      for i, k in ipairs(by) do key[i] = KEY[k](r, ctx) end
      local id = table.concat(key, "\0")
      local grp = groups[id]
      if not grp then
        grp = { key = key, rows = {}, by_key = {} }
        groups[id] = grp
        order[#order + 1] = grp
      end
      local prev = r.eval_key and grp.by_key[r.eval_key]
      if prev then
        left.repeats = left.repeats + 1
        if (r.id or 0) > (grp.rows[prev].id or 0) then grp.rows[prev] = r end
      else
        grp.rows[#grp.rows + 1] = r
        if r.eval_key then grp.by_key[r.eval_key] = #grp.rows end
      end
    end
  end
  table.sort(order, function(a, b) return key_less(a.key, b.key) end)
  local out = { by = by, against = against, reference = ref.title, left_out = left, groups = {} }
  for _, grp in ipairs(order) do
    local g = figures(grp.rows, ref)
    g.key = {}
    for i, k in ipairs(by) do g.key[k] = grp.key[i] end
    g.name = #by > 0 and table.concat(grp.key, " / ") or "all"
    -- o.rows: the group's rows too (each evaluation once, as the figures count them), for
    -- kreach report's figures of single candidates; not in --json
    if o.rows then g.rows = grp.rows end
    out.groups[#out.groups + 1] = g
  end
  return out
end

-- ---- what is printed ----

local function pct(x) return x and ("%.1f%%"):format(100 * x) or "-" end
local function fx(x) return x and ("%.3fx"):format(x) or "-" end
local function f3(x) return x and ("%.3f"):format(x) or "-" end

local function pass_of(g, k)
  for _, p in ipairs(g.pass_at) do if p.k == k then return p end end
end

-- The columns of the flat table (CSV; the text and Markdown tables take theirs from it):
-- { header, value(g) (a number, a string or nil), cell(g) (the text), table = which printed
-- table shows it ("verdicts" or "speed"; nil: CSV only) }
local function columns(s)
  local cols = {}
  local function col(h, value, cell, tbl) cols[#cols + 1] = { h, value, cell or value, table = tbl } end
  for _, k in ipairs(s.by) do col(k, function(g) return g.key[k] end) end
  if #s.by == 0 then col("group", function(g) return g.name end) end
  col("evaluations", function(g) return g.evaluations end, function(g) return tostring(g.evaluations) end, "verdicts")
  for _, v in ipairs(M.VERDICTS) do
    col(v, function(g) return g.verdicts[v] end, function(g) return tostring(g.verdicts[v]) end, "verdicts")
  end
  col("judged", function(g) return g.judged end, nil, nil)
  col("correct_rate", function(g) return g.correct_rate end, function(g) return pct(g.correct_rate) end, "verdicts")
  col("problems", function(g) return g.problems end, function(g) return tostring(g.problems) end, "verdicts")
  for _, k in ipairs(M.KS) do
    col("pass@" .. k, function(g) local p = pass_of(g, k); return p and p.value end,
      function(g) local p = pass_of(g, k); return p and f3(p.value) or "-" end, "verdicts")
  end
  col("kb_pass_not_correct", function(g) return g.kernelbench.kb_pass_not_correct.count end, nil, nil)
  col("kb_fail_correct", function(g) return g.kernelbench.kb_fail_correct.count end, nil, nil)
  col("other_streams", function(g) return g.timing.other_streams end, nil, nil)
  col("timing_warned", function(g) return g.timing.warned end, nil, nil)
  col("measured", function(g) return g.speedup.count end, function(g) return tostring(g.speedup.count) end, "speed")
  col("median", function(g) return g.speedup.median end, function(g) return fx(g.speedup.median) end, "speed")
  col("geomean", function(g) return g.speedup.geomean end, function(g) return fx(g.speedup.geomean) end, "speed")
  col("verified", function(g) return g.verified.count end, function(g) return tostring(g.verified.count) end, "speed")
  col("verified_median", function(g) return g.verified.median end, function(g) return fx(g.verified.median) end, "speed")
  col("verified_geomean", function(g) return g.verified.geomean end, function(g) return fx(g.verified.geomean) end, "speed")
  col("best_problems", function(g) return g.best.count end, function(g) return tostring(g.best.count) end, "speed")
  col("best_median", function(g) return g.best.median end, function(g) return fx(g.best.median) end, "speed")
  col("best_geomean", function(g) return g.best.geomean end, function(g) return fx(g.best.geomean) end, "speed")
  for i, p in ipairs(M.FAST_P) do
    col(("fast_%g"):format(p), function(g) return g.fast_p[i].value end, function(g) return f3(g.fast_p[i].value) end, "speed")
  end
  return cols
end

-- short headers of the printed tables
local SHORT = { evaluations = "evals", compile_error = "compile", runtime_error = "runtime",
                invalid_candidate = "invalid", correct_rate = "correct%", verified_median = "v.median",
                verified_geomean = "v.geomean", best_problems = "best n", best_median = "best median",
                best_geomean = "best geomean" }

-- tables(s) -> what is printed: { tables = { {title =, header = {...}, rows = {{...}}, right =
-- {bool per column}} }, notes = { lines } }: a table of the verdicts and pass@k, a table of the
-- speedups against the reference, then a note per group on KernelBench's disagreements and the
-- timing flags (only where there are some)
function M.tables(s)
  local cols = columns(s)
  local out = { tables = {}, notes = {} }
  local nkey = #s.by > 0 and #s.by or 1
  local titles = {
    verdicts = "verdicts, correct rate (of the judged) and pass@k (over the problems with at least k samples)",
    speed = ("speedups of the correct candidates against %s; verified: interval above 1; best: each problem's best sample; fast_p over the problems"):format(s.reference),
  }
  for _, which in ipairs{ "verdicts", "speed" } do
    local t = { title = titles[which], header = {}, rows = {}, right = {} }
    local pick = {}
    for i, c in ipairs(cols) do
      if i <= nkey or c.table == which then pick[#pick + 1] = c end
    end
    for i, c in ipairs(pick) do t.header[i] = SHORT[c[1]] or c[1]; t.right[i] = i > nkey end
    for _, g in ipairs(s.groups) do
      local row = {}
      for i, c in ipairs(pick) do row[i] = text.clean(tostring(c[3](g) or "-"), 256) end
      t.rows[#t.rows + 1] = row
    end
    out.tables[#out.tables + 1] = t
  end
  for _, g in ipairs(s.groups) do
    local kb, tm = g.kernelbench, g.timing
    local function names(l)
      local t = {}
      for _, x in ipairs(l) do t[#t + 1] = x.count > 1 and ("%s (%d)"):format(x.problem, x.count) or x.problem end
      return text.clean(table.concat(t, ", "), 4096)
    end
    if kb.kb_pass_not_correct.count > 0 then
      out.notes[#out.notes + 1] = ("%s: KernelBench's allclose passes %d candidate%s that kreach does not find correct: %s"):format(
        text.clean(g.name, 256), kb.kb_pass_not_correct.count, kb.kb_pass_not_correct.count == 1 and "" or "s",
        names(kb.kb_pass_not_correct.problems))
    end
    if kb.kb_fail_correct.count > 0 then
      out.notes[#out.notes + 1] = ("%s: KernelBench's allclose fails %d candidate%s that kreach finds correct: %s"):format(
        text.clean(g.name, 256), kb.kb_fail_correct.count, kb.kb_fail_correct.count == 1 and "" or "s",
        names(kb.kb_fail_correct.problems))
    end
    if tm.other_streams > 0 or tm.warned > 0 then
      out.notes[#out.notes + 1] = ("%s: %d candidate%s queued work on other streams (timed as the all-streams span), %d with timing warnings"):format(
        text.clean(g.name, 256), tm.other_streams, tm.other_streams == 1 and "" or "s", tm.warned)
    end
  end
  local l = s.left_out
  if l.baselines > 0 or l.repeats > 0 then
    out.notes[#out.notes + 1] = ("left out: %d baseline%s timed alone, %d repeated evaluation%s (the newest counts)"):format(
      l.baselines, l.baselines == 1 and "" or "s", l.repeats, l.repeats == 1 and "" or "s")
  end
  return out
end

-- text(s, write): the tables aligned, then the notes
function M.text(s, write)
  if #s.groups == 0 then
    write("no candidate evaluations in the database (kreach eval records them)\n")
    return
  end
  local t = M.tables(s)
  for n, tbl in ipairs(t.tables) do
    if n > 1 then write("\n") end
    write(tbl.title, "\n")
    local w = {}
    local all = { tbl.header }
    for _, r in ipairs(tbl.rows) do all[#all + 1] = r end
    for _, r in ipairs(all) do for i, x in ipairs(r) do w[i] = math.max(w[i] or 0, #x) end end
    for _, r in ipairs(all) do
      local parts = {}
      for i, x in ipairs(r) do parts[i] = tbl.right[i] and (" "):rep(w[i] - #x) .. x or x .. (" "):rep(w[i] - #x) end
      write((table.concat(parts, "  "):gsub("%s+$", "")), "\n")
    end
  end
  if #t.notes > 0 then write("\n") end
  for _, l in ipairs(t.notes) do write(l, "\n") end
end

-- markdown(s, write): the same tables and notes in Markdown
function M.markdown(s, write)
  local t = M.tables(s)
  local function cell(x) return (x:gsub("|", "\\|")) end
  for n, tbl in ipairs(t.tables) do
    if n > 1 then write("\n") end
    write("**", tbl.title, "**\n\n")
    local h, sep = {}, {}
    for i, x in ipairs(tbl.header) do h[i] = cell(x); sep[i] = tbl.right[i] and "---:" or "---" end
    write("| ", table.concat(h, " | "), " |\n| ", table.concat(sep, " | "), " |\n")
    for _, r in ipairs(tbl.rows) do
      local c = {}
      for i, x in ipairs(r) do c[i] = cell(x) end
      write("| ", table.concat(c, " | "), " |\n")
    end
  end
  if #t.notes > 0 then write("\n") end
  for _, l in ipairs(t.notes) do write("- ", cell(l), "\n") end
end

-- csv(s, write, field): one line per group, every column (field: kreach.results.report's
-- csv_field, RFC 4180 quoting)
function M.csv(s, write, field)
  local cols = columns(s)
  local h = {}
  for i, c in ipairs(cols) do h[i] = c[1] end
  write(table.concat(h, ","), "\n")
  for _, g in ipairs(s.groups) do
    local f = {}
    for i, c in ipairs(cols) do f[i] = field(c[2](g)) end
    write(table.concat(f, ","), "\n")
  end
end

-- json_doc(s, db) -> the one JSON document of --json: { db, by, against, reference, left_out,
-- groups } (lists as arrays even when empty)
function M.json_doc(s, db)
  local groups = {}
  for i, g in ipairs(s.groups) do
    local c = {}
    for k, v in pairs(g) do c[k] = v end
    c.pass_at = json.array(g.pass_at)
    c.best = { count = g.best.count, median = g.best.median, geomean = g.best.geomean, verified = g.best.verified,
               problems = json.array(g.best.problems) }
    c.kernelbench = { compared = g.kernelbench.compared, pass = g.kernelbench.pass,
                      kb_pass_not_correct = { count = g.kernelbench.kb_pass_not_correct.count,
                                              problems = json.array(g.kernelbench.kb_pass_not_correct.problems) },
                      kb_fail_correct = { count = g.kernelbench.kb_fail_correct.count,
                                          problems = json.array(g.kernelbench.kb_fail_correct.problems) } }
    groups[i] = c
  end
  return { db = db, by = json.array(s.by), against = s.against, reference = s.reference, left_out = s.left_out,
           groups = json.array(groups) }
end

-- write(s, format, write, db): a computed summary in one of the forms `kreach results summary`
-- prints: "text" (the default), "json" (one document), "csv" (a line per group) or "md"
function M.write(s, format, write, db)
  if format == "json" then write(json.encode(M.json_doc(s, db)), "\n")
  elseif format == "csv" then M.csv(s, write, report.csv_field)
  elseif format == "md" then M.markdown(s, write)
  else M.text(s, write) end
end

return M
