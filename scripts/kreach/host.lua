-- kreach.host: the host device (KREACH_DEVICE=host), kreach's CUDA run on the CPU so that a
-- machine without a GPU (CI) computes real values: tensors live in host memory (the runtime's
-- host mode), and a program's kernels are compiled by g++ under kreach.emulate's emulation of
-- CUDA (a block's CUDA threads fibers switching at barriers and shuffles, blocks one after another) into a
-- shared library with one trampoline a kernel, which the runtime calls (kreach.core.host).
-- Slow (every CUDA thread runs in turn on one CPU thread), exact in its arithmetic (the same
-- source, IEEE on the CPU; the host's libm for expf and friends), for small sizes.
--
--   local host = require "kreach.host"
--   if host.active() then
--     local p = host.build{ source = src, instantiate = { "k<float>", ... }, name = "family" }
--     p["k<float>"]{ grid = n, block = 256 }(x, y, n)
--   end
--
-- Compiled libraries are cached by the hash of their source and the compiler's command in
-- emulate.cache_dir(); a compile writes a temporary file renamed into place, so that concurrent
-- processes share the cache. The emulation's header comes precompiled (emulate.precompiled),
-- which halves a library's compile.
local emu = require "kreach.emulate"
local output = require "kreach.atomic"
local util = require "kreach.core.util"
local lfs = require "lfs"

local M = {}

local core_host
local function binding()
  if core_host == nil then
    local ok, mod = pcall(require, "kreach.core.host")
    core_host = ok and mod or false
  end
  return core_host or nil
end

-- active() -> whether the current context is the host device (KREACH_DEVICE=host)
function M.active()
  local b = binding()
  return b ~= nil and b.is_host() or false
end

-- The C++ each library starts with after the emulation: the arguments as the runtime passes
-- them (kr_harg), checked against each kernel parameter's type as a GPU launch checks them
-- against the declaration (kreach.core.nvrtc: a tensor's dtype against the pointer's element
-- type, integers whole and in range, numbers for numbers), converted, and the launch.
local TRAMPOLINE = [==[
#include <climits>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
struct kr_harg { int kind; long long i; double d; void *p; const char *dtype; }; /* runtime/kr_host.h */
/* the tensor dtypes a pointer to E takes, as kr_sig reads a declaration: a, or b; "" any (void);
   none (a == nullptr): no tensor dtype fits */
template <typename E> struct kr_el { static constexpr const char *a = nullptr, *b = nullptr; };
#define KR_EL(T, A, B) template <> struct kr_el<T> { static constexpr const char *a = A, *b = B; };
KR_EL(void, "", nullptr) KR_EL(float, "f32", nullptr) KR_EL(double, "f64", nullptr)
KR_EL(__half, "f16", nullptr) KR_EL(__nv_bfloat16, "bf16", nullptr) KR_EL(__half2, "f16", nullptr)
KR_EL(__nv_bfloat162, "bf16", nullptr) KR_EL(bool, "bool", nullptr) KR_EL(char, "i8", "u8")
KR_EL(signed char, "i8", nullptr) KR_EL(unsigned char, "u8", nullptr) KR_EL(short, "i16", nullptr)
KR_EL(unsigned short, "i16", nullptr) KR_EL(int, "i32", nullptr) KR_EL(unsigned, "i32", nullptr)
KR_EL(long, "i64", nullptr) KR_EL(unsigned long, "i64", nullptr) KR_EL(long long, "i64", nullptr)
KR_EL(unsigned long long, "i64", nullptr)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define KR_VEC(S, A) KR_EL(S##1, A, nullptr) KR_EL(S##2, A, nullptr) KR_EL(S##3, A, nullptr) KR_EL(S##4, A, nullptr)
KR_VEC(char, "i8") KR_VEC(uchar, "u8") KR_VEC(short, "i16") KR_VEC(ushort, "i16") KR_VEC(int, "i32")
KR_VEC(uint, "i32") KR_VEC(long, "i64") KR_VEC(ulong, "i64") KR_VEC(longlong, "i64")
KR_VEC(ulonglong, "i64") KR_VEC(float, "f32") KR_VEC(double, "f64")
#pragma GCC diagnostic pop
static const char *kr_kind(const kr_harg &a) {
  return a.kind == 0 ? "tensor" : a.kind == 3 ? "boolean" : "number";
}
/* whether argument `a` fits a parameter of type T; else false with why in err */
template <typename T> static bool kr_fits(const kr_harg &a, const char *name, int i, char *err, size_t errlen) {
#define KR_NO(...) do { int at = snprintf(err, errlen, "kernel '%s' argument %d: ", name, i); \
    if (at >= 0 && (size_t)at < errlen) snprintf(err + at, errlen - at, __VA_ARGS__); return false; } while (0)
  if constexpr (std::is_pointer_v<T>) {
    using E = std::remove_cv_t<std::remove_pointer_t<T>>;
    if (a.kind != 0) KR_NO("tensor expected, got %s", kr_kind(a));
    if constexpr (kr_el<E>::a == nullptr) {
      KR_NO("kreach has no tensor dtype for this pointer type (declare it void * or a plain element type)");
    } else if constexpr (!std::is_void_v<E>) {
      const char *want = kr_el<E>::a, *also = kr_el<E>::b;
      if (a.dtype && strcmp(a.dtype, want) != 0 && !(also && strcmp(a.dtype, also) == 0))
        KR_NO("%s%s%s tensor expected, got %s tensor", want, also ? " or " : "", also ? also : "", a.dtype);
      if ((uintptr_t)a.p % alignof(E) != 0)
        KR_NO("the tensor's address is not aligned for this vector type (a narrowed view?)");
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    const bool whole = a.kind == 3 || a.kind == 1 || (a.kind == 2 && (a.d == 0 || a.d == 1));
    if (!whole || (a.kind == 1 && a.i != 0 && a.i != 1)) KR_NO("a boolean or 0 or 1 expected");
  } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
    if (a.kind == 0 || a.kind == 3) KR_NO("integer expected, got %s", kr_kind(a));
    long long x = a.i;
    if (a.kind == 2) {
      if (!(a.d >= -9223372036854775808.0 && a.d < 9223372036854775808.0) || (double)(long long)a.d != a.d)
        KR_NO("%.17g is not an integer", a.d);
      x = (long long)a.d;
    }
    using I = typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>, std::type_identity<T>>::type;
    constexpr long long lo = (long long)std::numeric_limits<I>::min();
    constexpr long long hi = std::numeric_limits<I>::max() > (unsigned long long)LLONG_MAX
                                 ? LLONG_MAX : (long long)std::numeric_limits<I>::max();
    if (x < lo || x > hi) KR_NO("%lld is out of range", x);
  } else {
    if (a.kind != 1 && a.kind != 2) KR_NO("number expected, got %s", kr_kind(a));
  }
#undef KR_NO
  return true;
}
template <typename T> static T kr_conv(const kr_harg &a) {
  if constexpr (std::is_pointer_v<T>) return reinterpret_cast<T>(a.p);
  else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) return (T)(a.kind == 2 ? (long long)a.d : a.i);
  else if constexpr (std::is_floating_point_v<T>) return (T)(a.kind == 2 ? a.d : (double)a.i);
  else if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
    return T((float)(a.kind == 2 ? a.d : (double)a.i));
  else static_assert(sizeof(T) == 0, "a kernel parameter type the host emulation cannot pass");
}
template <typename... A, size_t... I>
static bool kr_check(void (*)(A...), const kr_harg *a, const char *name, char *err, size_t errlen,
                     std::index_sequence<I...>) {
  return (kr_fits<std::decay_t<A>>(a[I], name, (int)I + 1, err, errlen) && ...);
}
template <typename... A, size_t... I>
static void kr_invoke(void (*f)(A...), const kr_harg *a, std::index_sequence<I...>) {
  f(kr_conv<std::decay_t<A>>(a[I])...);
}
template <typename... A>
static int kr_run(void (*f)(A...), const char *name, const unsigned *g, const unsigned *b,
                  const kr_harg *a, int n, char *err, size_t errlen) {
  if (n != (int)sizeof...(A)) {
    snprintf(err, errlen, "kernel '%s' takes %d argument%s, got %d", name, (int)sizeof...(A),
             sizeof...(A) == 1 ? "" : "s", n);
    return 1;
  }
  if (!kr_check(f, a, name, err, errlen, std::index_sequence_for<A...>{})) return 1;
  if ((unsigned long long)b[0] * b[1] * b[2] > 1024) {
    snprintf(err, errlen, "%s: a block of %u x %u x %u threads is more than 1024", name, b[0], b[1], b[2]);
    return 1;
  }
  emu_launch({g[0], g[1], g[2]}, {b[0], b[1], b[2]}, [&] { kr_invoke(f, a, std::index_sequence_for<A...>{}); });
  return 0;
}
]==]

-- source_for(source, instantiate) -> the C++ source of the library: the emulation, the
-- kernels' source (dynamic shared arrays made pointers into the emulation's buffer, inline PTX
-- replaced by emulate.host_source), and one trampoline kr_host_k<i> a name of `instantiate`
-- (0-based, in order)
function M.source_for(source, instantiate)
  local kernels = emu.source(emu.host_source(source))
  local parts = { emu.HEADER, emu.sequential(kernels), emu.LAUNCH, TRAMPOLINE, kernels }
  for i, name in ipairs(instantiate) do
    parts[#parts + 1] = ('extern "C" int kr_host_k%d(const unsigned *g, const unsigned *b, size_t, const kr_harg *a, int n, char *err, size_t errlen) { return kr_run(&%s, %q, g, b, a, n, err, errlen); }')
      :format(i - 1, name, name)
  end
  return table.concat(parts, "\n")
end

local libs = {} -- path -> the open library (kept for the process)

-- build{source =, instantiate = {names}, name =} -> a program: p[name]{grid =, block =,
-- shared =}(args...) launches kernel `name` (one of instantiate) on the host device. Raises
-- with g++'s output when the source does not compile.
function M.build(o)
  local b = binding()
  if not b then error("kreach.host: this kreach has no host device (kreach.core.host)", 0) end
  local src = M.source_for(o.source, o.instantiate)
  local cmd = emu.compiler{ shared = true }
  local key = util.hash(cmd .. "\0" .. src)
  local dir = emu.cache_dir()
  local mok, merr = output.mkdirs(dir)
  if not mok then error(("kreach.host: cannot create the cache directory %s: %s"):format(dir, tostring(merr)), 0) end
  local so = ("%s/%s.so"):format(dir, key)
  if not lfs.attributes(so, "mode") then
    local tmp = ("%s/%s.%d.tmp"):format(dir, key, math.random(1, 1 << 30))
    local f = assert(io.open(tmp .. ".cpp", "w"))
    f:write(emu.precompiled(cmd, src)) -- the emulation's header through its precompiled form
    f:close()
    local ok, out = emu.compile(cmd, tmp .. ".cpp", tmp .. ".so")
    os.remove(tmp .. ".cpp")
    if not ok then
      os.remove(tmp .. ".so")
      error(("kreach.host: %s does not compile for the host device:\n%s"):format(o.name or "a program", out:sub(1, 4000)), 0)
    end
    assert(os.rename(tmp .. ".so", so))
  end
  local lib = libs[so]
  if not lib then
    local why
    lib, why = b.open(so)
    if not lib then error(("kreach.host: cannot load %s: %s"):format(so, tostring(why)), 0) end
    libs[so] = lib
  end
  local index = {}
  for i, name in ipairs(o.instantiate) do index[name] = i - 1 end
  -- a kernel as NVRTC's programs give one: k{grid =, block =, shared =}(args...), k:launch(cfg,
  -- args...), k.name, k.attributes (the emulation's: no register count of its own, so 32, the
  -- figure an occupancy estimate of the real kernel would use at worst for these sources)
  local kernels = {}
  local Kernel = {}
  Kernel.__index = Kernel
  -- the grid and block are checked as a GPU launch's (kr_lua_checkdim3) at each call; an error
  -- is raised at the caller of the launch, without this file's position
  Kernel.__call = function(k, cfg)
    local g, bl, sh = cfg.grid, cfg.block, cfg.shared or 0
    return function(...)
      local ok, err = pcall(lib.call, lib, k.symbol, k.name, g, bl, sh, ...)
      if not ok then error(type(err) == "string" and err:gsub("^[^\n]-:%d+: ", "", 1) or err, 2) end
    end
  end
  function Kernel:launch(cfg, ...) return self(cfg)(...) end
  Kernel.__tostring = function(k) return ("kreach.Kernel(%s, host)"):format(k.name) end
  for i, name in ipairs(o.instantiate) do
    kernels[name] = setmetatable({ name = name, symbol = "kr_host_k" .. (i - 1),
      attributes = { registers = 32, static_shared_bytes = 0, local_bytes = 0, max_threads_per_block = 1024,
                     symbol = "kr_host_k" .. (i - 1) } }, Kernel)
  end
  return setmetatable({}, { __index = function(_, name)
    local k = kernels[name]
    if not k then error(("kreach.host: %s has no kernel %s"):format(o.name or "the program", tostring(name)), 2) end
    return k
  end })
end

return M
