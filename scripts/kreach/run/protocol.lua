-- kreach.run.protocol: what crosses between the harness and a worker process (docs/candidates.md,
-- "Workers"), both directions, in one place. The parent resolves every option once (the
-- correctness policy, the timing and measurement options: their defaults applied and checked),
-- hashes that whole configuration (kreach.run.campaign) and sends the same tables whole, as one
-- JSON argument:
--   kreach worker <job> <spec>
-- The worker decodes the spec (decode_spec) and answers with phase lines and one result line
-- (result_line), which the parent decodes (decode_result). Numbers cross exactly, NaN and the
-- infinities as bare tokens (kreach.json's store convention).
local core = require "kreach.core"
local json = require "kreach.json"

local M = {}

M.JOBS = { lint = true, check = true, time = true, calibrate = true, build = true }

-- The fields of a spec, with their types; a job's own required ones below.
local FIELDS = {
  problem = "string", candidate = "string", dtype = "string", sizes = "table", arch = "string",
  policy = "table", timing = "table", measure = "table", calibration = "table", options = "table",
  pytorch = "table", python = "table", draw_salt = "number", candidate_hash = "string",
}
local REQUIRED = {
  lint = { "problem", "candidate" }, check = { "problem", "candidate" }, time = { "problem" },
  calibrate = {},
  -- a candidate built ahead of the GPU worker (kreach.run.builds): compiled into the caches
  build = { "problem", "candidate" },
}

local function encode(v) return json.encode(v, { nonfinite = "token" }) end

-- check(job, spec) -> spec, or nil and what is wrong with it
function M.check(job, spec)
  if not M.JOBS[job] then return nil, ("unknown job '%s' (lint, check, time, calibrate, build)"):format(tostring(job)) end
  if type(spec) ~= "table" then return nil, "the spec is not an object" end
  for k, v in pairs(spec) do
    local want = FIELDS[k]
    if not want then return nil, ("unknown field '%s'"):format(tostring(k)) end
    if type(v) ~= want then return nil, ("field '%s' must be a %s, got %s"):format(k, want, type(v)) end
  end
  for _, k in ipairs(REQUIRED[job]) do
    if spec[k] == nil then return nil, ("job '%s' needs field '%s'"):format(job, k) end
  end
  for k, v in pairs(spec.sizes or {}) do
    if type(k) ~= "string" or math.type(v) ~= "integer" or v < 1 then
      return nil, ("size '%s' must be a positive integer"):format(tostring(k))
    end
  end
  return spec
end

-- argv(job, spec) -> the worker's command line. spec: { problem = path, candidate = path (not
-- for the baseline alone), candidate_hash = (kreach.run.campaign.hash of the candidate file's
-- bytes, as the parent read them: kreach.run.plan.identify), dtype =, sizes = {name = n},
-- arch = "sm_90" (lint), policy = (kreach.judge.check.policy's result), timing = (kreach.judge.timing.options'), measure =
-- (kreach.judge.measure.options'), calibration = (this device's, for time), options = (calibrate's),
-- pytorch = { python =, compile = bool, cudnn_tf32 = bool } (time: PyTorch timed beside),
-- python = { python =, dirs = } (a KernelBench-format candidate: the interpreter that runs it
-- and the directories its seal lets it read, kreach.pytorch.find's), draw_salt = (time: added
-- to the timed inputs' seeds, kreach.run.pair.draw_salt) }.
-- Raises on a spec that check refuses: the harness built it.
function M.argv(job, spec)
  spec = spec or {}
  local ok, err = M.check(job, spec)
  if not ok then error("worker spec: " .. err, 2) end
  return { core.executable(), "worker", job, encode(spec) }
end

-- decode_spec(job, text) -> spec, or nil and why it cannot be used (the worker's side).
function M.decode_spec(job, text)
  local ok, spec = pcall(json.decode, text or "{}")
  if not ok then return nil, "the spec is not JSON: " .. tostring(spec) end
  return M.check(job, spec)
end

-- The time limits of a job's phases, from the worker time limit (--timeout) and the spec: a
-- timing worker's sampling gets ten times its budget and warm-up.
function M.timeouts(job, spec, timeout_s)
  -- a KernelBench-format candidate: PyTorch's import, the candidate's load_inline builds (load)
  -- and a Triton kernel's compile at its first call
  local py = spec.python and {
    setup = math.max(timeout_s, 300), load = math.max(timeout_s, 960), ["trial1.forward"] = math.max(timeout_s, 660),
  } or nil
  if job ~= "time" or not spec.timing then return py end
  local t = spec.timing
  local timing = math.max(timeout_s, 10 * (t.budget_s + 2 * t.warmup_s) + 30)
  if not spec.pytorch and not py then return { timing = timing } end
  -- PyTorch's worker imports torch and builds the model (setup, pytorch); a compiled model
  -- compiles at its first call, in the timing phase
  local compile = (spec.pytorch and spec.pytorch.compile) and 600 or 0
  return { timing = timing + compile + (py and 600 or 0) + 60, pytorch = math.max(timeout_s, 300 + compile),
           setup = math.max(timeout_s, 300), load = py and py.load or nil }
end

-- ---- the result line ----

-- result_line(t) -> the line a worker ends with: "result <json>".
function M.result_line(t) return "result " .. encode(t) end

-- decode_result(json_text) -> the table, or nil and why not.
function M.decode_result(s)
  local ok, t = pcall(json.decode, s)
  if not ok then return nil, tostring(t) end
  if type(t) ~= "table" then return nil, "not an object" end
  return t
end

return M
