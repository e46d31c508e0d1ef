-- kreach.emulate: runs kreach's CUDA kernels on the CPU, without a GPU, so that their indexing
-- can be tested where there is no device (CI). The kernels' source is compiled as C++ by g++
-- (-std=c++20) with a small emulation of CUDA:
--   - a block's threads are fibers on the calling thread (a register switch of our own on x86-64,
--     ucontext elsewhere), each on a stack of its own,
--     run in turn; __syncthreads is a barrier of the block's fibers (a fiber that arrives yields
--     until the last one does; a thread that has returned no longer counts), and blocks run one
--     after another (__shared__ variables are statics). Threads waiting at barriers that can
--     never complete abort with a message. Where the source has no barrier at all (M.sequential)
--     the threads simply run one after another;
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
local output = require "kreach.atomic"
local text = require "kreach.text"
local util = require "kreach.core.util"
local lfs = require "lfs"

local M = {}

M.HEADER = [==[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <vector_types.h>
#include <vector_functions.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>
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
/* a barrier of fibers (M.LAUNCH): arrivals this generation, the generation, the threads that
   still run; g_seq: the threads run one after another, and no barrier may be reached */
struct EmuBar { unsigned count, gen, live; };
static EmuBar g_bbar, g_wbar[32];
static bool g_seq;
static unsigned long long g_progress; /* arrivals and returns: what a round of the fibers must change */
static void emu_yield();
static double g_xchg[32][32]; /* [warp][lane]: a block has at most 1024 threads */
alignas(16) static unsigned char g_dyn_smem[228 * 1024]; /* dynamic shared memory (M.source) */
inline void emu_no_barrier(const char *what) {
  fprintf(stderr, "kreach.emulate: %s in a kernel the emulation runs one thread at a time "
                  "(its source was taken to have no barrier: emulate.sequential)\n", what);
  abort();
}
inline void emu_wait(EmuBar &b) {
  const unsigned gen = b.gen;
  g_progress++;
  if (++b.count >= b.live) { b.count = 0; b.gen++; return; }
  while (b.gen == gen) emu_yield();
}
inline void __syncthreads() { if (g_seq) emu_no_barrier("__syncthreads"); emu_wait(g_bbar); }
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
  if (g_seq) emu_no_barrier("a warp shuffle");
  g_xchg[w][lane] = (double)v;
  emu_wait(g_wbar[w]);
  const int s = src_lane((int)lane);
  const A r = (A)g_xchg[w][(s >= 0 && s < 32) ? s : lane];
  emu_wait(g_wbar[w]);
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
#include <cstdint>
#include <sys/mman.h>
static const size_t EMU_STACK = 256 * 1024; /* each fiber's stack */
static char *g_stacks;                     /* 1024 of them, mapped once, touched as used */
static unsigned char g_fdone[1024];
static unsigned g_fcur;
static const std::function<void()> *g_fkernel;
static void emu_fiber_entry();
#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
/* a fiber switch of our own on x86-64 (the callee-saved registers, MXCSR and the x87 control
   word on the stack, then the stack pointer): no system call, unlike swapcontext */
extern "C" void kr_emu_switch(void **save_sp, void *to_sp);
asm(".pushsection .text\n"
    "kr_emu_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".popsection\n");
static void *g_sched_sp, *g_fsp[1024];
static void emu_yield() { kr_emu_switch(&g_fsp[g_fcur], g_sched_sp); }
static void emu_resume(unsigned t) { kr_emu_switch(&g_sched_sp, g_fsp[t]); }
static void emu_make(unsigned t) { /* a stack that kr_emu_switch "returns" into emu_fiber_entry from */
  void **s = (void **)(((uintptr_t)(g_stacks + (size_t)(t + 1) * EMU_STACK)) & ~(uintptr_t)15);
  *--s = nullptr;                      /* emu_fiber_entry's return address: it never returns */
  *--s = (void *)&emu_fiber_entry;
  for (int i = 0; i < 6; i++) *--s = nullptr;
  --s;
  unsigned *cw = (unsigned *)s;
  __asm__ volatile("stmxcsr %0" : "=m"(cw[0]));
  __asm__ volatile("fnstcw %0" : "=m"(*(unsigned short *)&cw[1]));
  g_fsp[t] = s;
}
#else
#include <ucontext.h>
static ucontext_t g_sched, g_fctx[1024], g_tmpl;
static void emu_yield() { swapcontext(&g_fctx[g_fcur], &g_sched); }
static void emu_resume(unsigned) { swapcontext(&g_sched, &g_fctx[g_fcur]); }
static void emu_make(unsigned t) {
  if (t == 0) getcontext(&g_tmpl);
  g_fctx[t] = g_tmpl;
  g_fctx[t].uc_stack.ss_sp = g_stacks + (size_t)t * EMU_STACK;
  g_fctx[t].uc_stack.ss_size = EMU_STACK;
  g_fctx[t].uc_link = nullptr;
  makecontext(&g_fctx[t], emu_fiber_entry, 0);
}
#endif
static void emu_leave(EmuBar &b) { /* a returned thread no longer counts at b */
  b.live--;
  if (b.live > 0 && b.count >= b.live) { b.count = 0; b.gen++; }
}
static void emu_fiber_entry() {
  const unsigned t = g_fcur;
  (*g_fkernel)();
  g_fdone[t] = 1;
  g_progress++;
  emu_leave(g_bbar);
  emu_leave(g_wbar[t / 32]);
  emu_yield(); /* never resumed */
  abort();
}
static void emu_launch(Dim3E grid, Dim3E block, const std::function<void()> &kernel) {
  gridDim = grid; blockDim = block;
  const unsigned nt = block.x * block.y * block.z;
  auto index = [&](unsigned t) { return Dim3E{ t % block.x, (t / block.x) % block.y, t / (block.x * block.y) }; };
#ifdef EMU_SEQUENTIAL
  /* no barrier and no shuffle in the source: the block's threads run one after another */
  g_seq = true;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        blockIdx = { bx, by, bz };
        for (unsigned t = 0; t < nt; t++) { threadIdx = index(t); kernel(); }
      }
  g_seq = false;
  return;
#endif
  if (nt == 0 || nt > 1024) { fprintf(stderr, "kreach.emulate: a block of %u threads\n", nt); abort(); }
  if (!g_stacks) {
    void *m = mmap(nullptr, 1024 * EMU_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) { perror("kreach.emulate: mmap of the fibers' stacks"); abort(); }
    g_stacks = (char *)m;
  }
  g_fkernel = &kernel;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        blockIdx = { bx, by, bz };
        g_bbar = { 0, 0, nt };
        for (unsigned w = 0; w * 32 < nt; w++) g_wbar[w] = { 0, 0, nt - w * 32 < 32 ? nt - w * 32 : 32 };
        for (unsigned t = 0; t < nt; t++) { g_fdone[t] = 0; emu_make(t); }
        /* rounds over the threads still running: each runs until it returns or waits */
        for (unsigned left = nt; left > 0;) {
          const unsigned long long before = g_progress;
          for (unsigned t = 0; t < nt; t++) {
            if (g_fdone[t]) continue;
            g_fcur = t;
            threadIdx = index(t);
            emu_resume(t);
            if (g_fdone[t]) left--;
          }
          if (left > 0 && g_progress == before) {
            fprintf(stderr, "kreach.emulate: block (%u, %u, %u): %u of its threads wait at barriers "
                            "that cannot complete (a __syncthreads or a shuffle not every thread reaches)\n",
                    bx, by, bz, left);
            abort();
          }
        }
      }
}
]==]

-- What makes a block's threads wait for one another: with none of these in a kernel's source,
-- its threads can run one after another on one thread (M.sequential).
M.WAITS = { "__syncthreads", "__syncwarp", "__shfl", "__ballot", "__any_sync", "__all_sync", "__activemask",
            "cooperative_groups", "this_thread_block", "Mma<", "mma.sync", "bar.sync", "emu_shfl" }

-- sequential(src) -> "#define EMU_SEQUENTIAL 1" where the source has none of M.WAITS (then
-- M.LAUNCH runs a block's threads in turn on the calling thread, without barriers: a launch of
-- many blocks is then hundreds of times cheaper), else "". A barrier reached anyway aborts with
-- a message, never a wrong result.
function M.sequential(src)
  for _, w in ipairs(M.WAITS) do
    if src:find(w, 1, true) then return "" end
  end
  return "#define EMU_SEQUENTIAL 1"
end

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

-- cache_dir() -> where compiled pieces of the emulation are kept (kreach.host's libraries, the
-- precompiled header): $KREACH_HOST_CACHE, else $XDG_CACHE_HOME/kreach/host, else
-- ~/.cache/kreach/host
function M.cache_dir()
  local d = os.getenv("KREACH_HOST_CACHE")
  if d and d ~= "" then return d end
  local x = os.getenv("XDG_CACHE_HOME")
  if x and x ~= "" then return x .. "/kreach/host" end
  return (os.getenv("HOME") or "/tmp") .. "/.cache/kreach/host"
end

-- pch(cmd) -> the path of M.HEADER (CUDA's fp16 and bf16 headers and the standard library, most
-- of a program's compile time) in cache_dir(), compiled once by cmd (compiler()'s line) into a
-- precompiled header beside it that g++ takes instead where a program includes it; keyed by the
-- header and the command line. Files are written under temporary names and renamed into place,
-- so that concurrent processes share them. Raises when the header does not compile.
function M.pch(cmd)
  local dir = M.cache_dir()
  local mok, merr = output.mkdirs(dir)
  if not mok then error(("kreach.emulate: cannot create the cache directory %s: %s"):format(dir, tostring(merr)), 0) end
  local h = ("%s/emu-%s.h"):format(dir, util.hash(cmd .. "\0" .. M.HEADER))
  local function temp(path) return ("%s.%d.tmp"):format(path, math.random(1, 1 << 30)) end
  if not lfs.attributes(h .. ".gch", "mode") then
    if not lfs.attributes(h, "mode") then
      local t = temp(h)
      local f = assert(io.open(t, "w"))
      f:write(M.HEADER)
      f:close()
      assert(os.rename(t, h))
    end
    local t = temp(h) .. ".gch"
    local ok, out = M.compile(cmd .. " -x c++-header", h, t)
    if not ok then
      os.remove(t)
      error("kreach.emulate: the emulation's header does not compile:\n" .. out:sub(1, 4000), 0)
    end
    assert(os.rename(t, h .. ".gch"))
  end
  return h
end

-- precompiled(cmd, text) -> the program text to compile with cmd: its leading M.HEADER, where it
-- starts with it, replaced by an #include of pch(cmd) (the same program, compiled in half the
-- time); other text as it is.
function M.precompiled(cmd, text)
  if text:sub(1, #M.HEADER) ~= M.HEADER then return text end
  return ('#include "%s"\n'):format(M.pch(cmd)) .. text:sub(#M.HEADER + 1)
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
  local cmd = M.compiler{ cuda_home = opts.cuda_home }
  local f = assert(io.open(dir .. "/emu.cpp", "w"))
  f:write(M.precompiled(cmd, table.concat(parts, "\n")))
  f:close()
  local cok, cout = M.compile(cmd, dir .. "/emu.cpp", dir .. "/emu")
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
