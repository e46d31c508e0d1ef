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
-- The job itself (the problem, the candidate's bytes and their recorded hash, the Python
-- sessions, the judge's call) is kreach.judge.job's; this command is the process side it runs
-- in: entering the worker, the spec, the seal and the protocol's lines (kreach.run.*).
local job = require "kreach.judge.job"
local lua_format = require "kreach.candidate.lua"
local problem = require "kreach.problem"
local protocol = require "kreach.run.protocol"
local seal = require "kreach.run.seal"
local util = require "kreach.core.util"
local worker = require "kreach.run.worker"

-- The end of the setup: the seal, or the worker's end when it cannot be sealed.
local function seal_or_die(name, o)
  local rec, err = seal.apply(o, problem.roots())
  if rec then return true end
  io.stderr:write("kreach worker ", name, ": ", err, "\n")
  return false
end

-- A KernelBench-format candidate's build directories and the Landlock ruleset its Python
-- worker applies to itself (kreach.judge.job's ctx.python_sandbox).
local function python_sandbox(key, read_dirs)
  local dirs, derr = seal.python_build_dirs(key)
  if not dirs then return nil, derr end
  local fd, rec = seal.python_ruleset{ dirs = read_dirs, write = { dirs.extensions, dirs.triton } }
  if fd == nil then return nil, rec end
  return { dirs = dirs, fd = fd, record = rec }
end

return {
  summary = "(internal) The worker process the harness runs candidates in.",
  hidden = true,
  parser = function(p)
    p:argument("job", "What to do."):choices({ "lint", "check", "time", "calibrate", "build" })
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
    local res = job.run(args.job, spec, {
      phase = worker.phase,
      seal = function(o) return seal_or_die(args.job, o) end,
      python_sandbox = python_sandbox,
      close_fd = seal.close_fd,
    })
    if not res then return 3 end
    worker.result(res)
    return 0
  end,
}
