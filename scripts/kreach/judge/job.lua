-- kreach.judge.job: a job the worker runs (`kreach worker <job> <spec>`, docs/candidates.md):
-- lint, check, time or calibrate, on the spec kreach.run.protocol decoded. It owns the judging
-- side of the worker: the problem's instance, the candidate's bytes (read once; where the parent
-- recorded their hash, spec.candidate_hash: kreach.run.evaluate's identify, kreach.run.campaign.hash
-- of the file's bytes, bytes with another hash are invalid_candidate: the file changed after it
-- was recorded), the Python sessions (a KernelBench-format candidate's, PyTorch's for the time
-- job), and the call of kreach.judge.check, kreach.judge.measure, kreach.judge.calibrate or the
-- Lua format's lint. The process side (entering the worker, the seal, the protocol's lines) is
-- kreach.run's and comes in through ctx (judge/ never requires run/):
--   ctx.phase(name)            announces a phase (kreach.run.worker.phase)
--   ctx.seal(o) -> ok          the end of the setup: the seal (kreach.run.seal.apply with the
--                              problem roots); false when the worker cannot be sealed
--   ctx.python_sandbox(key, read_dirs) -> { dirs, fd, record } | nil, why
--                              a KernelBench-format candidate's build directories and the
--                              Landlock ruleset its Python worker applies to itself (fd false:
--                              none), kreach.run.seal.python_build_dirs and python_ruleset
--   ctx.close_fd(fd)           closes the ruleset once the Python worker has it
local calibrate = require "kreach.judge.calibrate"
local candidate = require "kreach.candidate"
local check = require "kreach.judge.check"
local cudnn = require "kreach.cudnn"
local lua_format = require "kreach.candidate.lua"
local measure = require "kreach.judge.measure"
local problem = require "kreach.problem"
local pycandidate = require "kreach.candidate.python"
local pytorch = require "kreach.pytorch"
local util = require "kreach.core.util"
local verdict = require "kreach.verdict"

local M = {}

-- read_candidate(fmt, spec) -> the candidate's bytes | nil, why it cannot be read | nil, nil,
-- the invalid_candidate verdict of bytes whose hash is not the one the parent recorded
-- (spec.candidate_hash; kreach.run.campaign.hash is kreach.core.util.hash)
function M.read_candidate(fmt, spec)
  local source, err = fmt.read(spec.candidate)
  if not source then return nil, err end
  if spec.candidate_hash and util.hash(source) ~= spec.candidate_hash then
    return nil, nil, verdict.new("invalid_candidate", ("%s: the file changed after it was recorded (its bytes hash to %s, the recorded hash is %s)"):format(
      spec.candidate, util.hash(source), spec.candidate_hash))
  end
  return source
end

-- The result of a job refused before the candidate ran: lint's is its verdict alone.
local function refusal(name, spec, inst, v)
  if name == "lint" or name == "build" then return { verdict = v } end
  return { problem = inst.problem.name, dtype = inst.dtype, candidate = spec.candidate, trials = {}, verdict = v }
end

-- PyTorch's worker starts before the seal (it reads PyTorch's installation), under kreach's
-- reaper (the sealed worker may not signal it: a kill closes its watch pipe). A KernelBench-
-- format candidate runs in it: then it gets the Landlock ruleset it applies to itself before
-- the candidate's module runs, and the candidate's build directories.
-- start_python(name, spec, fmt, ctx) -> { source, py, torch_session, torch_note } | nil, the
-- verdict the job is refused with
local function start_python(name, spec, fmt, ctx)
  local s = {}
  if fmt and fmt.needs_python and (name == "check" or name == "time" or name == "build") then
    local function runtime_error(why) return nil, verdict.new("runtime_error", why) end
    if not spec.python then return runtime_error("a KernelBench-format candidate needs a python3 with CUDA PyTorch (spec.python)") end
    local source, rerr, changed = M.read_candidate(fmt, spec)
    if changed then return nil, changed end
    if not source then return runtime_error(rerr) end
    local box, berr = ctx.python_sandbox(pycandidate.key(source), spec.python.dirs)
    if not box then return runtime_error(berr) end
    local fd = box.fd
    s.source = source
    s.torch_session, s.torch_note = pytorch.start{ python = spec.python.python, ruleset = fd or nil, reap = true,
                                                   cudnn_tf32 = spec.pytorch and spec.pytorch.cudnn_tf32 or false }
    if fd then ctx.close_fd(fd) end
    if not s.torch_session then return runtime_error("cannot start the Python worker: " .. tostring(s.torch_note)) end
    s.py = { session = s.torch_session, source = source, dirs = box.dirs, seal = fd and true or false, seal_record = box.record }
  elseif name == "time" and spec.pytorch then
    s.torch_session, s.torch_note = pytorch.start{ python = spec.pytorch.python, cudnn_tf32 = spec.pytorch.cudnn_tf32, reap = true }
  end
  return s
end

-- The judging itself, once sealed: check, time or lint with the candidate's bytes.
local function judge(name, spec, inst, s, ctx)
  local py, torch_session = s.py, s.torch_session
  if name == "check" then
    local res = check.run(inst, spec.candidate, { policy = spec.policy, phase = ctx.phase, python = py, source = s.source })
    if py then res.python = res.python or {}; res.python.seal = py.seal_record; torch_session:close() end
    return res
  end
  if name == "time" then
    local res = measure.time(inst, {
      candidate = spec.candidate, source = s.source, policy = spec.policy, timing = spec.timing, measure = spec.measure,
      calibration = spec.calibration, phase = ctx.phase, arch = spec.arch, python = py, draw_salt = spec.draw_salt,
      pytorch = torch_session and spec.pytorch and { session = torch_session, compile = spec.pytorch.compile } or nil })
    if py then res.python = res.python or {}; res.python.seal = py.seal_record end
    if torch_session then torch_session:close() end
    if spec.pytorch and not torch_session then res.pytorch_note = "PyTorch not timed: " .. tostring(s.torch_note) end
    return res
  end
  if name == "build" then return M.build(inst, spec, s, ctx) end
  local v, report = lua_format.lint(inst, spec.candidate, { arch = spec.arch, phase = ctx.phase, source = s.source })
  return { verdict = v, report = report }
end

-- build(inst, spec, s, ctx) -> the build job's result: the candidate opened as the check and
-- time jobs open it, which compiles it into the caches (a Lua candidate's NVRTC program, for
-- spec.arch when given, else the device's; a KernelBench-format candidate's load_inline
-- builds, in the Python worker), then closed: { built = true, compile_ms = } or { verdict =
-- the verdict of its load or build }. kreach.run.builds runs it ahead of the GPU worker.
function M.build(inst, spec, s, ctx)
  if s.py then
    ctx.phase("load")
    local runner, v = pycandidate.open(s.py.session, inst, spec.candidate, { source = s.source, dirs = s.py.dirs, seal = s.py.seal })
    if runner and runner.close then runner:close() end
    s.torch_session:close()
    if not runner then return { verdict = v } end
    return { built = true }
  end
  local opened, v = lua_format.open(inst, spec.candidate, { phase = ctx.phase, source = s.source, arch = spec.arch })
  if not opened then return { verdict = v } end
  local res = { built = true, compile_ms = opened.compile_ms }
  opened:close()
  return res
end

-- run(name, spec, ctx) -> the job's result (the worker's "result" line) | nil when the worker
-- could not be sealed (ctx.seal said why).
function M.run(name, spec, ctx)
  if name == "calibrate" then
    if not ctx.seal({ device = true, nvml = true }) then return nil end
    local opts = spec.options or {}
    opts.phase = ctx.phase
    return { calibration = calibrate.measure(opts) }
  end
  local inst = problem.load(problem.resolve(spec.problem)):instantiate{ dtype = spec.dtype, sizes = spec.sizes }
  inst:validate()
  -- a convolution's baseline is cuDNN's where it is installed: it is found and loaded now,
  -- before the seal (the search runs python3 and reads directories a sealed worker may not;
  -- kreach.run.seal then preloads cuDNN's own libraries)
  if name ~= "lint" and inst.problem.category == "convolution" then cudnn.available() end
  local fmt = spec.candidate and candidate.kind(spec.candidate)
  local s, refused = start_python(name, spec, fmt, ctx)
  if not s then return refusal(name, spec, inst, refused) end
  if not ctx.seal({ candidate = spec.candidate, problem = inst.problem.path,
                    device = (name ~= "lint" and name ~= "build") or not spec.arch or (fmt and fmt.needs_python) or false, nvml = name == "time" }) then
    return nil
  end
  -- read once, sealed (a file that cannot be read is left to the candidate's load to say so)
  if fmt and not s.source then
    local source, _, changed = M.read_candidate(fmt, spec)
    if changed then return refusal(name, spec, inst, changed) end
    s.source = source
  end
  return judge(name, spec, inst, s, ctx)
end

return M
