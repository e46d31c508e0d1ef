-- kreach worker <job> <spec>: the worker side of kreach.run.worker (docs/candidates.md). Started by
-- the harness, never by hand: it announces its phases and ends with one "result" line. The
-- spec is one JSON object, written and read by kreach.run.protocol (the problem, the candidate, the
-- dtype and sizes, and the options the parent resolved: policy, timing, measure, calibration,
-- arch, or calibrate's options).
-- A worker dies with its parent (so that a harness killed with SIGKILL leaves nothing running
-- on the GPU): the kernel's PR_SET_PDEATHSIG, and a thread that watches the pipe the parent
-- holds (kreach.run.seal). It is sealed (docs/candidates.md, "The seal"): its memory is limited from
-- its first line, and once its setup is done (the CUDA context, NVML, the problem), before it
-- reads the candidate, Landlock confines what it can open.
-- The candidate's file is read once, and its code loaded from those bytes; where the parent
-- recorded their hash (spec.candidate_hash: kreach.run.evaluate's identify, kreach.run.campaign.hash
-- of the file's bytes), bytes with another hash are invalid_candidate: the file changed after
-- it was recorded.
local calibrate = require "kreach.judge.calibrate"
local candidate = require "kreach.candidate"
local check = require "kreach.judge.check"
local cudnn = require "kreach.cudnn"
local lua_format = require "kreach.candidate.lua"
local measure = require "kreach.judge.measure"
local problem = require "kreach.problem"
local pycandidate = require "kreach.candidate.python"
local verdict = require "kreach.verdict"
local protocol = require "kreach.run.protocol"
local pytorch = require "kreach.pytorch"
local seal = require "kreach.run.seal"
local util = require "kreach.core.util"
local worker = require "kreach.run.worker"

-- The end of the setup: the seal, or the worker's end when it cannot be sealed.
local function seal_or_die(job, o)
  local rec, err = seal.apply(o, problem.roots())
  if rec then return true end
  io.stderr:write("kreach worker ", job, ": ", err, "\n")
  return false
end

-- read_candidate(fmt, spec) -> the candidate's bytes | nil, why it cannot be read | nil, nil,
-- the invalid_candidate verdict of bytes whose hash is not the one the parent recorded
-- (spec.candidate_hash; kreach.run.campaign.hash is kreach.core.util.hash)
local function read_candidate(fmt, spec)
  local source, err = fmt.read(spec.candidate)
  if not source then return nil, err end
  if spec.candidate_hash and util.hash(source) ~= spec.candidate_hash then
    return nil, nil, verdict.new("invalid_candidate", ("%s: the file changed after it was recorded (its bytes hash to %s, the recorded hash is %s)"):format(
      spec.candidate, util.hash(source), spec.candidate_hash))
  end
  return source
end

return {
  summary = "(internal) The worker process the harness runs candidates in.",
  hidden = true,
  parser = function(p)
    p:argument("job", "What to do."):choices({ "lint", "check", "time", "calibrate" })
    p:argument("spec", "What to do it on, as JSON (kreach.run.protocol).")
  end,
  run = function(args)
    local ok, err = seal.enter_worker()
    if not ok then
      io.stderr:write("kreach worker: ", err, "\n")
      return 3
    end
    if not util.die_with_parent() then return 0 end
    -- the candidate's Lua heap (--lua-memory), from the parent (kreach.run.worker.run)
    local lua_memory = math.tointeger(tonumber(os.getenv("KREACH_LUA_MEMORY") or ""))
    if lua_memory and lua_memory > 0 then lua_format.HEAP_BYTES = lua_memory end
    local spec, serr = protocol.decode_spec(args.job, args.spec)
    if not spec then
      io.stderr:write("kreach worker ", args.job, ": ", serr, "\n")
      return 2
    end
    worker.phase("setup")
    if args.job == "calibrate" then
      if not seal_or_die(args.job, { device = true, nvml = true }) then return 3 end
      local opts = spec.options or {}
      opts.phase = worker.phase
      worker.result({ calibration = calibrate.measure(opts) })
      return 0
    end
    local inst = problem.load(problem.resolve(spec.problem)):instantiate{ dtype = spec.dtype, sizes = spec.sizes }
    inst:validate()
    -- a convolution's baseline is cuDNN's where it is installed: it is found and loaded now,
    -- before the seal (the search runs python3 and reads directories a sealed worker may not;
    -- kreach.run.seal then preloads cuDNN's own libraries)
    if args.job ~= "lint" and inst.problem.category == "convolution" then cudnn.available() end
    -- PyTorch's worker starts now too, outside the seal (it reads PyTorch's installation), under
    -- kreach's reaper (the sealed worker may not signal it: a kill closes its watch pipe). A
    -- KernelBench-format candidate runs in it: then it gets the Landlock ruleset it applies to
    -- itself before the candidate's module runs, and the candidate's build directories
    local torch_session, torch_note, py
    local fmt = spec.candidate and candidate.kind(spec.candidate)
    local function refuse(v)
      if args.job == "lint" then worker.result({ verdict = v }); return 0 end
      worker.result({ problem = inst.problem.name, dtype = inst.dtype, candidate = spec.candidate, trials = {}, verdict = v })
      return 0
    end
    local source, rerr, changed
    if fmt and fmt.needs_python and (args.job == "check" or args.job == "time") then
      local function refuse_run(why) return refuse(verdict.new("runtime_error", why)) end
      if not spec.python then return refuse_run("a KernelBench-format candidate needs a python3 with CUDA PyTorch (spec.python)") end
      source, rerr, changed = read_candidate(fmt, spec)
      if changed then return refuse(changed) end
      if not source then return refuse_run(rerr) end
      local dirs, derr = seal.python_build_dirs(pycandidate.key(source))
      if not dirs then return refuse_run(derr) end
      local fd, rec = seal.python_ruleset{ dirs = spec.python.dirs, write = { dirs.extensions, dirs.triton } }
      if fd == nil then return refuse_run(rec) end
      torch_session, torch_note = pytorch.start{ python = spec.python.python, ruleset = fd or nil, reap = true,
                                                 cudnn_tf32 = spec.pytorch and spec.pytorch.cudnn_tf32 or false }
      if fd then seal.close_fd(fd) end
      if not torch_session then return refuse_run("cannot start the Python worker: " .. tostring(torch_note)) end
      py = { session = torch_session, source = source, dirs = dirs, seal = fd and true or false, seal_record = rec }
    elseif args.job == "time" and spec.pytorch then
      torch_session, torch_note = pytorch.start{ python = spec.pytorch.python, cudnn_tf32 = spec.pytorch.cudnn_tf32, reap = true }
    end
    if not seal_or_die(args.job, { candidate = spec.candidate, problem = inst.problem.path,
                                   device = args.job ~= "lint" or not spec.arch, nvml = args.job == "time" }) then
      return 3
    end
    -- read once, sealed (a file that cannot be read is left to the candidate's load to say so)
    if fmt and not source then
      source, rerr, changed = read_candidate(fmt, spec)
      if changed then return refuse(changed) end
    end
    if args.job == "check" then
      local res = check.run(inst, spec.candidate, { policy = spec.policy, phase = worker.phase, python = py, source = source })
      if py then res.python = res.python or {}; res.python.seal = py.seal_record; torch_session:close() end
      worker.result(res)
      return 0
    end
    if args.job == "time" then
      local res = measure.time(inst, {
        candidate = spec.candidate, source = source, policy = spec.policy, timing = spec.timing, measure = spec.measure,
        calibration = spec.calibration, phase = worker.phase, arch = spec.arch, python = py, draw_salt = spec.draw_salt,
        pytorch = torch_session and spec.pytorch and { session = torch_session, compile = spec.pytorch.compile } or nil })
      if py then res.python = res.python or {}; res.python.seal = py.seal_record end
      if torch_session then torch_session:close() end
      if spec.pytorch and not torch_session then res.pytorch_note = "PyTorch not timed: " .. tostring(torch_note) end
      worker.result(res)
      return 0
    end
    local v, report = lua_format.lint(inst, spec.candidate, { arch = spec.arch, phase = worker.phase, source = source })
    worker.result({ verdict = v, report = report })
    return 0
  end,
}
