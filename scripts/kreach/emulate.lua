-- kreach.emulate: runs kreach's CUDA kernels on the CPU, without a GPU, so that their indexing
-- can be tested where there is no device (CI). The kernels' source is compiled as C++ by g++
-- (-std=c++20) with a small emulation of CUDA:
--   - a block's threads are std::threads; __syncthreads is a std::barrier of the block, and
--     blocks run one after another (__shared__ variables are statics);
--   - a warp's lanes meet at a barrier of their own for the warp shuffles (__shfl_xor_sync,
--     __shfl_up_sync, __shfl_down_sync, __shfl_sync), through a per-warp exchange array of
--     doubles, which holds every float, double and 32-bit integer value exactly. Every lane of
--     a warp must take part in a shuffle (the full mask), as the kernels here do;
--   - dynamic shared memory (extern __shared__) is one static buffer: pass the source through
--     M.source;
--   - atomicAdd, atomicMax and atomicExch hold one global lock.
-- Families add what else they need (experiments/conv/emulate.lua adds mma.sync).
--
--   local emu = require "kreach.emulate"
--   local out, ok = emu.run{ emu.HEADER, cuda_prelude, kernel_source, emu.LAUNCH, driver_main }
--
-- The driver calls emu_launch({gx, gy, gz}, {bx, by, bz}, [&] { kernel(args...); }).
local output = require "kreach.output"
local text = require "kreach.text"

local M = {}

M.HEADER = [==[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <vector_types.h>
#include <vector_functions.h>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>
#include <thread>
#include <vector>
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#undef __align__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
struct Dim3E { unsigned x, y, z; };
thread_local Dim3E threadIdx, blockIdx;
Dim3E blockDim, gridDim;
static std::barrier<> *g_bar;
static std::vector<std::unique_ptr<std::barrier<>>> g_warp_bar;
static double g_xchg[32][32]; /* [warp][lane]: a block has at most 1024 threads */
alignas(16) static unsigned char g_dyn_smem[228 * 1024]; /* dynamic shared memory (M.source) */
inline void __syncthreads() { g_bar->arrive_and_wait(); }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
using std::isfinite;
using std::isnan;
using std::isinf;
/* CUDA's min and max: the integer overloads (the usual conversions), fminf/fmaxf for floats */
template <typename A, typename B> inline auto min(A a, B b) {
  if constexpr (std::is_floating_point_v<A> || std::is_floating_point_v<B>) return std::fmin(a, b);
  else { using C = decltype(a < b ? a : b); return (C)b < (C)a ? (C)b : (C)a; }
}
template <typename A, typename B> inline auto max(A a, B b) {
  if constexpr (std::is_floating_point_v<A> || std::is_floating_point_v<B>) return std::fmax(a, b);
  else { using C = decltype(a < b ? a : b); return (C)a < (C)b ? (C)b : (C)a; }
}
inline unsigned emu_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
/* v from lane src_lane(lane) of this warp; every lane of the warp calls it */
template <typename A, typename F> inline A emu_shfl(A v, F src_lane) {
  const unsigned t = emu_tid(), w = t / 32, lane = t % 32;
  g_xchg[w][lane] = (double)v;
  g_warp_bar[w]->arrive_and_wait();
  const int s = src_lane((int)lane);
  const A r = (A)g_xchg[w][(s >= 0 && s < 32) ? s : lane];
  g_warp_bar[w]->arrive_and_wait();
  return r;
}
template <typename A> inline A __shfl_xor_sync(unsigned, A v, int m) { return emu_shfl(v, [m](int l) { return l ^ m; }); }
template <typename A> inline A __shfl_up_sync(unsigned, A v, unsigned d) {
  return emu_shfl(v, [d](int l) { return l - (int)d >= 0 ? l - (int)d : l; });
}
template <typename A> inline A __shfl_down_sync(unsigned, A v, unsigned d) {
  return emu_shfl(v, [d](int l) { return l + (int)d < 32 ? l + (int)d : l; });
}
template <typename A> inline A __shfl_sync(unsigned, A v, int s) { return emu_shfl(v, [s](int) { return s & 31; }); }
#include <mutex>
static std::mutex g_atomic;
/* atomics: one lock for all (the emulation is for correctness, not speed) */
template <typename A> inline A atomicAdd(A *p, A v) { std::lock_guard<std::mutex> g(g_atomic); A o = *p; *p = o + v; return o; }
template <typename A> inline A atomicMax(A *p, A v) { std::lock_guard<std::mutex> g(g_atomic); A o = *p; if (v > o) *p = v; return o; }
template <typename A> inline A atomicExch(A *p, A v) { std::lock_guard<std::mutex> g(g_atomic); A o = *p; *p = v; return o; }
]==]

M.LAUNCH = [==[
static void emu_launch(Dim3E grid, Dim3E block, const std::function<void()> &kernel) {
  gridDim = grid; blockDim = block;
  const unsigned nt = block.x * block.y * block.z;
  std::barrier<> bar(nt);
  g_bar = &bar;
  g_warp_bar.clear();
  for (unsigned w = 0; w * 32 < nt; w++)
    g_warp_bar.emplace_back(new std::barrier<>(nt - w * 32 < 32 ? nt - w * 32 : 32));
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < nt; t++) {
    ts.emplace_back([&, t] {
      threadIdx = { t % block.x, (t / block.x) % block.y, t / (block.x * block.y) };
      for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
          for (unsigned bx = 0; bx < grid.x; bx++) {
            blockIdx = { bx, by, bz };
            kernel();
            bar.arrive_and_wait();
          }
    });
  }
  for (auto &th : ts) th.join();
}
]==]

-- mma.sync m16n8k16 (kreach.ops.conv's Mma<T>::run) on the CPU: the warp's fragments gathered
-- at a barrier, each product from the fragment layout of the PTX ISA ("Matrix Fragments for
-- mma.m16n8k16 with floating point type"), summed in double.
M.MMA = [==[
template <typename T> inline float emu_h2f(unsigned short b);
template <> inline float emu_h2f<__half>(unsigned short b) { __half_raw r; r.x = b; return __half2float(__half(r)); }
template <> inline float emu_h2f<__nv_bfloat16>(unsigned short b) {
  __nv_bfloat16_raw r; r.x = b; return __bfloat162float(__nv_bfloat16(r));
}
struct EmuFrag { unsigned a[32][4], b[32][2]; };
static EmuFrag g_frag[32];
/* mma.sync m16n8k16 row.col, f32 accumulators, from the PTX ISA's fragment layout */
template <typename T> struct Mma {
  static void run(float *c, const unsigned *a, const unsigned *b) {
    const int tid = threadIdx.x, w = tid / 32, lane = tid % 32;
    for (int r = 0; r < 4; r++) g_frag[w].a[lane][r] = a[r];
    for (int r = 0; r < 2; r++) g_frag[w].b[lane][r] = b[r];
    __syncthreads();
    const int gid = lane >> 2, tig = lane & 3;
    auto A = [&](int row, int k) {
      const int l = (row % 8) * 4 + (k % 8) / 2, reg = (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0);
      return emu_h2f<T>((unsigned short)(g_frag[w].a[l][reg] >> (16 * (k & 1))));
    };
    auto B = [&](int k, int col) {
      const int l = col * 4 + (k % 8) / 2, reg = k >= 8 ? 1 : 0;
      return emu_h2f<T>((unsigned short)(g_frag[w].b[l][reg] >> (16 * (k & 1))));
    };
    for (int e = 0; e < 4; e++) {
      const int row = gid + (e >= 2 ? 8 : 0), col = tig * 2 + (e & 1);
      double s = 0;
      for (int k = 0; k < 16; k++) s += (double)A(row, k) * B(k, col);
      c[e] += (float)s;
    }
    __syncthreads();
  }
};
]==]

-- host_source(src) -> src with its inline PTX replaced by the emulation's C++ (conv's mma.sync
-- products by M.MMA, pool's max.NaN.f32 by the generic max_nan), for the host device
-- (kreach.host); raises naming the first asm statement it does not know.
function M.host_source(src)
  src = src:gsub("template <> struct Mma<[%w_]+> {.-\n};\n", "")
  src = src:gsub("template <typename T> struct Mma;\n", function() return M.MMA end)
  src = src:gsub("template <> __device__ __forceinline__ float max_nan<float>%(float m, float v%) {.-\n}\n", "")
  local at = src:find("%f[%w_]asm[%s%(]")
  if at then
    local line_no, line = 0, nil
    for l in (src .. "\n"):gmatch("([^\n]*)\n") do
      line_no = line_no + 1
      at = at - #l - 1
      if at <= 0 then line = l; break end
    end
    error(("kreach.emulate: line %d has inline PTX the host device cannot run: %s"):format(line_no,
      (line or ""):gsub("^%s+", "")), 0)
  end
  return src
end

local quote = text.shell_quote

-- source(cuda_source) -> the kernel source as the emulation compiles it: each dynamic shared
-- array (`extern __shared__ T name[];`) becomes a pointer to the emulation's one buffer (the
-- blocks run one at a time, so they can share it).
function M.source(src)
  src = src:gsub("(extern%s+__shared__%s+)__align__%(%s*%d+%s*%)%s*", "%1")
  return (src:gsub("extern%s+__shared__%s+([%w_ ]-)%s*([%w_]+)%s*%[%s*%]%s*;", function(t, name)
    return ("%s *%s = reinterpret_cast<%s *>(g_dyn_smem);"):format(t, name, t)
  end))
end

-- compiler([opts]) -> g++'s command line for the emulation's C++, without the source and the
-- output: an executable at -O1 (run), or with opts.shared a shared library at -O0 (kreach.host:
-- operator libraries are large, and compile twice as fast). opts.cuda_home: the toolkit whose
-- headers are used (default $CUDA_HOME or /usr/local/cuda).
function M.compiler(opts)
  opts = opts or {}
  local cuda_home = opts.cuda_home or os.getenv("CUDA_HOME") or "/usr/local/cuda"
  return ("g++ -std=c++20 %s -w -pthread%s -I%s"):format(opts.shared and "-O0" or "-O1",
    opts.shared and " -shared -fPIC" or "", quote(cuda_home .. "/include"))
end

-- compile(cmd, source, out) -> true, or false; and g++'s output either way: the file source
-- compiled by cmd (compiler()'s line) into out.
function M.compile(cmd, source, out)
  local p, why = io.popen(("%s %s -o %s 2>&1"):format(cmd, quote(source), quote(out)))
  if not p then return false, "cannot start g++: " .. tostring(why) end
  local text = p:read("a")
  local ok = p:close()
  return ok and true or false, text
end

-- run(parts [, opts]) -> the program's output, true when it compiled and exited 0 (else false
-- and why, with the output). parts: the C++ source in pieces, concatenated. opts.keep: a
-- directory to keep the source and binary in (default: a temporary one, removed).
-- opts.cuda_home: the toolkit whose headers are used (default $CUDA_HOME or /usr/local/cuda).
function M.run(parts, opts)
  opts = opts or {}
  local dir = opts.keep
  if dir then
    local mok, merr = output.mkdirs(dir)
    if not mok then return ("cannot create %s: %s"):format(dir, tostring(merr)), false end
  else
    local why
    dir, why = output.tmpdir()
    if not dir then return why, false end
  end
  local f = assert(io.open(dir .. "/emu.cpp", "w"))
  f:write(table.concat(parts, "\n"))
  f:close()
  local cok, cout = M.compile(M.compiler{ cuda_home = opts.cuda_home }, dir .. "/emu.cpp", dir .. "/emu")
  local out, ok = cout, false
  if cok then
    local p, why = io.popen(quote(dir .. "/emu") .. " 2>&1")
    if p then
      out = p:read("a")
      ok = p:close() and true or false
    else
      out = "cannot start the emulation: " .. tostring(why)
    end
  else
    out = "g++ failed:\n" .. cout
  end
  if not opts.keep then output.remove_tree(dir) end
  return out, ok
end

return M
