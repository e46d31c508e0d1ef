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
local output = require "kreach.output"
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
-- them (kr_harg), converted to each kernel parameter's type, and the launch.
local TRAMPOLINE = [==[
#include <type_traits>
#include <utility>
struct kr_harg { int kind; long long i; double d; void *p; }; /* runtime/kr_host.h */
template <typename T> static T kr_conv(const kr_harg &a) {
  if constexpr (std::is_pointer_v<T>) return reinterpret_cast<T>(a.p);
  else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) return (T)a.i;
  else if constexpr (std::is_floating_point_v<T>) return (T)(a.kind == 2 ? a.d : (double)a.i);
  else if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
    return T((float)(a.kind == 2 ? a.d : (double)a.i));
  else static_assert(sizeof(T) == 0, "a kernel parameter type the host emulation cannot pass");
}
template <typename... A, size_t... I>
static void kr_invoke(void (*f)(A...), const kr_harg *a, std::index_sequence<I...>) {
  f(kr_conv<std::decay_t<A>>(a[I])...);
}
template <typename... A>
static int kr_run(void (*f)(A...), const char *name, const unsigned *g, const unsigned *b,
                  const kr_harg *a, int n, char *err, size_t errlen) {
  if (n != (int)sizeof...(A)) {
    snprintf(err, errlen, "%s takes %d arguments, got %d", name, (int)sizeof...(A), n);
    return 1;
  }
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
  -- the grid and block are checked as a GPU launch's (kr_lua_checkdim3) at each call
  Kernel.__call = function(k, cfg)
    local g, bl, sh = cfg.grid, cfg.block, cfg.shared or 0
    return function(...) lib:call(k.symbol, g, bl, sh, ...) end
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
