-- kreach.results.summary with known answers: the unbiased pass@k against values worked out by hand,
-- the summary of a kreach generate run (requests, tokens, statuses, correctness per sample, pass@k
-- averaged over the problems) built from hand-made jobs, and its text.
local summary = require "kreach.results.summary"
local progress = require "kreach.generate.progress"

local function close(want, got) assert.is_true(math.abs(want - got) < 1e-12, ("%.15g ~= %.15g"):format(want, got)) end

describe("kreach.results.summary.pass_at_k", function()
  it("is 1 - C(n - c, k) / C(n, k)", function()
    close(0.4, summary.pass_at_k(5, 2, 1))       -- 1 - C(3,1)/C(5,1) = 1 - 3/5
    close(0.7, summary.pass_at_k(5, 2, 2))       -- 1 - C(3,2)/C(5,2) = 1 - 3/10
    close(11 / 12, summary.pass_at_k(10, 3, 5))  -- 1 - C(7,5)/C(10,5) = 1 - 21/252
    close(0.0, summary.pass_at_k(4, 0, 2))       -- 1 - C(4,2)/C(4,2)
    close(1.0, summary.pass_at_k(4, 4, 1))       -- every sample correct
  end)
  it("is 1 when fewer than k samples are incorrect", function()
    assert.equals(1, summary.pass_at_k(5, 2, 4)) -- 3 incorrect < 4 drawn
    assert.equals(1, summary.pass_at_k(3, 1, 3))
  end)
end)

-- a run of two problems, two samples each, one turn: A's sample 1 correct (1.5x), sample 2
-- incorrect; B's sample 1 without code, sample 2 incorrect
local function run_of(verdicts, stopped)
  local A = { problem = { name = "A" } }
  local B = { problem = { name = "B" } }
  local convs, jobs = {}, {}
  local rows = {
    { A, { status = "ok", candidate_hash = "a1", input_tokens = 10, output_tokens = 100, cost_usd = 0.5, latency_s = 3, retries = 1 } },
    { A, { status = "ok", candidate_hash = "a2", input_tokens = 10, output_tokens = 50, latency_s = 1, finish = "length" } },
    { B, { status = "no_code", input_tokens = 20, output_tokens = 5, latency_s = 2, error = "no code block" } },
    { B, { status = "ok", candidate_hash = "b2", input_tokens = 20, output_tokens = 70, latency_s = 4 } },
  }
  for i, x in ipairs(rows) do
    local cv = { inst = x[1], sample = (i - 1) % 2 + 1 }
    local job = { conv = cv, inst = x[1], sample = cv.sample, turn = 1, row = x[2], cached = i == 4 }
    cv.jobs = { job }
    convs[i], jobs[i] = cv, job
  end
  return { model = "m", provider = "openai", jobs = jobs, convs = convs, made = 3, stopped = stopped,
           verdicts = verdicts, samples = 2, turns = 1 }
end

local JUDGED = { a1 = { verdict = "correct", speedup = 1.5 }, a2 = { verdict = "incorrect" }, b2 = { verdict = "incorrect" } }

describe("kreach.results.summary.generate", function()
  it("counts the requests and averages pass@k over the problems", function()
    local s = summary.generate(run_of(JUDGED), progress.median)
    assert.equals(3, s.requests)
    assert.equals(1, s.cached)
    assert.equals(4, s.jobs)
    assert.equals(4, s.samples)
    assert.equals(60, s.input_tokens)
    assert.equals(225, s.output_tokens)
    close(0.5, s.cost_usd)
    assert.equals(1, s.retries)
    assert.equals(3, s.candidates)
    assert.equals(1, s.no_code)
    assert.equals(1, s.truncated)
    assert.equals(4, s.judged)     -- the reply without code counts as judged (incorrect)
    assert.equals(1, s.correct)
    assert.equals(2, s.latency_median_s) -- latencies 1 2 3 4: the lower middle one
    close(0.25, s.correct_rate)
    -- pass@1: A 1 - C(1,1)/C(2,1) = 0.5, B 0; pass@2: A 1 (one incorrect < 2), B 0
    close(0.25, s.pass_at[1])
    close(0.5, s.pass_at[2])
    -- kreach eval's figures over each sample's best: the one without code is an invalid candidate
    assert.equals(4, s.evaluation.n)
    assert.equals(1, s.evaluation.correct)
    assert.equals(1, s.evaluation.by_verdict.invalid_candidate)
  end)

  it("gives no correctness while a candidate is unjudged, or the run stopped", function()
    local s = summary.generate(run_of({ a1 = JUDGED.a1 }), progress.median)
    assert.equals(2, s.judged) -- A's sample 1 and B's sample 1 (no code)
    assert.is_nil(s.correct_rate)
    assert.is_nil(s.pass_at)
    assert.is_nil(s.evaluation)
    local t = summary.generate_text(s, { db = "r.db", out = "gen", priced = false, eval_hint = "kreach eval X gen --db r.db" })
    assert.matches("correct: not given: 2 of 4 samples judged; kreach eval X gen --db r.db judges the others", t, 1, true)
    local stopped = summary.generate(run_of(JUDGED, "401 unauthorized"), progress.median)
    assert.is_nil(stopped.correct_rate)
  end)

  it("writes the text kreach generate prints", function()
    local s = summary.generate(run_of(JUDGED), progress.median)
    local t = summary.generate_text(s, { db = "r.db", out = "gen", priced = true, eval_hint = "-" })
    assert.matches("^m %(openai%): 3 requests made, 1 answered from r%.db; 60 input and 225 output tokens, %$0%.5000; 1 retry, median latency 2%.00 s\n", t)
    assert.matches("candidates: 3 of 4 replies (no code 1, no loadable candidate 0, failed requests 0, truncated 1), in gen with manifest.json\n", t, 1, true)
    assert.matches("correct: 1 of 4 samples (25.0%); pass@1 0.250, pass@2 0.500\n", t, 1, true)
    assert.matches("kreach eval's figures over the samples (each its best turn):\n  4 evaluated, 1 correct (25.0%)", t, 1, true)
    local rows = summary.generate_rows(run_of(JUDGED).jobs)
    assert.equals(4, #rows)
    assert.same({ problem = "B", sample = 1, turn = 1, status = "no_code", error = "no code block", cached = false,
                  input_tokens = 20, output_tokens = 5, latency_s = 2 }, rows[3])
    assert.is_true(rows[4].cached)
  end)
end)
