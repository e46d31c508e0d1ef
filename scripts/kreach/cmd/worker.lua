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
local calibrate = require "kreach.judge.calibrate"
local candidate = require "kreach.candidate.lua"
local check = require "kreach.judge.check"
local cudnn = require "kreach.cudnn"
local kinds = require "kreach.kinds"
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
    if lua_memory and lua_memory > 0 then candidate.HEAP_BYTES = lua_memory end
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
    local is_py = spec.candidate and kinds.kind(spec.candidate) == "python" and (args.job == "check" or args.job == "time")
    if is_py then
      local function refuse(why)
        worker.result({ problem = inst.problem.name, dtype = inst.dtype, candidate = spec.candidate, trials = {},
                        verdict = verdict.new("runtime_error", why) })
        return 0
      end
      if not spec.python then return refuse("a KernelBench-format candidate needs a python3 with CUDA PyTorch (spec.python)") end
      local source, rerr = pycandidate.read(spec.candidate)
      if not source then return refuse(rerr) end
      local dirs, derr = seal.python_build_dirs(pycandidate.key(source))
      if not dirs then return refuse(derr) end
      local fd, rec = seal.python_ruleset{ dirs = spec.python.dirs, write = { dirs.extensions, dirs.triton } }
      if fd == nil then return refuse(rec) end
      torch_session, torch_note = pytorch.start{ python = spec.python.python, ruleset = fd or nil, reap = true,
                                                 cudnn_tf32 = spec.pytorch and spec.pytorch.cudnn_tf32 or false }
      if fd then seal.close_fd(fd) end
      if not torch_session then return refuse("cannot start the Python worker: " .. tostring(torch_note)) end
      py = { session = torch_session, source = source, dirs = dirs, seal = fd and true or false, seal_record = rec }
    elseif args.job == "time" and spec.pytorch then
      torch_session, torch_note = pytorch.start{ python = spec.pytorch.python, cudnn_tf32 = spec.pytorch.cudnn_tf32, reap = true }
    end
    if not seal_or_die(args.job, { candidate = spec.candidate, problem = inst.problem.path,
                                   device = args.job ~= "lint" or not spec.arch, nvml = args.job == "time" }) then
      return 3
    end
    if args.job == "check" then
      local res = check.run(inst, spec.candidate, { policy = spec.policy, phase = worker.phase, python = py })
      if py then res.python = res.python or {}; res.python.seal = py.seal_record; torch_session:close() end
      worker.result(res)
      return 0
    end
    if args.job == "time" then
      local res = measure.time(inst, {
        candidate = spec.candidate, policy = spec.policy, timing = spec.timing, measure = spec.measure,
        calibration = spec.calibration, phase = worker.phase, arch = spec.arch, python = py, draw_salt = spec.draw_salt,
        pytorch = torch_session and spec.pytorch and { session = torch_session, compile = spec.pytorch.compile } or nil })
      if py then res.python = res.python or {}; res.python.seal = py.seal_record end
      if torch_session then torch_session:close() end
      if spec.pytorch and not torch_session then res.pytorch_note = "PyTorch not timed: " .. tostring(torch_note) end
      worker.result(res)
      return 0
    end
    local v, report = candidate.lint(inst, spec.candidate, { arch = spec.arch, phase = worker.phase })
    worker.result({ verdict = v, report = report })
    return 0
  end,
}
