-- The bookkeeping --resume relies on: a run whose process is killed (SIGKILL, no finish_run,
-- no clean close) keeps every evaluation it committed, stays 'running', is found again by its
-- config hash, and the database passes integrity_check. The child is this kreach binary.
-- Then what `kreach eval --resume` and `--force` do with it, through kreach.run.evaluate.run without a
-- GPU (a stand-in device, and a stub for the workers' evaluation that can die mid-run).
local kreach = require "kreach"
local errors = require "kreach.errors"
local ev = require "kreach.run.evaluate"
local evaluation = require "kreach.results.evaluation"
local store = require "kreach.results.store"
local verdict = require "kreach.verdict"
local lfs = require "lfs"
local support = require "support"

local CHILD = [[
local store = require "kreach.results.store"
local db = assert(store.open(arg[1]))
local run = db:begin_run{ command = { "kreach", "run" }, config = { suite = "s" }, config_hash = "resume-hash" }
for i = 1, 3 do
  db:record_evaluation{ run_id = run, problem = { suite = "s", problem_id = i, name = "p" .. i, file_hash = "f" .. i },
    candidate = { hash = "c" .. i, source = "source " .. i, origin = { sample = i } },
    eval_key = "key-" .. i, dtype = "f32", sizes = { n = i * 1000 }, verdict = "correct",
    candidate_ms = i * 0.5, timing = { candidate = { samples = { i + 0.25, 0 / 0 } } } }
end
io.stdout:write("recorded ", run, "\n")
io.stdout:flush()
while true do end -- killed here, with the database open and the run unfinished
]]

describe("a killed run", function()
  it("keeps its committed evaluations and can be resumed", function()
    local d = support.tmpdir()
    local path = d .. "/results.db"
    local w = assert(kreach.proc.spawn({ kreach.executable(), "-e", CHILD, path }))
    local line, why = w:read_line(60)
    assert.is_not_nil(line, "the child said nothing: " .. tostring(why) .. "\n" .. w:stderr())
    local run = math.tointeger(tonumber(line:match("^recorded (%d+)$")))
    assert.is_not_nil(run, line)
    w:kill()
    local how, _, name = w:wait()
    assert.equals("signaled", how)
    assert.equals("SIGKILL", name)
    w:free()
    -- the committed transactions are in the write-ahead log, not yet in the main file
    assert.is_true((lfs.attributes(path .. "-wal", "size") or 0) > 0)

    local db = assert(store.open(path))
    assert.same({ { integrity_check = "ok" } }, db.sql:query("PRAGMA integrity_check"))
    local r = db:get_run(run)
    assert.equals("running", r.status)
    assert.is_nil(r.finished_at)
    assert.equals(run, db:latest_run{ config_hash = "resume-hash" }.id)
    assert.equals(run, db:latest_run{ config_hash = "resume-hash", status = "running" }.id)
    local evs = db:evaluations{ run_id = run }
    assert.equals(3, #evs)
    for i, e in ipairs(evs) do
      assert.equals("key-" .. i, e.eval_key)
      assert.equals("p" .. i, e.problem_name)
      assert.equals("c" .. i, e.candidate_hash)
      assert.equals(i, e.origin.sample)
      assert.same({ n = i * 1000 }, e.sizes)
      assert.equals(i * 0.5, e.candidate_ms)
      assert.equals(i + 0.25, e.timing.candidate.samples[1])
      assert.is_true(e.timing.candidate.samples[2] ~= e.timing.candidate.samples[2])
    end
    -- resume: the run is this process's now; what is done is found by key, the rest is added
    db:reopen_run(run)
    assert.is_not_nil(db:find_evaluation("key-2"))
    assert.is_nil(db:find_evaluation("key-4"))
    db:record_evaluation{ run_id = run, problem = { name = "p4", file_hash = "f4" }, eval_key = "key-4",
                          dtype = "f32", verdict = "skipped", reason = "resumed" }
    db:finish_run(run, "finished")
    assert.equals(4, #db:evaluations{ run_id = run })
    assert.equals("finished", db:get_run(run).status)
    assert.same({ { integrity_check = "ok" } }, db.sql:query("PRAGMA integrity_check"))
    db:close()
    for f in lfs.dir(d) do
      if f ~= "." and f ~= ".." then os.remove(d .. "/" .. f) end
    end
    lfs.rmdir(d)
  end)
end)

describe("kreach eval --resume and --force", function()
  local restore, dir, db_path, problem_path, cands, evaluated, die_at
  local SINK = { write = function() end, flush = function() end }
  local dirs = {}

  before_each(function()
    -- the workers' evaluation: records what it evaluates; at die_at (a candidate's name) the
    -- process "dies" with that evaluation in flight (nothing of it stored, the run left open)
    restore = support.stand_in_gpu("GPU-0000-resume", function(item, o)
      local name = item.candidate_path:match("([^/]+)%.lua$")
      if name == die_at then error("killed while evaluating " .. name, 0) end
      evaluated[#evaluated + 1] = name
      return evaluation.finish(evaluation.new(item, o), { verdict = verdict.new("correct"), wall_s = 0 })
    end)
    dir = support.tmpdir()
    dirs[#dirs + 1] = dir
    db_path = dir .. "/results.db"
    problem_path = dir .. "/019_ReLU.lua"
    support.spit(problem_path, support.slurp("problems/kernelbench/level1/019_ReLU.lua"))
    cands = {}
    for _, n in ipairs({ "a", "b", "c" }) do
      cands[#cands + 1] = dir .. "/" .. n .. ".lua"
      support.spit(cands[#cands], ("-- candidate %s\nreturn {}\n"):format(n))
    end
  end)
  after_each(function()
    restore()
  end)
  teardown(function() for _, d in ipairs(dirs) do support.rm_tree(d) end end)

  -- eval(o) -> the result of kreach.run.evaluate.run (nil and the error when it raised), and the names
  -- of the candidates it evaluated. o: resume, force, dtype, candidates, die_at.
  local function eval(o)
    o = o or {}
    evaluated, die_at = {}, o.die_at
    local ok, res = pcall(ev.run, { target = problem_path, candidates = o.candidates or cands, dtype = o.dtype or "f32",
                                    db = db_path, resume = o.resume, force = o.force, command = { "kreach", "eval" },
                                    log = function() end, out = SINK })
    if not ok then return nil, res, evaluated end
    return res, nil, evaluated
  end

  -- the runs: { {status, number of evaluations}, ... } in id order
  local function runs()
    local db = assert(store.open(db_path))
    local out = {}
    for _, r in ipairs(db:runs()) do out[#out + 1] = { r.status, #db:evaluations{ run_id = r.id } } end
    db:close()
    return out
  end

  local function nothing_to_resume(res, err)
    assert.is_nil(res, res and ("run %d was resumed"):format(res.run_id))
    assert.is_true(errors.is(err), tostring(err))
    assert.equals(2, errors.status(err))
    assert.truthy(errors.message(err):find("nothing to resume", 1, true), errors.message(err))
  end

  it("continues an interrupted run: what it stored is kept, the evaluation in flight and the rest are made, it finishes", function()
    local res, err, done = eval{ die_at = "b" }
    assert.is_nil(res)
    assert.equals("killed while evaluating b", err)
    assert.same({ "a" }, done)
    assert.same({ { "running", 1 } }, runs())
    local db = assert(store.open(db_path))
    local a_id = db:evaluations()[1].id
    db:close()

    res, err, done = eval{ resume = true }
    assert.is_nil(err)
    assert.same({ "b", "c" }, done)
    assert.equals(1, res.run_id)
    assert.is_true(res.records[1].reused)
    assert.equals(a_id, res.records[1].id)
    assert.is_nil(res.records[2].reused)
    assert.same({ { "finished", 3 } }, runs())

    -- finished now: nothing to resume, and nothing evaluated or begun
    res, err, done = eval{ resume = true }
    nothing_to_resume(res, err)
    assert.same({}, done)
    assert.same({ { "finished", 3 } }, runs())
  end)

  it("resumes only a run still 'running': not a finished one, a failed one, one of another status or of another configuration", function()
    local res, err, done = eval()
    assert.same({ "a", "b", "c" }, done)
    res, err, done = eval{ resume = true }
    nothing_to_resume(res, err)
    assert.same({}, done)

    -- an interrupted run, marked failed afterwards
    res, err = eval{ force = true, die_at = "b" }
    assert.is_nil(res)
    local db = assert(store.open(db_path))
    db:finish_run(2, "failed")
    db:close()
    res, err, done = eval{ resume = true }
    nothing_to_resume(res, err)
    assert.same({}, done)

    -- an interrupted run with some other status
    res, err = eval{ force = true, die_at = "c" }
    assert.is_nil(res)
    db = assert(store.open(db_path))
    db.sql:exec("UPDATE runs SET status = 'aborted' WHERE id = 3")
    db:close()
    res, err, done = eval{ resume = true }
    nothing_to_resume(res, err)
    assert.same({}, done)

    -- interrupted runs of another configuration: another dtype, other candidates
    res, err = eval{ dtype = "f16", die_at = "b" }
    assert.is_nil(res)
    res, err = eval{ candidates = { cands[1], cands[2] }, force = true, die_at = "b" }
    assert.is_nil(res)
    res, err, done = eval{ resume = true }
    nothing_to_resume(res, err)
    assert.same({}, done)
    assert.same({ { "finished", 3 }, { "failed", 1 }, { "aborted", 2 }, { "running", 1 }, { "running", 1 } }, runs())

    -- each of those resumed by its own configuration
    res, err, done = eval{ dtype = "f16", resume = true }
    assert.is_nil(err)
    assert.equals(4, res.run_id)
    assert.same({ "b", "c" }, done)
    res, err, done = eval{ candidates = { cands[1], cands[2] }, resume = true }
    assert.is_nil(err)
    assert.equals(5, res.run_id)
    assert.same({}, done) -- a its own, b stored by an earlier run of the same evaluation configuration
    assert.same({ { "finished", 3 }, { "failed", 1 }, { "aborted", 2 }, { "finished", 3 }, { "finished", 1 } }, runs())
  end)

  it("resumes the newest interrupted run of its configuration, the older one after it", function()
    local res, err = eval{ die_at = "b" }            -- run 1: a stored
    assert.is_nil(res)
    res, err = eval{ force = true, die_at = "a" }    -- run 2: nothing stored
    assert.is_nil(res)
    local done
    res, err, done = eval{ resume = true }
    assert.is_nil(err)
    assert.equals(2, res.run_id)
    assert.same({ "b", "c" }, done)                  -- a: run 1's evaluation is reused
    assert.same({ { "running", 1 }, { "finished", 2 } }, runs())
    res, err, done = eval{ resume = true }
    assert.is_nil(err)
    assert.equals(1, res.run_id)
    assert.same({}, done)                            -- a its own, b and c run 2's
    assert.same({ { "finished", 1 }, { "finished", 2 } }, runs())
  end)

  it("reuses what is stored unless --force; a resumed run keeps its own evaluations even with --force", function()
    local res, err, done = eval()
    assert.same({ "a", "b", "c" }, done)
    res, err, done = eval()
    assert.same({}, done)
    for _, r in ipairs(res.records) do assert.is_true(r.reused) end
    res, err, done = eval{ force = true }
    assert.is_nil(err)
    assert.same({ "a", "b", "c" }, done)
    for _, r in ipairs(res.records) do assert.is_nil(r.reused) end
    assert.same({ { "finished", 3 }, { "finished", 0 }, { "finished", 3 } }, runs())

    -- interrupted with --force after a; resumed without it, b and c are found stored
    res, err, done = eval{ force = true, die_at = "b" }
    assert.same({ "a" }, done)
    res, err, done = eval{ resume = true }
    assert.is_nil(err)
    assert.equals(4, res.run_id)
    assert.same({}, done)
    -- interrupted with --force after a; resumed with it, b and c are evaluated again, a is kept
    res, err, done = eval{ force = true, die_at = "b" }
    assert.same({ "a" }, done)
    res, err, done = eval{ resume = true, force = true }
    assert.is_nil(err)
    assert.equals(5, res.run_id)
    assert.same({ "b", "c" }, done)
    assert.is_true(res.records[1].reused)
    assert.same({ { "finished", 3 }, { "finished", 0 }, { "finished", 3 }, { "finished", 1 }, { "finished", 3 } }, runs())
  end)
end)
