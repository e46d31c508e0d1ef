-- The key an evaluation is stored under (its eval_key: kreach.run.evaluate.identify's parts and
-- kreach.run.campaign's key), through kreach.run.evaluate.run without a GPU: the device is a stand-in and
-- the workers' evaluation (kreach.run.evaluate.evaluate) a stub that records what it was asked to
-- evaluate. The key depends on the resolved configuration, the device, the problem file's text
-- and the candidate file's text (docs/evaluation.md, "Storing and resuming"), on nothing else:
-- a changed key evaluates again, the same key reuses what is stored.
local campaign = require "kreach.run.campaign"
local ev = require "kreach.run.evaluate"
local evaluation = require "kreach.results.evaluation"
local store = require "kreach.results.store"
local verdict = require "kreach.verdict"
local lfs = require "lfs"
local support = require "support"

local PROBLEM_19 = "problems/kernelbench/level1/019_ReLU.lua"
local SINK = { write = function() end, flush = function() end }

local tmpdir, rm_tmpdirs = support.tmpdirs()

describe("an evaluation's key", function()
  local restore, dev, evaluated, dir, db_path, problem_path
  before_each(function()
    dev = { uuid = "GPU-11111111-2222-3333-4444-555555555555", name = "a stand-in" }
    evaluated = {}
    restore = support.stand_in_gpu(function() return dev end, function(item, o)
      evaluated[#evaluated + 1] = item.candidate_path
      return evaluation.finish(evaluation.new(item, o), { verdict = verdict.new("correct"), wall_s = 0 })
    end)
    dir = tmpdir()
    db_path = dir .. "/results.db"
    problem_path = dir .. "/019_ReLU.lua"
    support.spit(problem_path, support.slurp(PROBLEM_19))
    support.spit(dir .. "/a.lua", "-- candidate a, version 1\nreturn {}\n")
  end)
  after_each(function()
    restore()
  end)
  teardown(rm_tmpdirs)

  -- run(o) -> the keys of the run's records in order, and the candidates it evaluated (the rest
  -- were reused). o: candidates (paths, default { a.lua }), and kreach.run.evaluate.run's options.
  local function run(o)
    o = o or {}
    evaluated = {}
    local res = ev.run{ target = o.target or problem_path, candidates = o.candidates or { dir .. "/a.lua" },
                        dtype = o.dtype or "f32", sizes = o.sizes, policy = o.policy, timing = o.timing,
                        measure = o.measure, db = db_path, force = o.force, resume = o.resume,
                        command = { "kreach", "eval" }, log = function() end, out = SINK }
    local keys = {}
    for i, r in ipairs(res.records) do keys[i] = r.eval_key end
    return keys, evaluated, res
  end

  it("is XXH3-128 of the canonical text of its parts", function()
    assert.equals("99aa06d3014798d86001c324468d497f", campaign.hash("")) -- XXH3-128's known answer
    -- a change of these changes every key, and no stored evaluation is found again
    assert.equals(campaign.hash('["config","problem","candidate"]'), campaign.key({ "config", "problem", "candidate" }))
  end)

  it("is made of the resolved configuration with the device, the problem file's text and the candidate file's text", function()
    local keys, done = run()
    assert.same({ dir .. "/a.lua" }, done)
    local conf = ev.resolve{ dtype = "f32" }
    conf.pytorch_note = nil
    conf.device = dev.uuid
    local want = campaign.key({ campaign.hash(campaign.canonical(conf)), campaign.hash(support.slurp(problem_path)),
                                campaign.hash(support.slurp(dir .. "/a.lua")) })
    assert.equals(want, keys[1])
    -- the record stored under it is the one found again by it
    local db = assert(store.open(db_path))
    assert.equals(dir .. "/a.lua", db:find_evaluation(want).candidate_path)
    db:close()
  end)

  it("changes with the candidate file's text, and comes back with it", function()
    local k1, done1 = run()
    support.spit(dir .. "/a.lua", "-- candidate a, version 2\nreturn {}\n")
    local k2, done2 = run()
    assert.not_equals(k1[1], k2[1])
    assert.same({ dir .. "/a.lua" }, done1)
    assert.same({ dir .. "/a.lua" }, done2) -- evaluated again
    -- one byte more
    support.spit(dir .. "/a.lua", "-- candidate a, version 2\nreturn {}\n\n")
    local k3, done3 = run()
    assert.not_equals(k2[1], k3[1])
    assert.same({ dir .. "/a.lua" }, done3)
    -- the first text again: the first key, and its evaluation reused
    support.spit(dir .. "/a.lua", "-- candidate a, version 1\nreturn {}\n")
    local k4, done4 = run()
    assert.equals(k1[1], k4[1])
    assert.same({}, done4)
  end)

  it("changes with the problem file's text", function()
    local k1 = run()
    support.spit(problem_path, support.slurp(PROBLEM_19) .. "-- the same problem, one comment more\n")
    local k2, done = run()
    assert.not_equals(k1[1], k2[1])
    assert.same({ dir .. "/a.lua" }, done)
  end)

  it("changes with the correctness policy, the timing and measurement options, the dtype, the sizes and the device", function()
    local base = run()[1]
    local seen = { [base] = "defaults" }
    local variants = {
      { "policy trials", { policy = { trials = 3, repeat_trial = 1 } } },
      { "policy seed", { policy = { seed = 2 } } },
      { "policy tolerance", { policy = { tol = { f32 = { rel_l2 = 2e-4, max_scaled = 1e-3 } } } } },
      { "timing budget", { timing = { budget_s = 1.5 } } },
      { "timing mode", { timing = { mode = "hot" } } },
      { "measure sets", { measure = { sets = 3 } } },
      { "dtype", { dtype = "f16" } },
      { "sizes", { sizes = { batch_size = 8 } } },
    }
    for _, v in ipairs(variants) do
      local keys, done = run(v[2])
      assert.is_nil(seen[keys[1]], v[1] .. " gives the key of " .. tostring(seen[keys[1]]))
      seen[keys[1]] = v[1]
      assert.same({ dir .. "/a.lua" }, done, v[1] .. " reused an evaluation of another configuration")
    end
    dev = { uuid = "GPU-99999999-2222-3333-4444-555555555555", name = "another stand-in" }
    local keys, done = run()
    assert.is_nil(seen[keys[1]], "another device gives the key of " .. tostring(seen[keys[1]]))
    assert.same({ dir .. "/a.lua" }, done)
  end)

  it("is the same for the same resolved configuration: an option given at its default changes nothing", function()
    local k1 = run()
    local k2, done = run{ policy = { trials = 5 }, timing = { mode = "cold" } }
    assert.equals(k1[1], k2[1])
    assert.same({}, done)
  end)

  it("does not change with the candidate's path or name, the run, or the other candidates", function()
    local k1, done1, r1 = run()
    assert.same({ dir .. "/a.lua" }, done1)
    -- the same text under another name, in another directory
    assert(lfs.mkdir(dir .. "/elsewhere"))
    support.spit(dir .. "/elsewhere/renamed.lua", support.slurp(dir .. "/a.lua"))
    local k2, done2, r2 = run{ candidates = { dir .. "/elsewhere/renamed.lua" } }
    assert.equals(k1[1], k2[1])
    assert.same({}, done2)
    assert.not_equals(r1.run_id, r2.run_id) -- another run
    -- beside another candidate, in another order, another run again
    support.spit(dir .. "/b.lua", "-- candidate b\nreturn {}\n")
    local k3, done3 = run{ candidates = { dir .. "/b.lua", dir .. "/a.lua" } }
    assert.equals(k1[1], k3[2])
    assert.not_equals(k1[1], k3[1])
    assert.same({ dir .. "/b.lua" }, done3)
    -- the target named as the suite's problem instead of the file: the same text, the same key
    support.spit(problem_path, support.slurp(PROBLEM_19))
    local k4, done4 = run{ target = "19" }
    assert.equals(k1[1], k4[1])
    assert.same({}, done4)
  end)
end)
