-- kreach.run.pair: one (problem, candidate) pair judged through the workers, the parent's side
-- (the run stage: kreach.run.plan's header). The in-process lint of the candidate's format
-- (kreach.candidate: kind(path).lint), the correctness job in a worker process, and the timing
-- job in a second, fresh one: each job's spec is built here, once, for kreach eval (through
-- kreach.run.evaluate), kreach check, kreach bench (the time job of a baseline alone) and
-- kreach generate --eval. The spec carries the candidate file's hash (kreach.run.campaign.hash
-- of its bytes, as kreach.run.plan.identify computes it), so that the worker judges the bytes
-- the parent hashed and stores.
local campaign = require "kreach.run.campaign"
local candidate = require "kreach.candidate"
local core = require "kreach.core"
local device = require "kreach.device"
local errors = require "kreach.errors"
local jpolicy = require "kreach.judge.policy"
local problem = require "kreach.problem"
local protocol = require "kreach.run.protocol"
local pytorch = require "kreach.pytorch"
local seal = require "kreach.run.seal"
local verdict = require "kreach.verdict"
local worker = require "kreach.run.worker"

local M = {}

-- draw_salt() -> a whole number in [2^40, 2^41) from /dev/urandom: added to the seeds of the
-- timed calls' inputs (kreach.judge.measure), so that a candidate cannot know them in advance (the
-- trials' seeds are --seed's, and a candidate that memorised answers to the trials' inputs
-- would be found while timing). Not part of the evaluation's key: an evaluation's inputs are a
-- random draw, stored with it (sets.draw_salt).
function M.draw_salt()
  local f = assert(io.open("/dev/urandom", "rb"))
  local b = f:read(5)
  f:close()
  local n = 0
  for i = 1, 5 do n = n * 256 + b:byte(i) end
  return (1 << 40) + n
end

-- find_python() -> { python =, dirs = } (what a worker needs to run a KernelBench-format
-- candidate: the interpreter and the directories its seal lets it read), or nil and why not.
function M.find_python()
  if not core.has_device() then return nil, "no CUDA device" end
  local found, why = pytorch.find()
  if not found then return nil, why .. " (KREACH_PYTHON names a python3 with CUDA PyTorch)" end
  return { python = found.python, dirs = found.dirs }
end

-- The spec of a worker job on an item (kreach.run.protocol): its problem, its candidate (none
-- for a baseline alone) and the candidate's hash, the dtype and sizes, and the job's extra.
local function worker_spec(item, o, extra)
  local spec = { problem = item.problem_path, candidate = item.candidate_path, candidate_hash = item.candidate_hash,
                 dtype = o.dtype, sizes = o.sizes }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return spec
end

-- The worker's limits of a job (kreach.run.worker.run's): o.timeout_s, o.memory_bytes,
-- o.lua_memory_bytes (nil: kreach.run.worker.lua_memory_bytes), and the phases' time limits.
-- hooks (optional): idle (called while the worker runs: the build pool is serviced there),
-- on_phase(name), env (more variables: a device's CUDA_VISIBLE_DEVICES), kreach.run.worker.run's.
local function limits(job, spec, o, hooks)
  hooks = hooks or {}
  return { timeout_s = o.timeout_s, memory_bytes = o.memory_bytes, lua_memory_bytes = o.lua_memory_bytes,
           timeouts = protocol.timeouts(job, spec, o.timeout_s or worker.DEFAULT_TIMEOUT_S),
           idle = hooks.idle, on_phase = hooks.on_phase, env = hooks.env }
end

-- build_job(item, o, python) -> the argv and the worker options of the item's build job (the
-- candidate compiled into the caches ahead of the GPU worker: kreach.run.builds). o: dtype,
-- sizes, arch (what a Lua candidate is compiled for: the device's; required without a GPU),
-- timeout_s, memory_bytes, lua_memory_bytes, env (a build worker's extra variables).
function M.build_job(item, o, python)
  local spec = worker_spec(item, o, { arch = o.arch, python = python })
  return protocol.argv("build", spec), limits("build", spec, o, { env = o.env })
end

-- lint(item, o) -> the verdict of the in-process checks of the candidate's format
-- (kreach.candidate: a KernelBench-format file's static lint), or nil when it goes to the
-- workers (and always with o.no_lint, --no-lint). prob: the problem, loaded (default: loaded
-- from item.problem_path).
function M.lint(item, o, prob)
  if o.no_lint then return nil end
  local k = candidate.kind(item.candidate_path)
  return (k.lint(item.candidate_path, prob or problem.load(item.problem_path)))
end

-- correctness(item, o, python, hooks) -> the correctness job's result for one pair, run in a worker
-- (the trials and the verdict: kreach.judge.check's, in the worker), or nil and the verdict of a
-- worker that failed (kreach.run.worker.run). o: dtype, sizes, policy (resolved), timeout_s,
-- memory_bytes, lua_memory_bytes; python: { python =, dirs = } for a candidate whose format
-- runs in the Python worker (find_python).
function M.correctness(item, o, python, hooks)
  local spec = worker_spec(item, o, { policy = o.policy, python = python })
  return worker.run(protocol.argv("check", spec), limits("check", spec, o, hooks))
end

-- time(item, o, calibration, python) -> the time job's result for one item, run in a fresh
-- worker (kreach.judge.measure's, in the worker), or nil and the verdict of a worker that
-- failed. An item without a candidate times its problem's baseline alone (kreach bench). o: as
-- correctness's, and timing, measure (resolved), pytorch (PyTorch timed beside), random_draws
-- (the timed inputs' seeds salted: draw_salt); calibration: this device's (kreach.run.campaign);
-- hooks: as correctness's, and pause/resume (the build pool's): builds are paused while the
-- worker is in a timed phase (M.TIMED_PHASES) and resumed after it.
M.TIMED_PHASES = { timing = true, pytorch = true }
function M.time(item, o, calibration, python, hooks)
  local spec = worker_spec(item, o, { policy = o.policy, timing = o.timing, measure = o.measure,
                                      calibration = calibration, pytorch = o.pytorch, python = python,
                                      draw_salt = o.random_draws and M.draw_salt() or nil })
  hooks = hooks or {}
  local h = { idle = hooks.idle, env = hooks.env }
  if hooks.pause then
    h.on_phase = function(p)
      if M.TIMED_PHASES[p] then hooks.pause() else hooks.resume() end
    end
  end
  local r, failed = worker.run(protocol.argv("time", spec), limits("time", spec, o, h))
  if hooks.resume then hooks.resume() end
  return r, failed
end

-- check(o) -> the correctness job's result of one pair, as kreach check reports it ({ problem,
-- dtype, candidate, verdict, trials, ... }): no timing, nothing stored. A candidate its
-- format's lint refuses, or a file that cannot be read (missing, a directory, too large), is
-- refused without a GPU; then the device is required, a KernelBench-format candidate's python3,
-- and the seal (each missing one raises: kreach.errors.STATUS.load), and the policy resolved (a
-- bad override is a usage error). o: problem (loaded), candidate (path), dtype, sizes, policy
-- (overrides), no_lint, timeout_s, memory_bytes, lua_memory_bytes.
function M.check(o)
  local prob, path = o.problem, o.candidate
  local function refused(v) return { problem = prob.name, dtype = o.dtype, candidate = path, verdict = v, trials = {} } end
  local k = candidate.kind(path)
  local item = { problem_path = prob.path, candidate_path = path }
  local lv = M.lint(item, o, prob)
  if lv then return refused(lv) end
  local source, rerr = k.read(path)
  if not source then return refused(verdict.new("invalid_candidate", rerr)) end
  item.candidate_hash = campaign.hash(source)
  device.require("kreach check")
  local python
  if k.needs_python then
    local why
    python, why = M.find_python()
    if not python then errors.raise(errors.STATUS.load, ("%s: a KernelBench-format candidate runs in a python3 with CUDA PyTorch: %s"):format(path, why), "python") end
  end
  local sok, serr = seal.check_available("check")
  if not sok then errors.raise(errors.STATUS.load, serr, "seal") end
  local okp, policy = pcall(jpolicy.check, o.policy)
  if not okp then errors.usage(errors.message(policy)) end
  policy.steps = nil
  local res, failed = M.correctness(item, { dtype = o.dtype, sizes = o.sizes, policy = policy, timeout_s = o.timeout_s,
                                            memory_bytes = o.memory_bytes, lua_memory_bytes = o.lua_memory_bytes }, python)
  return res or refused(failed)
end

return M
