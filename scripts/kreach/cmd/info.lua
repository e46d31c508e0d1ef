-- kreach info [--json]: the device, its limits and the versions of the CUDA components.
local kreach = require "kreach"

local function mib(b) return b / 2^20 end
local function gib(b) return b / 2^30 end

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
    local info = { kreach = kreach.version, versions = kreach.versions() }
    local ok, why = kreach.has_device()
    if not ok then
      if args.json then
        local cjson = require "cjson"
        info.device = cjson.null
        info.error = "no CUDA device: " .. why
        io.write(cjson.encode(info), "\n")
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
      io.write(require("cjson").encode(info), "\n")
    else
      text(info)
    end
    return 0
  end,
}
