-- Benchmark: device-to-device copy of 4 GiB, counting the bytes read and written (8 GiB
-- moved per copy), as cudaMemcpyAsync (tensor copy_from) and as an NVRTC float4 kernel.
-- Median of the timed copies after warm-up; CUDA events on the harness stream.
-- usage: kreach experiments/bench/copy_bandwidth.lua [repeats]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
kreach.skip_without_device()

local repeats = tonumber(arg[1]) or 20
local n = 1 << 30 -- f32 elements: 4 GiB
local bytes = 2 * 4 * n
local src = kreach.empty({ n }, "f32"):uniform(0, 1, 1)
local dst = kreach.empty({ n }, "f32")

local p = assert(kreach.build{ source = [[
extern "C" __global__ void copy4(const float4 *__restrict__ x, float4 *__restrict__ y,
                                 unsigned long long n4) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       i < n4; i += stride)
    y[i] = x[i];
}
]] })
local sms = kreach.device().sm_count

local function measure(fn)
  for _ = 1, 3 do fn() end
  local ts = {}
  for i = 1, repeats do ts[i] = kreach.time_ms(fn) end
  return common.median(ts), common.min(ts)
end

local memcpy_ms, memcpy_min = measure(function() dst:copy_from(src) end)
local launch = p.copy4{ grid = sms * 8, block = 512 }
local kernel_ms, kernel_min = measure(function() launch(src, dst, n // 4) end)
assert(dst:to_bytes(4 * (n - 4), 16) == src:to_bytes(4 * (n - 4), 16), "the copy is wrong")

local function tbs(ms) return bytes / (ms * 1e-3) / 1e12 end
print(("%s: 4 GiB copied, %d GiB moved per copy"):format(kreach.device().name, bytes >> 30))
print(("cudaMemcpyAsync: median %.3f ms = %.2f TB/s (best %.2f TB/s)"):format(memcpy_ms, tbs(memcpy_ms), tbs(memcpy_min)))
print(("float4 kernel:   median %.3f ms = %.2f TB/s (best %.2f TB/s)"):format(kernel_ms, tbs(kernel_ms), tbs(kernel_min)))
common.result("copy_memcpy_tbs", tbs(memcpy_ms), "TB/s", "4 GiB D2D cudaMemcpyAsync, read+write (PyTorch: ~4.3)")
common.result("copy_kernel_tbs", tbs(kernel_ms), "TB/s", "4 GiB D2D float4 NVRTC kernel, read+write")
