-- A results database with known verdicts and speedups, for `kreach results summary`: required by
-- tests/lua/results_summary_groups_spec.lua (build(path)), and run by tests/cli/results_summary.t
-- (kreach tests/lua/summary_store.lua DB). The figures each grouping must give are worked out by
-- hand in the spec's comments.
--
-- Three problems of kernelbench-level1 (1_Matmul, 19_ReLU, 23_Softmax), all f32. Speedups are
-- against kreach's baseline: "x [lo, hi]"; KB = KernelBench's allclose (from check_result).
--   model m-a (the candidate's origin.model), run 1 unless said:
--     a1 1_Matmul   correct        2.0 [1.8, 2.2]   KB pass  vs PyTorch 1.6 [1.5, 1.7]
--                                  (evaluated twice: run 1 gave 1.9 [1.7, 2.1]; run 2, the newest, counts)
--     a2 1_Matmul   correct        1.2 [0.9, 1.5]   KB pass  (not verified: lo below 1)
--     a3 1_Matmul   correct        0.5 [0.45, 0.55] KB fail  (correct but slower; KB disagrees)
--     a4 1_Matmul   incorrect      -                KB fail
--     a5 1_Matmul   compile_error
--     a6 19_ReLU    correct        4.0 [3.0, 5.0]   KB pass  vs PyTorch 0.9 [0.8, 1.0]; 3 calls on
--                                  other streams, a timing warning
--     a7 19_ReLU    incorrect      -                KB pass  (KB disagrees: nondeterministic)
--     a8 23_Softmax runtime_error
--   model m-b (no origin model: the generations table's request that produced it names it):
--     b1 1_Matmul   correct        1.5 [1.1, 1.9]            vs PyTorch 1.2 [0.95, 1.45]
--     b2 19_ReLU    skipped
--     b3 19_ReLU    timeout
--     b4 23_Softmax invalid_candidate
--   no model anywhere ("(unknown)"):
--     u1 23_Softmax correct        1.0 [0.9, 1.1]
--   and 1_Matmul's baseline timed alone (no candidate: left out of every figure).
local store = require "kreach.results.store"

local M = {}

local SUITE = "kernelbench-level1"
local P = {
  matmul = { suite = SUITE, problem_id = 1, name = "1_Matmul", file_hash = "h1", path = "/nowhere/1_Matmul.lua" },
  relu = { suite = SUITE, problem_id = 19, name = "19_ReLU", file_hash = "h19", path = "/nowhere/19_ReLU.lua" },
  softmax = { suite = SUITE, problem_id = 23, name = "23_Softmax", file_hash = "h23", path = "/nowhere/23_Softmax.lua" },
}

local function kb(pass) return { trials = { { kernelbench = { pass = pass } } } } end

-- { id, problem, model in origin, verdict, reason, {speedup, lo, hi}, KB pass, {vs PyTorch}, extra }
local ROWS = {
  { "a1", P.matmul, "m-a", "correct", nil, { 1.9, 1.7, 2.1 }, true, { 1.6, 1.5, 1.7 } },
  { "a2", P.matmul, "m-a", "correct", nil, { 1.2, 0.9, 1.5 }, true },
  { "a3", P.matmul, "m-a", "correct", nil, { 0.5, 0.45, 0.55 }, false },
  { "a4", P.matmul, "m-a", "incorrect", "wrong_values", nil, false },
  { "a5", P.matmul, "m-a", "compile_error", "nvrtc: error" },
  { "a6", P.relu, "m-a", "correct", nil, { 4.0, 3.0, 5.0 }, true, { 0.9, 0.8, 1.0 },
    { timing = { candidate = { method = { method = "in-process", other_streams = 3 } },
                 warnings = { "candidate: 3 calls queued work on other streams" } } } },
  { "a7", P.relu, "m-a", "incorrect", "nondeterministic", nil, true },
  { "a8", P.softmax, "m-a", "runtime_error", "CUDA error: illegal address" },
  { "b1", P.matmul, nil, "correct", nil, { 1.5, 1.1, 1.9 }, nil, { 1.2, 0.95, 1.45 } },
  { "b2", P.relu, nil, "skipped", "no PyTorch" },
  { "b3", P.relu, nil, "timeout", "phase 'time' ran past 60 s" },
  { "b4", P.softmax, nil, "invalid_candidate", "no forward" },
  { "u1", P.softmax, nil, "correct", nil, { 1.0, 0.9, 1.1 } },
}

local function record(db, run, x, speedup)
  local id, p, model, v, reason, s, pass, pt, extra = table.unpack(x, 1, 9)
  s = speedup or s
  local e = { run_id = run, problem = p, eval_key = "key-" .. id, dtype = "f32", verdict = v, reason = reason,
              candidate = { hash = "hash-" .. id, name = id .. ".lua", path = "cands/" .. id .. ".lua", source = "-- " .. id,
                            origin = model and { model = model, sample = 1 } or nil } }
  if s then e.baseline_ms, e.speedup, e.speedup_lo, e.speedup_hi = 1.0, s[1], s[2], s[3]; e.candidate_ms = 1.0 / s[1] end
  if pt then e.pytorch_ms, e.speedup_pytorch, e.speedup_pytorch_lo, e.speedup_pytorch_hi = 1.0, pt[1], pt[2], pt[3] end
  if pass ~= nil then e.check_result = kb(pass) end
  for k, val in pairs(extra or {}) do e[k] = val end
  return db:record_evaluation(e)
end

-- build(path): the database above at path (a new file)
function M.build(path)
  local db = assert(store.open(path))
  local run = db:begin_run{ command = { "kreach", "eval" }, config_hash = "c1" }
  for _, x in ipairs(ROWS) do record(db, run, x) end
  db:record_evaluation{ run_id = run, problem = P.matmul, eval_key = "key-base", dtype = "f32", verdict = "baseline",
                        baseline_ms = 1.0 }
  -- m-b's candidates were made by kreach generate: its requests name the model
  for _, id in ipairs{ "b1", "b2", "b3", "b4" } do
    db:save_generation{ key = "gen-" .. id, prompt = "write " .. id, status = "ok", model = "m-b", provider = "openai",
                        candidate_hash = "hash-" .. id }
  end
  db:finish_run(run, "finished")
  -- a1 again, in a second run: the newest evaluation of a key counts
  local run2 = db:begin_run{ command = { "kreach", "eval" }, config_hash = "c1" }
  record(db, run2, ROWS[1], { 2.0, 1.8, 2.2 })
  db:finish_run(run2, "finished")
  db:close()
end


-- path() -> the fixture database, built once per process in a temporary directory (the specs
-- that share it read it, never write it)
local built
function M.path()
  if not built then
    built = require("support").tmpdir() .. "/s.db" -- require: support is the specs' helper, loaded only when a spec asks
    M.build(built)
  end
  return built
end

-- close(want, got, what): a figure equal to the hand-worked value to 1e-12
function M.close(want, got, what)
  assert(got ~= nil, (what or "value") .. " is nil")
  assert(math.abs(want - got) < 1e-12, ("%s: %.15g ~= %.15g"):format(what or "value", want, got))
end

if arg and arg[0] and arg[0]:match("summary_store%.lua$") then
  M.build(assert(arg[1], "usage: kreach tests/lua/summary_store.lua DB"))
  print("built", arg[1])
end

return M
