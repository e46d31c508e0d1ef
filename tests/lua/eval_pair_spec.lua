-- kreach.run.pair without a GPU: the one (problem, candidate) judgment that kreach eval
-- (kreach.run.evaluate.evaluate) and kreach check (kreach.run.pair.check) share. The workers are
-- stand-ins (kreach.run.worker.run records the spec it was given, decoded the worker's way), so
-- what is asserted is what the parent sends and what it makes of the answers: the candidate's
-- hash in the check and time jobs' specs, the lint and an unreadable file refused before any
-- worker, a worker's failure kept as the verdict.
local campaign = require "kreach.run.campaign"
local device = require "kreach.device"
local ev = require "kreach.run.evaluate"
local pair = require "kreach.run.pair"
local problem = require "kreach.problem"
local protocol = require "kreach.run.protocol"
local seal = require "kreach.run.seal"
local verdict = require "kreach.verdict"
local worker = require "kreach.run.worker"
local support = require "support"

local PROBLEM_19 = "problems/kernelbench/level1/019_ReLU.lua"
local CANDIDATE = "tests/candidates/019_relu.lua"

describe("one pair through the workers", function()
  local saved, jobs, answers
  before_each(function()
    saved = { run = worker.run, require = device.require, available = seal.check_available }
    jobs, answers = {}, {}
    worker.run = function(argv, limits)
      local job = argv[3]
      jobs[#jobs + 1] = { job = job, spec = assert(protocol.decode_spec(job, argv[4])), limits = limits }
      local a = answers[job] or { verdict = verdict.new("correct"), trials = {} }
      if a.failed then return nil, a.failed end
      return a
    end
    device.require = function() return { uuid = "GPU-pair", name = "a stand-in" } end
    seal.check_available = function() return true end
  end)
  after_each(function()
    worker.run, device.require, seal.check_available = saved.run, saved.require, saved.available
  end)

  it("sends the candidate file's hash, as identify computes it, to the check and time jobs of an evaluation", function()
    local items = ev.plan(PROBLEM_19, { CANDIDATE })
    local item = items[1]
    ev.identify(item)
    item.eval_key = "k"
    local want = campaign.hash(support.slurp(CANDIDATE))
    assert.equals(want, item.candidate_hash)
    local rec = ev.evaluate(item, { dtype = "f32", sizes = {}, policy = {}, timing = { budget_s = 1, warmup_s = 0.5 },
                                    timeout_s = 5 }, {})
    assert.equals("correct", rec.verdict)
    assert.same({ "check", "time" }, { jobs[1].job, jobs[2].job })
    for _, j in ipairs(jobs) do
      assert.equals(want, j.spec.candidate_hash)
      assert.equals(CANDIDATE, j.spec.candidate)
    end
  end)

  it("checks one pair for kreach check: the correctness job only, with the hash; a failed worker is the verdict", function()
    local prob = problem.load(PROBLEM_19)
    local res = pair.check{ problem = prob, candidate = CANDIDATE, dtype = "f32", sizes = {}, policy = { trials = 2 },
                            timeout_s = 5, lua_memory_bytes = 64 * 1024 * 1024 }
    assert.equals("correct", res.verdict.verdict)
    assert.equals(1, #jobs)
    assert.equals("check", jobs[1].job)
    assert.equals(campaign.hash(support.slurp(CANDIDATE)), jobs[1].spec.candidate_hash)
    assert.equals(2, jobs[1].spec.policy.trials) -- the policy resolved from the overrides
    assert.equals(64 * 1024 * 1024, jobs[1].limits.lua_memory_bytes)
    answers.check = { failed = verdict.new("runtime_error", "the worker died") }
    res = pair.check{ problem = prob, candidate = CANDIDATE, dtype = "f32", sizes = {}, timeout_s = 5 }
    assert.equals("runtime_error", res.verdict.verdict)
    assert.equals(prob.name, res.problem)
    assert.equals(CANDIDATE, res.candidate)
  end)

  it("refuses a file that cannot be read before the device, the seal or a worker", function()
    device.require = function() error("the device was required") end
    local res = pair.check{ problem = problem.load(PROBLEM_19), candidate = "tests/candidates/nosuch.lua", dtype = "f32",
                            sizes = {}, timeout_s = 5 }
    assert.equals("invalid_candidate", res.verdict.verdict)
    assert.matches("nosuch.lua: cannot read the candidate", res.verdict.reason)
    assert.same({}, res.trials)
    assert.equals(0, #jobs)
  end)

  it("times a baseline alone with no candidate in the spec", function()
    local r = pair.time({ problem_path = PROBLEM_19 }, { dtype = "f32", sizes = {}, timing = { budget_s = 1, warmup_s = 0.5 },
                                                         timeout_s = 5 })
    assert.is_table(r)
    assert.is_nil(jobs[1].spec.candidate)
    assert.is_nil(jobs[1].spec.candidate_hash)
    assert.is_nil(jobs[1].spec.draw_salt)
  end)
end)
