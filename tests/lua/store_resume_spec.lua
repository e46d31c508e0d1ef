-- The bookkeeping --resume relies on: a run whose process is killed (SIGKILL, no finish_run,
-- no clean close) keeps every evaluation it committed, stays 'running', is found again by its
-- config hash, and the database passes integrity_check. The child is this kreach binary.
local kreach = require "kreach"
local store = require "kreach.store"
local lfs = require "lfs"

local CHILD = [[
local store = require "kreach.store"
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
    local d = os.tmpname()
    os.remove(d)
    assert(lfs.mkdir(d))
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
