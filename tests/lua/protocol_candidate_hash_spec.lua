-- The worker checks the candidate's bytes against the hash the parent recorded
-- (spec.candidate_hash: kreach.run.evaluate's identify, kreach.run.campaign.hash of the file):
-- bytes with another hash are invalid_candidate, "the file changed after it was recorded",
-- before any of the candidate's code runs; bytes with the recorded hash are judged as they are.
-- Driven through the worker's lint job (no GPU: sm_90's compile, a dry run) and its check job
-- on the host device (KREACH_DEVICE=host, which ctest sets for protocol_ specs), where the
-- refusal comes before the trials.
local campaign = require "kreach.run.campaign"
local protocol = require "kreach.run.protocol"
local support = require "support"
local worker = require "kreach.run.worker"

local host_ok, host = pcall(require, "kreach.host")
local SIZES = { batch_size = 2, dim = 8 }

-- a copy of the ReLU candidate, its recorded hash, and a way to change it afterwards
local function recorded()
  local path = support.tmpfile("_relu.lua")
  local text = support.slurp("tests/candidates/019_relu.lua")
  support.spit(path, text)
  return path, campaign.hash(text)
end

local function run(job, path, hash)
  local spec = { problem = "19", candidate = path, sizes = SIZES, candidate_hash = hash }
  if job == "lint" then spec.arch = "sm_90" end
  return worker.run(protocol.argv(job, spec), { timeout_s = 120 })
end

describe("the worker and the candidate's recorded hash", function()
  it("lints bytes that have the recorded hash", function()
    local path, hash = recorded()
    local r, failed = run("lint", path, hash)
    assert.is_nil(failed)
    assert.is_nil(r.verdict)
    assert.equals(1, r.report.launches)
  end)

  it("refuses a file that changed after it was recorded: invalid_candidate, nothing run", function()
    local path, hash = recorded()
    -- the file changed after its hash was recorded: a forward that would launch nothing
    support.spit(path, support.slurp(path):gsub("forward = function%(k, ([^)]*)%)", "forward = function(k, %1) do return end"))
    local r, failed = run("lint", path, hash)
    assert.is_nil(failed)
    assert.equals("invalid_candidate", r.verdict.verdict)
    assert.matches("the file changed after it was recorded", r.verdict.reason)
    assert.matches(hash, r.verdict.reason, 1, true)
    assert.is_nil(r.report)
  end)

  it("without a recorded hash, judges the file as it is", function()
    local path = recorded()
    local r, failed = run("lint", path, nil)
    assert.is_nil(failed)
    assert.is_nil(r.verdict)
  end)

  it("refuses a changed file in the check job too, and checks an unchanged one", function()
    if not (host_ok and host.active()) then
      error("KREACH_DEVICE=host is not set (or this kreach has no host device): ctest sets it for protocol_ specs")
    end
    local path, hash = recorded()
    local r, failed = run("check", path, hash)
    assert.is_nil(failed)
    -- past the hash: its trials ran (what they found depends on this machine's host device,
    -- whose emulation the sealed worker may not be able to compile)
    assert.is_nil((r.verdict.reason or ""):find("changed after it was recorded", 1, true))
    assert.equals("19_ReLU", r.problem)
    support.spit(path, support.slurp(path) .. "\n-- one more line\n")
    r, failed = run("check", path, hash)
    assert.is_nil(failed)
    assert.equals("invalid_candidate", r.verdict.verdict)
    assert.matches("the file changed after it was recorded", r.verdict.reason)
    assert.same({}, r.trials)
  end)
end)
