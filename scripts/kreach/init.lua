-- kreach: the facade, for scripts, problem files, candidates and commands: `local kreach =
-- require "kreach"` gives tensors, NVRTC programs, cuBLAS, events, the device, problems and the
-- reference operators. It holds no code of its own: every entry is a function of the runtime's
-- modules (kreach.core.*, in C: bindings/, runtime/) or of the internal modules beside this
-- file, which never require it (docs/scripting.md, "The library's layers").
local core = require "kreach.core"
local cublas = require "kreach.core.cublas"
local device = require "kreach.device"
local event = require "kreach.core.event"
local kernel = require "kreach.kernel"
local nvrtc = require "kreach.core.nvrtc"
local ops = require "kreach.ops"
local conv = require "kreach.ops.conv"
local problem = require "kreach.problem"
local proc = require "kreach.core.proc"
local tensor = require "kreach.core.tensor"
local tensors = require "kreach.tensors"

local kreach = {
  version = core.version,
  tensor = tensor,
  nvrtc = nvrtc,
  cublas = cublas,
  proc = proc,     -- proc.spawn(argv) -> a worker: read_line(timeout_s), kill, wait, stderr
  dtypes = tensors.dtypes,
}

-- ---- the device ----

kreach.device = core.device           -- properties; raises "no CUDA device: ..." without one
kreach.versions = core.versions       -- driver, runtime, NVRTC, cuBLAS; needs no GPU
kreach.has_device = core.has_device   -- true, or false and the reason; never raises
kreach.synchronize = core.synchronize -- waits for the harness stream; reports faults
kreach.broken = core.broken           -- true and the message after a sticky CUDA error
kreach.executable = core.executable   -- path of the running kreach binary
kreach.now = core.now                 -- monotonic seconds, for host-side timing
-- require_device([what]) -> the device's properties; raises "no CUDA device: ..." without one,
-- so that a command or script that needs a GPU exits with status 77 (skipped); with `what`
-- (what needs it, "kreach bench") the host device (KREACH_DEVICE=host) is refused too
kreach.require_device = device.require
kreach.skip_without_device = device.skip_without -- for tests and benchmarks: exit 77 without one

-- ---- tensors ----

kreach.empty = tensors.empty           -- empty(shape, dtype="f32"): uninitialised
kreach.zeros = tensors.zeros           -- zeros(shape, dtype="f32")
kreach.full = tensors.full             -- full(shape, value, dtype="f32")
kreach.from_table = tensors.from_table -- from_table(values, {shape=, dtype=})
kreach.from_bytes = tensors.from_bytes -- from_bytes(string, shape, dtype)
kreach.is_tensor = tensors.is_tensor
kreach.dtype_size = tensors.dtype_size

-- ---- programs and events ----

-- build{source=, name=, options=, arch=, cache_dir=, no_cache=, instantiate=} -> program, or
-- nil and the compiler's log
kreach.build = nvrtc.build
-- kernel{source=, name=, ...}: CUDA a problem file carries, compiled on its first launch
kreach.kernel = kernel.new
kreach.event = event.new
-- time_ms(fn, ...): fn(...) between two events on the harness stream, in milliseconds (one
-- call; statistics belong to the timing layer)
kreach.time_ms = device.time_ms

-- ---- problems (docs/scripting.md, "Problems") ----

kreach.problem = problem.define        -- a problem file returns kreach.problem{...}
kreach.input = problem.input           -- input(name, shape, {dtype=, dist=, domain=})
kreach.param = problem.param           -- param(name, shape, {init=, dtype=})
kreach.scalar = problem.scalar         -- scalar(name, value, {type=})
kreach.output = problem.output         -- output(name, shape, {dtype=})
-- PyTorch's output extents, for problems to size their outputs: conv_out_len(d, k, stride,
-- pad, dilation), conv_transpose_out_len(d, k, stride, pad, dilation, output_padding)
kreach.conv_out_len = conv.out_len
-- The index count of n embedding bags whose lengths are lo..hi (an input drawn from "bags(lo, hi)").
kreach.bags_total = problem.bags_total
-- The length total of a "jagged(h1, ..., hF)" input of n bags a row.
kreach.jagged_total = problem.jagged_total
kreach.jagged_lengths = problem.jagged_lengths
-- A distribution a problem draws on the host (kreach.problem.host_dist).
kreach.host_dist = problem.host_dist
kreach.conv_transpose_out_len = conv.transposed_out_len

-- load_problem(path_or_id, {sizes =, dtype =}) -> a problem; :instantiate() uses these options
-- unless it is given others.
function kreach.load_problem(what, opts)
  return problem.load(problem.resolve(what), opts)
end
kreach.load_suite = problem.load_suite
kreach.suites = problem.suites

-- kreach.ops: the reference operator library on real tensors, made on first use
setmetatable(kreach, { __index = function(t, k)
  if k == "ops" then
    local lib = ops.get(false)
    rawset(t, "ops", lib)
    return lib
  end
end })

return kreach
