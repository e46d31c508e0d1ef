-- kreach.judge.calibrate: this device's ceilings, measured: the device-to-device copy bandwidth
-- (bytes read plus bytes written over the time of cudaMemcpyAsync) and the matrix throughput
-- of cuBLAS per dtype (f64, f32 without TF32, f32 with TF32, bf16, f16) on random data. The
-- speed-of-light bound of a measurement (kreach.judge.timing.sol) is computed against these.
local core = require "kreach.core"
local cublas = require "kreach.core.cublas"
local tensors = require "kreach.tensors"
local device = require "kreach.device"
local stats = require "kreach.stats"

local M = {}

M.DEFAULTS = {
  copy_bytes = 2 * 2 ^ 30,   -- the buffer copied: 2 GiB, 4 GiB moved per copy
  gemm_n = 8192,             -- square products of this size
  warmup = 3,
  repeats = 10,
}

-- Median of `repeats` event-timed calls after `warmup` calls, in milliseconds.
local function time_median(fn, warmup, repeats)
  for _ = 1, warmup do fn() end
  local ts = {}
  for i = 1, repeats do ts[i] = device.time_ms(fn) end
  return stats.median(ts), ts
end

-- measure(opts) -> a calibration: { device_uuid, device_name, driver_version,
-- copy_bytes_per_s, flops_per_s = { f64, f32, tf32, bf16, f16 }, details = {...} }.
function M.measure(opts)
  local o = {}
  for k, v in pairs(M.DEFAULTS) do o[k] = v end
  for k, v in pairs(opts or {}) do o[k] = v end
  local dev = device.require("calibration")
  local phase = o.phase or function() end
  local details = { gemm = {}, options = { copy_bytes = o.copy_bytes, gemm_n = o.gemm_n, warmup = o.warmup, repeats = o.repeats } }

  phase("copy")
  local n = math.tointeger(o.copy_bytes // 4)
  local src = tensors.empty({ n }, "f32"):uniform(-1, 1, 1)
  local dst = tensors.empty({ n }, "f32")
  local ms, ts = time_median(function() dst:copy_from(src) end, o.warmup, o.repeats)
  local moved = 2 * n * 4
  details.copy = { bytes_moved = moved, median_ms = ms, times_ms = ts }
  src:free(); dst:free()

  local flops = {}
  local N = o.gemm_n
  for _, case in ipairs({ { "f64", "f64", false }, { "f32", "f32", false }, { "tf32", "f32", true },
                          { "bf16", "bf16", false }, { "f16", "f16", false } }) do
    local name, dtype, tf32 = case[1], case[2], case[3]
    phase("gemm_" .. name)
    local a = tensors.empty({ N, N }, dtype):uniform(-1, 1, 2)
    local b = tensors.empty({ N, N }, dtype):uniform(-1, 1, 3)
    local c = tensors.empty({ N, N }, dtype)
    local gms, gts = time_median(function() cublas.gemm(c, a, b, { tf32 = tf32 }) end, o.warmup, o.repeats)
    flops[name] = 2 * N * N * N / (gms * 1e-3)
    details.gemm[name] = { m = N, n = N, k = N, median_ms = gms, times_ms = gts }
    a:free(); b:free(); c:free()
  end
  core.synchronize()
  return { device_uuid = dev.uuid, device_name = dev.name, driver_version = M.version_number(core.versions().driver),
           copy_bytes_per_s = moved / (ms * 1e-3), flops_per_s = flops, details = details }
end

-- "13.0" -> 13000 (CUDA's integer form), nil for anything else
function M.version_number(s)
  local ma, mi = tostring(s):match("^(%d+)%.(%d+)")
  if not ma then return nil end
  return tonumber(ma) * 1000 + tonumber(mi) * 10
end

-- A short text report of a calibration.
function M.report(cal)
  local lines = { ("%s (%s), driver %s"):format(cal.device_name, cal.device_uuid, tostring(cal.driver_version)),
                  ("  copy bandwidth  %8.3f TB/s (device to device, bytes read + written)"):format(cal.copy_bytes_per_s / 1e12) }
  for _, k in ipairs({ "f64", "f32", "tf32", "bf16", "f16" }) do
    local f = cal.flops_per_s[k]
    if f then lines[#lines + 1] = ("  %-5s GEMM      %8.1f TFLOP/s"):format(k, f / 1e12) end
  end
  return table.concat(lines, "\n")
end

return M
