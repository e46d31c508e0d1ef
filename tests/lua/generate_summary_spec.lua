-- `kreach generate --eval`'s evaluation figures are `kreach results summary`'s: the store's
-- evaluations of the run's candidates (kreach.results.summary.generate_results), over the
-- database of tests/lua/summary_store.lua (its header lists every row). --eval needs a GPU, so
-- the command is run here in-process with kreach.generate.session stubbed: a run whose candidates
-- are m-a's of that database (a1..a6, a7 left out) and a reply without a candidate.
local cjson = require "cjson"
local summary = require "kreach.results.summary"
local store = require "kreach.results.store"
local fixture = require "summary_store"

local close = fixture.close

local db_path = fixture.path

local function data()
  local ok, d = store.read(db_path(), summary.read)
  assert(ok, d)
  return d
end

local IDS = { "a1", "a2", "a3", "a4", "a5", "a6" }
local NAMES = { a1 = "1_Matmul", a2 = "1_Matmul", a3 = "1_Matmul", a4 = "1_Matmul", a5 = "1_Matmul", a6 = "19_ReLU" }

-- what kreach.generate.session.run returns for a run whose candidates are IDS, one sample each,
-- and a reply of 23_Softmax without a candidate
local function fake_run()
  local jobs, convs = {}, {}
  local function add(name, row)
    local cv = { inst = { problem = { name = name } }, sample = #convs + 1 }
    local job = { conv = cv, inst = cv.inst, sample = cv.sample, turn = 1, row = row }
    cv.jobs = { job }
    convs[#convs + 1] = cv
    jobs[#jobs + 1] = job
  end
  for _, id in ipairs(IDS) do
    add(NAMES[id], { status = "ok", candidate_hash = "hash-" .. id, candidate_file = id .. ".lua", input_tokens = 10, output_tokens = 20 })
  end
  add("23_Softmax", { status = "no_code", error = "no code block", input_tokens = 10, output_tokens = 5 })
  return { model = "m-a", provider = "openai", priced = false, jobs = jobs, convs = convs, made = #jobs, verdicts = {},
           samples = 1, turns = 1, db = db_path(), out = "gen" }
end

describe("generate_results: results summary over a generate run's evaluations", function()
  it("takes the evaluations of the run's candidates alone, in one group named after the model", function()
    local res = fake_run()
    local hashes = summary.generate_hashes(res.jobs)
    assert.is_true(hashes["hash-a1"])
    assert.is_nil(hashes["hash-a7"])
    local s = summary.generate_results(data(), hashes, { model = "m-a", dtype = "f32" })
    assert.same({ "model" }, s.by)
    assert.equals(1, #s.groups)
    local g = s.groups[1]
    assert.equals("m-a", g.name)
    assert.same({ model = "m-a" }, g.key)
    -- a1 twice (the newest counts), a2..a6 once; a7, m-b's, u1's and the baseline are not this run's
    assert.equals(6, g.evaluations)
    assert.same({ baselines = 0, repeats = 1 }, s.left_out)
    assert.equals(4, g.correct)
    close(4 / 6, g.correct_rate, "correct_rate")
    -- results summary's pass@k: over the problems (1_Matmul 3 of 5, 19_ReLU 1 of 1)
    assert.equals(1, g.pass_at[1].k)
    close((3 / 5 + 1) / 2, g.pass_at[1].value, "pass@1")
    assert.equals(2, g.pass_at[1].problems)
    assert.equals(5, g.pass_at[2].k)
    assert.equals(1, g.pass_at[2].problems)
    -- speedups against kreach's baseline: a1 2.0 (the newest), a2 1.2, a3 0.5, a6 4.0
    assert.equals(4, g.speedup.count)
    assert.equals(2, g.verified.count)
  end)

  it("takes only the evaluations at the run's dtype", function()
    local s = summary.generate_results(data(), summary.generate_hashes(fake_run().jobs), { model = "m-a", dtype = "f16" })
    assert.equals(0, #s.groups)
  end)
end)

describe("kreach generate --eval's summary", function()
  -- the command's run(args) with session.run stubbed; what it writes
  local function run_cmd(args)
    local saved_session, saved_cmd = package.loaded["kreach.generate.session"], package.loaded["kreach.cmd.generate"]
    package.loaded["kreach.generate.session"] = {
      run = function() return fake_run() end,
      eval_hint = function() return "kreach eval '19' 'gen' --db 'x'" end,
    }
    package.loaded["kreach.cmd.generate"] = nil
    local out = {}
    local write = io.write
    io.write = function(...) for _, x in ipairs{ ... } do out[#out + 1] = tostring(x) end end -- luacheck: ignore
    local ok, rc = pcall(function()
      local cmd = require "kreach.cmd.generate"
      local a = { targets = { "19" }, model = "m-a", out = "gen", db = db_path(), dtype = "f32", timeout = 300 }
      for k, v in pairs(args) do a[k] = v end
      return cmd.run(a)
    end)
    io.write = write -- luacheck: ignore
    package.loaded["kreach.generate.session"], package.loaded["kreach.cmd.generate"] = saved_session, saved_cmd
    assert(ok, rc)
    return table.concat(out), rc
  end

  it("prints results summary's figures in place of its own correct line", function()
    local out, rc = run_cmd{ eval = true }
    assert.equals(0, rc)
    assert.matches("m-a (openai): 7 requests made", out, 1, true)
    assert.matches("candidates: 6 of 7 replies (no code 1,", out, 1, true)
    assert.matches("evaluations of these candidates, as kreach results summary gives them", out, 1, true)
    assert.matches("\n  verdicts, correct rate", out, 1, true)
    assert.matches("\n  m%-a +6 ", out)
    assert.matches("66.7%", out, 1, true)
    assert.matches("0.800", out, 1, true)
    assert.is_nil(out:find("\ncorrect:", 1, true), out)
    assert.is_nil(out:find("kreach eval's figures", 1, true), out)
  end)

  it("gives the results summary document under results_summary with --json", function()
    local out, rc = run_cmd{ eval = true, json = true }
    assert.equals(0, rc)
    local j = cjson.decode(out)
    assert.equals("m-a", j.results_summary.groups[1].name)
    assert.equals(6, j.results_summary.groups[1].evaluations)
    close(0.8, j.results_summary.groups[1].pass_at[1].value, "pass@1")
    assert.equals("model", j.results_summary.by[1])
    -- generate's own figures stay; its evaluation figures are results summary's
    assert.equals(7, j.summary.requests)
    assert.equals(1, j.summary.no_code)
    assert.is_nil(j.summary.correct)
    assert.is_nil(j.summary.pass_at)
    assert.is_nil(j.summary.evaluation)
  end)

  it("without --eval, gives no results summary (generate's own figures, as before)", function()
    local out, rc = run_cmd{ json = true }
    assert.equals(0, rc)
    local j = cjson.decode(out)
    assert.is_nil(j.results_summary)
    assert.equals(0, j.summary.correct)
  end)
end)
