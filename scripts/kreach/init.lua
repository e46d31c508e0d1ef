-- kreach: the Lua library over the runtime. `local kreach = require "kreach"` gives tensors,
-- NVRTC programs, cuBLAS, events and the device. Policy lives here and in the modules beside
-- this file; the mechanism is in C (bindings/, runtime/).
local core = require "kreach.core"
local tensor = require "kreach.core.tensor"
local nvrtc = require "kreach.core.nvrtc"
local cublas = require "kreach.core.cublas"
local event = require "kreach.core.event"
local proc = require "kreach.core.proc"

local kreach = {
  version = core.version,
  tensor = tensor,
  nvrtc = nvrtc,
  cublas = cublas,
  proc = proc,     -- proc.spawn(argv) -> a worker: read_line(timeout_s), kill, wait, stderr
  dtypes = tensor.dtypes(),
}
kreach.kernel = require("kreach.kernel").new -- kernel{source=, ...}: CUDA compiled on first launch

-- ---- the device ----

kreach.device = core.device           -- properties; raises "no CUDA device: ..." without one
kreach.versions = core.versions       -- driver, runtime, NVRTC, cuBLAS; needs no GPU
kreach.has_device = core.has_device   -- true, or false and the reason; never raises
kreach.synchronize = core.synchronize -- waits for the harness stream; reports faults
kreach.broken = core.broken           -- true and the message after a sticky CUDA error
kreach.executable = core.executable   -- path of the running kreach binary
kreach.now = core.now                 -- monotonic seconds, for host-side timing

-- Raises "no CUDA device: ..." unless a GPU is usable, so that a command that needs one exits
-- with status 77 (main.c turns such an uncaught error into a skip).
function kreach.require_device()
  local ok, why = core.has_device()
  if not ok then error("no CUDA device: " .. why, 2) end
  return core.device()
end

-- For test and benchmark scripts: exit 77 (skipped) without a GPU.
function kreach.skip_without_device()
  local ok, why = core.has_device()
  if not ok then
    io.stderr:write("skipped: no CUDA device: ", why, "\n")
    os.exit(77)
  end
end

-- ---- tensors ----

kreach.empty = tensor.empty           -- empty(shape, dtype="f32"): uninitialised
kreach.from_table = tensor.from_table -- from_table(values, {shape=, dtype=})
kreach.from_bytes = tensor.from_bytes -- from_bytes(string, shape, dtype)
kreach.is_tensor = tensor.is_tensor
kreach.dtype_size = tensor.dtype_size

function kreach.zeros(shape, dtype)
  return tensor.empty(shape, dtype):fill(0)
end

function kreach.full(shape, value, dtype)
  return tensor.empty(shape, dtype):fill(value)
end

-- ---- programs and events ----

-- build{source=, name=, options=, arch=, cache_dir=, no_cache=, instantiate=} -> program, or
-- nil and the compiler's log
kreach.build = nvrtc.build
kreach.event = event.new

-- Times `fn` between two events on the harness stream, in milliseconds (one call; statistics
-- belong to the timing layer).
function kreach.time_ms(fn, ...)
  local a, b = event.new(), event.new()
  a:record()
  fn(...)
  b:record()
  local ms = a:elapsed_ms(b)
  a:free()
  b:free()
  return ms
end

-- ---- problems (docs/scripting.md, "Problems") ----

local problem = require "kreach.problem"
kreach.problem = problem.define        -- a problem file returns kreach.problem{...}
kreach.input = problem.input           -- input(name, shape, {dtype=, dist=, domain=})
kreach.param = problem.param           -- param(name, shape, {init=, dtype=})
kreach.scalar = problem.scalar         -- scalar(name, value, {type=})
kreach.output = problem.output         -- output(name, shape, {dtype=})

-- load_problem(path_or_id, {sizes =, dtype =}) -> a problem; :instantiate() uses these options
-- unless it is given others.
function kreach.load_problem(what, opts)
  return problem.load(problem.resolve(what), opts)
end
kreach.load_suite = problem.load_suite
kreach.suites = problem.suites

-- kreach.ops: the reference operator library, loaded on first use
setmetatable(kreach, { __index = function(t, k)
  if k == "ops" then
    local ops = require("kreach.ops").get(false)
    rawset(t, "ops", ops)
    return ops
  end
end })

return kreach
