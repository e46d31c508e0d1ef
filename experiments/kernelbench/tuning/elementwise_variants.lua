-- Tuning record: variants of the vectorised elementwise kernel (ReLU) on problem 19's shape
-- (4096 x 393216), f32 and bf16, with the bandwidth each reaches (bytes read + written).
-- Used to choose the shape of ops/elementwise.lua's kernel; kept so the choice can be rechecked
-- on another GPU.   usage: kreach experiments/kernelbench/tuning/elementwise_variants.lua
local kreach = require "kreach"
kreach.skip_without_device()

local SRC = [==[
#include <cuda_bf16.h>
typedef long long i64;
template <typename T> struct alignas(16) Pack { static const int N = 16 / sizeof(T); T v[N]; };
__device__ __forceinline__ float relu(float x) { return x > 0.f ? x : (x != x ? x : 0.f); }
__device__ __forceinline__ __nv_bfloat16 relu(__nv_bfloat16 x) {
  float f = __bfloat162float(x); return __float2bfloat16_rn(relu(f)); }
template <typename T> __device__ __forceinline__ void apply(Pack<T> &p) {
#pragma unroll
  for (int k = 0; k < Pack<T>::N; k++) p.v[k] = relu(p.v[k]);
}
__device__ __forceinline__ int4 ldcs(const int4 *p) { return __ldcs(p); }

/* U packs a thread, thread t of a block taking packs base + u * blockDim + t (coalesced);
 * all loads issued before the stores. STREAM: evict-first loads and stores. */
template <typename T, int U, bool STREAM>
__global__ void relu_u(const T *__restrict__ x, T *__restrict__ y, i64 npacks) {
  const Pack<T> *xp = reinterpret_cast<const Pack<T> *>(x);
  Pack<T> *yp = reinterpret_cast<Pack<T> *>(y);
  i64 base = (i64)blockIdx.x * blockDim.x * U + threadIdx.x;
  Pack<T> p[U];
#pragma unroll
  for (int u = 0; u < U; u++) {
    i64 i = base + (i64)u * blockDim.x;
    if (i < npacks) {
      if (STREAM) { int4 v = __ldcs(reinterpret_cast<const int4 *>(xp + i)); p[u] = *reinterpret_cast<Pack<T> *>(&v); }
      else p[u] = xp[i];
    }
  }
#pragma unroll
  for (int u = 0; u < U; u++) {
    i64 i = base + (i64)u * blockDim.x;
    if (i < npacks) {
      apply(p[u]);
      if (STREAM) __stcs(reinterpret_cast<int4 *>(yp + i), *reinterpret_cast<int4 *>(&p[u]));
      else yp[i] = p[u];
    }
  }
}

/* grid-stride loop over packs */
template <typename T>
__global__ void relu_gs(const T *__restrict__ x, T *__restrict__ y, i64 npacks) {
  const Pack<T> *xp = reinterpret_cast<const Pack<T> *>(x);
  Pack<T> *yp = reinterpret_cast<Pack<T> *>(y);
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < npacks; i += (i64)gridDim.x * blockDim.x) {
    Pack<T> p = xp[i]; apply(p); yp[i] = p;
  }
}
]==]
local names = {}
for _, T in ipairs({ "float", "__nv_bfloat16" }) do
  for _, U in ipairs({ 1, 2, 4, 8 }) do
    for _, s in ipairs({ "false", "true" }) do names[#names + 1] = ("relu_u<%s, %d, %s>"):format(T, U, s) end
  end
  names[#names + 1] = ("relu_gs<%s>"):format(T)
end
local p = assert(kreach.build{ source = SRC, instantiate = names })
local sms = kreach.device().sm_count

local function median(t) table.sort(t); return (t[#t // 2] + t[#t // 2 + 1]) / 2 end
for _, dt in ipairs({ "f32", "bf16" }) do
  local T = dt == "f32" and "float" or "__nv_bfloat16"
  local n = 4096 * 393216
  local x = kreach.empty({ n }, dt):uniform(-1, 1, 1)
  local y = kreach.empty({ n }, dt)
  local per = 16 // kreach.dtype_size(dt)
  local npacks = n // per
  local bytes = 2 * n * kreach.dtype_size(dt)
  local function run(label, fn)
    for _ = 1, 3 do fn() end
    local ts = {}
    for r = 1, 20 do ts[r] = kreach.time_ms(fn) end
    local ms = median(ts)
    print(("%-5s %-34s %8.4f ms %6.2f TB/s"):format(dt, label, ms, bytes / (ms * 1e-3) / 1e12))
    io.flush()
  end
  run("memcpy", function() y:copy_from(x) end)
  -- the library's kernel, on these inputs (uniform -1..1) and on problem 19's (uniform 0..1)
  local ops = kreach.ops
  run("ops.relu, uniform(-1, 1)", function() ops.relu(x, y) end)
  local x01 = kreach.empty({ n }, dt):uniform(0, 1, 2)
  run("ops.relu, uniform(0, 1)", function() ops.relu(x01, y) end)
  local k1 = p[("relu_u<%s, 1, false>"):format(T)]
  run("U=1 threads=256, uniform(0, 1)", function() k1{ grid = (npacks + 255) // 256, block = 256 }(x01, y, npacks) end)
  x01 = nil; collectgarbage()
  for _, U in ipairs({ 1, 2, 4, 8 }) do
    for _, s in ipairs({ "false", "true" }) do
      for _, th in ipairs({ 128, 256, 512 }) do
        local k = p[("relu_u<%s, %d, %s>"):format(T, U, s)]
        local grid = (npacks + th * U - 1) // (th * U)
        run(("U=%d stream=%s threads=%d"):format(U, s, th), function() k{ grid = grid, block = th }(x, y, npacks) end)
      end
    end
  end
  for _, mult in ipairs({ 4, 8, 16, 32 }) do
    local k = p[("relu_gs<%s>"):format(T)]
    run(("grid-stride %dx%d blocks of 256"):format(mult, sms), function() k{ grid = sms * mult, block = 256 }(x, y, npacks) end)
  end
  x, y = nil, nil
  collectgarbage()
end
