-- Benchmark: NVRTC compile of a 49-line kernel, cold (cache off) and from the caches (memory
-- in this process; disk from a fresh process, timed inside build, so process start-up is not
-- counted). NVRTC is loaded on first use (kr_nvrtc_api.c): the fresh process loads it before
-- the build, and that load, a once-per-process cost like opening the device, is reported on its
-- own. Targets: cache hit under 5 ms, cold under 300 ms.
-- usage: kreach experiments/bench/nvrtc_compile.lua [repeats]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
kreach.skip_without_device()
kreach.device() -- open the device first, so its start-up is not counted as compile time

local repeats = tonumber(arg[1]) or 7
local SRC = [[
// A tiled matrix product with a fused bias and ReLU: a typical candidate kernel.
#define TILE 16
extern "C" __global__ void matmul_bias_relu(const float *__restrict__ A,
                                            const float *__restrict__ B,
                                            const float *__restrict__ bias,
                                            float *__restrict__ C,
                                            int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ak = t * TILE + threadIdx.x;
    int bk = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[(size_t)row * K + ak] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[(size_t)bk * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) {
      acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    }
    __syncthreads();
  }
  if (row < M && col < N) {
    float v = acc + bias[col];
    C[(size_t)row * N + col] = v > 0.0f ? v : 0.0f;
  }
}

extern "C" __global__ void row_softmax(const float *__restrict__ x, float *__restrict__ y,
                                       int rows, int cols) {
  int r = blockIdx.x;
  if (r >= rows) return;
  const float *xr = x + (size_t)r * cols;
  float *yr = y + (size_t)r * cols;
  float m = __int_as_float(0xff800000); // -infinity
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(xr[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = __expf(xr[c] - m) / s;
}

extern "C" __global__ void scale_add(float *y, const float *x, float a, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]]
local lines = select(2, SRC:gsub("\n", ""))

local cold = {}
for i = 1, repeats do
  -- a distinct comment per run: NVRTC sees a new source, and no cache can answer
  local p = assert(kreach.build{ source = SRC .. "// run " .. i .. "\n", no_cache = true })
  cold[i] = p.compile_ms
  p:free()
end

local dir = os.tmpname()
os.remove(dir)
local first = assert(kreach.build{ source = SRC, cache_dir = dir })
assert(first.cache == "miss")
local mem = {}
for i = 1, 50 do
  local p = assert(kreach.build{ source = SRC, cache_dir = dir })
  assert(p.cache == "memory")
  mem[i] = p.compile_ms
  p:free()
end

local disk, load = {}, {}
local cmd = ("%q -e 'local k = require(\"kreach\"); k.device(); local t0 = k.now(); assert(require(\"kreach.core.nvrtc\").load()); local load_ms = (k.now() - t0) * 1e3; local p = assert(k.build{source = io.read(\"a\"), cache_dir = %q}); io.write(p.cache, \" \", p.compile_ms, \" \", load_ms)'"):format(kreach.executable(), dir)
for i = 1, repeats do
  local tmp = os.tmpname()
  local f = assert(io.open(tmp, "w")); f:write(SRC); f:close()
  local out = io.popen(cmd .. " < " .. tmp):read("a")
  os.remove(tmp)
  local how, ms, lms = out:match("^(%a+) ([%d%.e%-]+) ([%d%.e%-]+)$")
  assert(how == "disk", "expected a disk hit, got: " .. out)
  disk[i], load[i] = tonumber(ms), tonumber(lms)
end
os.execute("rm -rf '" .. dir .. "'")

print(("NVRTC %s, %d-line source, %s"):format(kreach.versions().nvrtc, lines, first.arch))
print(("cold compile: median %.1f ms, min %.1f ms over %d"):format(common.median(cold), common.min(cold), repeats))
print(("memory hit:   median %.3f ms over 50"):format(common.median(mem)))
print(("disk hit:     median %.3f ms over %d (fresh process each)"):format(common.median(disk), repeats))
print(("NVRTC load:   median %.2f ms (once per process, on first use)"):format(common.median(load)))
common.result("nvrtc_cold_ms", common.median(cold), "ms", "cold NVRTC compile, " .. lines .. "-line kernel (target < 300)")
common.result("nvrtc_disk_hit_ms", common.median(disk), "ms", "disk cache hit, fresh process (target < 5)")
common.result("nvrtc_load_ms", common.median(load), "ms", "loading NVRTC on first use, once per process")
common.result("nvrtc_memory_hit_ms", common.median(mem), "ms", "memory cache hit (target < 5)")
