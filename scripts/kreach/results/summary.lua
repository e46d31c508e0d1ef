-- kreach.results.summary: the summary of a `kreach generate` run (a part of the results stage's
-- report, kept apart from kreach.results.report's exports and tables for its size): the requests
-- made and answered from the database, tokens, cost, retries, latency, the candidates, and
-- correctness where kreach eval has judged them, with the unbiased pass@k; its JSON rows and its
-- text. Pure functions of what kreach.generate.session.run returns.
local evaluation = require "kreach.results.evaluation"

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

-- generate(run, median) -> the summary of a kreach generate run (kreach.generate.session.run's
-- result): this run's requests (every turn), and correctness where kreach eval has judged the
-- candidates: a (problem, sample) is correct when a candidate of any of its turns is; a reply
-- without a candidate counts as incorrect, as KernelBench counts a failed generation. median(xs)
-- gives the median latency (kreach.generate.progress's, the one its ETA uses).
function M.generate(run, median)
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
-- (the configuration has prices), eval_hint = (the kreach eval command that judges the rest) }
function M.generate_text(sum, o)
  local t = {}
  t[#t + 1] = ("%s (%s): %d request%s made, %d answered from %s; %d input and %d output tokens%s; %d retr%s%s\n"):format(
    sum.model, sum.provider, sum.requests, sum.requests == 1 and "" or "s", sum.cached, o.db, sum.input_tokens, sum.output_tokens,
    o.priced and (", $%.4f"):format(sum.cost_usd) or " (no prices configured)", sum.retries,
    sum.retries == 1 and "y" or "ies",
    sum.latency_median_s and (", median latency %.2f s"):format(sum.latency_median_s) or "")
  t[#t + 1] = ("candidates: %d of %d replies (no code %d, no loadable candidate %d, failed requests %d, truncated %d), in %s with manifest.json\n"):format(
    sum.candidates, sum.jobs, sum.no_code, sum.no_candidate, sum.errors, sum.truncated, o.out)
  if sum.correct_rate then
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

return M
