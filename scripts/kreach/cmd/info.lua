-- kreach info [--json]: the device, its limits and the versions of the CUDA components, and
-- the protections of the workers that run candidates, and where cuDNN is (they need no GPU:
-- printed first).
local kreach = require "kreach"
local candidate = require "kreach.candidate.lua"
local cudnn = require "kreach.cudnn"
local pytorch = require "kreach.pytorch"
local json = require "kreach.json"
local seal = require "kreach.run.seal"

local function mib(b) return b / 2^20 end
local function gib(b) return b / 2^30 end

local function seal_text(s)
  io.write("worker seal:\n")
  local fs
  if s.filesystem == "landlock" then
    fs = ("Landlock ABI %d (reads: the CUDA toolkit, kreach, the problem, the candidate; writes: the worker's own directory, the compile cache)"):format(s.landlock_abi)
  elseif s.candidates_refused then
    fs = ("unavailable (%s): candidates are refused unless KREACH_UNSEALED=1"):format(s.landlock_unavailable)
  else
    fs = s.filesystem .. (s.landlock_unavailable and (" (Landlock unavailable: " .. s.landlock_unavailable .. ")") or "")
  end
  io.write("  filesystem: ", fs, "\n")
  io.write(("  memory: %s per worker (RLIMIT_DATA; the smaller of 16 GiB and half of the host's %s; --worker-memory)\n"):format(
    seal.format_size(s.memory_bytes), seal.format_size(s.host_memory_bytes)))
  io.write(("  Lua heap: %s per candidate (its Lua code, within the worker's memory; --lua-memory)\n"):format(
    seal.format_size(s.lua_memory_bytes)))
  io.write(("  environment: an allow-list of %d variables (%s)\n"):format(#s.env_allowed, table.concat(s.env_allowed, ", ")))
  io.write("  parent watch: ", s.parent_watch, "\n")
  io.write("  source check: ", s.source_check, s.toolkit and (" (" .. s.toolkit .. "/include)") or "", "\n")
  if s.cudnn_reads and #s.cudnn_reads > 0 then
    io.write(("  cuDNN: a worker that loads it also reads its %d librar%s (%s/libcudnn*)\n"):format(#s.cudnn_reads,
      #s.cudnn_reads == 1 and "y" or "ies", s.cudnn_reads[1]:match("^(.*)/")))
  end
end

local function cudnn_text(c)
  if c.available then
    io.write(("cuDNN %s: %s (found in %s)\n"):format(c.version, c.path, c.found_by))
    io.write("  engine: ", c.selection == "pytorch" and "PyTorch eager's (the first in cuDNN's heuristics' order that runs, as with cudnn.benchmark off)"
      or c.selection == "fastest" and "the fastest of the allowed engines, timed (as with cudnn.benchmark on)"
      or tostring(c.selection_error), c.selection and " (KREACH_CUDNN_SELECT=pytorch|fastest)\n" or "\n")
  else
    io.write("cuDNN: unavailable (", c.why, "); convolutions use kreach's own kernels\n")
  end
end

-- PyTorch: what kreach times beside its baselines and the interpreter KernelBench-format
-- candidates run in (kreach.pytorch.find)
local function pytorch_text(p)
  if p.available then
    io.write(("PyTorch %s (CUDA %s) in %s, on %s: timed beside the baselines; runs KernelBench-format candidates\n"):format(
      tostring(p.torch), tostring(p.cuda), p.python, tostring(p.device)))
  else
    io.write("PyTorch: unavailable (", p.why, "): not timed beside the baselines; KernelBench-format candidates are skipped\n")
  end
end

local function text(info)
  local v = info.versions
  io.write(("kreach %s\n"):format(info.kreach))
  io.write(("versions: driver %s, runtime %s, NVRTC %s, cuBLAS %s\n"):format(
    v.driver or "none", v.runtime, v.nvrtc, v.cublas or "unavailable"))
  local d = info.device
  io.write(("device %d: %s (%s, compute capability %s)\n"):format(d.ordinal, d.name, d.arch,
    d.compute_capability))
  io.write(("  %d SMs; %d threads per block, %d per SM; warp %d\n"):format(d.sm_count,
    d.max_threads_per_block, d.max_threads_per_sm, d.warp_size))
  io.write(("  memory %.1f GiB (%.1f GiB free), bus %d bits, ECC %s\n"):format(
    gib(d.memory_bytes), gib(d.free_memory_bytes), d.memory_bus_bits, d.ecc and "on" or "off"))
  io.write(("  L2 %.0f MiB (persisting up to %.0f MiB)\n"):format(mib(d.l2_bytes),
    mib(d.persisting_l2_max_bytes)))
  io.write(("  shared memory per block %d KiB (opt-in %d KiB), per SM %d KiB\n"):format(
    d.shared_per_block_bytes // 1024, d.shared_per_block_optin_bytes // 1024,
    d.shared_per_sm_bytes // 1024))
  io.write(("  peak clocks: SM %d MHz, memory %d MHz\n"):format(d.sm_clock_khz // 1000,
    d.memory_clock_khz // 1000))
  io.write(("  PCI %s, UUID %s\n"):format(d.pci_bus_id, d.uuid))
end

return {
  summary = "Show the GPU, its limits and the CUDA versions (needs a GPU).",
  parser = function(p)
    p:flag("--json", "Print one JSON object.")
  end,
  run = function(args)
    -- cuDNN first: the seal's status names its directory once it is loaded
    local info = { kreach = kreach.version, versions = kreach.versions(), cudnn = cudnn.info() }
    info.seal = seal.status()
    info.seal.lua_memory_bytes = candidate.HEAP_BYTES
    local found, why = pytorch.find()
    info.pytorch = found and { available = true, python = found.python, torch = found.torch, cuda = found.cuda,
                               device = found.device } or { available = false, why = why }
    if not args.json then
      seal_text(info.seal)
      cudnn_text(info.cudnn)
      pytorch_text(info.pytorch)
    end
    local ok, why = kreach.has_device()
    if not ok then
      if args.json then
        info.device = json.null
        info.error = "no CUDA device: " .. why
        io.write(json.encode(info), "\n")
      else
        io.write(("kreach %s\n"):format(info.kreach))
        local v = info.versions
        io.write(("versions: driver %s, runtime %s, NVRTC %s, cuBLAS %s\n"):format(
          v.driver or "none", v.runtime, v.nvrtc, v.cublas or "unavailable"))
      end
      error("no CUDA device: " .. why, 0)
    end
    info.device = kreach.device()
    if args.json then
      io.write(json.encode(info), "\n")
    else
      text(info)
    end
    return 0
  end,
}
