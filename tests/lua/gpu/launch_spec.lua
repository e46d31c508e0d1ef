-- Compiling and launching kernels on the GPU: every scalar type and every tensor dtype, C++
-- kernels (namespaced and templated), launch configurations, and the errors for bad launches.
local kreach = require "kreach"

local tmpdir = require("support").tmpdir
local cache = tmpdir()

local SCALARS = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void scalars(double *out, int a, unsigned b, long long c,
    unsigned long long d, size_t e, float f, double g, __half h, __nv_bfloat16 i, bool j,
    signed char k, unsigned char l, short m, unsigned short n, long o) {
  out[0] = a; out[1] = b; out[2] = (double)c; out[3] = (double)d; out[4] = (double)e;
  out[5] = f; out[6] = g; out[7] = __half2float(h); out[8] = __bfloat162float(i);
  out[9] = j ? 1 : 0; out[10] = k; out[11] = l; out[12] = m; out[13] = n; out[14] = (double)o;
}
]]

local DTYPES_SRC = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <typename T> __device__ T bump(T v) { return v + (T)1; }
template <> __device__ bool bump<bool>(bool v) { return !v; }
template <> __device__ __half bump<__half>(__half v) { return __hadd(v, __float2half(1.0f)); }
template <> __device__ __nv_bfloat16 bump<__nv_bfloat16>(__nv_bfloat16 v) {
  return __float2bfloat16(__bfloat162float(v) + 1.0f);
}
template <typename T> __global__ void inc(const T *x, T *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = bump(x[i]);
}
extern "C" __global__ void all_ptrs(double *a, float *b, __half *c, __nv_bfloat16 *d,
    long long *e, int *f, short *g, signed char *h, unsigned char *i, bool *j) {
  a[0] = 7; b[0] = 7; c[0] = __float2half(7.0f); d[0] = __float2bfloat16(7.0f); e[0] = 7;
  f[0] = 7; g[0] = 7; h[0] = 7; i[0] = 7; j[0] = true;
}
namespace ns {
__global__ void twice(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2;
}
}
extern "C" __global__ void where(int *out) {
  int b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  out[b * blockDim.x * blockDim.y * blockDim.z + t] = b * 1000 + t;
}
extern "C" __global__ void big_shared(float *out, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = 1.0f;
  __syncthreads();
  float s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += buf[n - 1 - i];
  atomicAdd(out, s);
}
extern "C" __global__ void vec4(const float4 *x, float4 *y) { y[threadIdx.x] = x[threadIdx.x]; }
extern "C" __global__ void empty() {}
]]

local CPP_TYPES = { f64 = "double", f32 = "float", f16 = "__half", bf16 = "__nv_bfloat16",
  i64 = "long long", i32 = "int", i16 = "short", i8 = "signed char", u8 = "unsigned char",
  bool = "bool" }

local function f16(x) return kreach.from_table({ x }, { dtype = "f16" }):to_table()[1] end
local function bf16(x) return kreach.from_table({ x }, { dtype = "bf16" }):to_table()[1] end

describe("launch", function()
  local prog
  setup(function()
    local inst = {}
    for _, dt in ipairs(kreach.dtypes) do inst[#inst + 1] = "inc<" .. CPP_TYPES[dt] .. ">" end
    prog = assert(kreach.build{ source = DTYPES_SRC, name = "dtypes.cu", instantiate = inst,
                                cache_dir = cache })
  end)

  it("targets the device's own architecture", function()
    assert.equals(kreach.device().arch, prog.arch)
  end)

  it("converts every scalar type to the declared parameter type", function()
    local p = assert(kreach.build{ source = SCALARS, cache_dir = cache })
    local out = kreach.zeros({ 15 }, "f64")
    p.scalars{ grid = 1, block = 1 }(out, -123456, 4000000000, -(1 << 40), 1 << 50, 1 << 41,
      1.5, 1 / 3, 0.333, 0.333, true, -5, 250, -30000, 60000, -(1 << 45))
    local r = out:to_table()
    assert.same({ -123456, 4000000000, -(1 << 40), 1 << 50, 1 << 41, 1.5, 1 / 3, f16(0.333),
                  bf16(0.333), 1, -5, 250, -30000, 60000, -(1 << 45) }, r)
    -- an integral float is accepted for an integer parameter; a fractional one is not
    p.scalars{ grid = 1, block = 1 }(out, 2.0, 0, 0, 0, 0, 0, 0, 0, 0, false, 0, 0, 0, 0, 0)
    assert.equals(2, out:to_table()[1])
  end)

  it("refuses arguments that do not fit the declaration", function()
    local p = assert(kreach.build{ source = SCALARS, cache_dir = cache })
    local out = kreach.zeros({ 15 }, "f64")
    local function try(...)
      local args = table.pack(out, -1, 0, 0, 0, 0, 0, 0, 0, 0, false, 0, 0, 0, 0, 0)
      local over = table.pack(...)
      for i = 1, over.n, 2 do args[over[i]] = over[i + 1] end
      local ok, err = pcall(p.scalars{ grid = 1, block = 1 }, table.unpack(args, 1, 16))
      assert.is_false(ok)
      return err
    end
    assert.matches("argument 2 %(int a%): 1%.5 is not an integer", try(2, 1.5))
    assert.matches("argument 2 %(int a%): .* is out of range", try(2, 1 << 40))
    assert.matches("argument 3 %(unsigned b%): %-1 is out of range", try(3, -1))
    assert.matches("argument 12 %(signed char k%): 200 is out of range", try(12, 200))
    assert.matches("argument 7 %(float f%): number expected, got string", try(7, "x"))
    assert.matches("argument 1 %(double %* out%): tensor expected, got number", try(1, 5))
    assert.matches("argument 1 %(double %* out%): f64 tensor expected, got f32 tensor",
      try(1, kreach.empty({ 15 }, "f32")))
    local ok, err = pcall(p.scalars{ grid = 1, block = 1 }, out, 1)
    assert.matches("kernel 'scalars' takes 16 arguments %(double %* out, int a, .*%), got 2", err)
    local dead = kreach.empty({ 15 }, "f64"); dead:free()
    assert.matches("has been freed", try(1, dead))
  end)

  it("launches a template instantiation for every tensor dtype", function()
    local vals = { f64 = { 0.5, -3 }, f32 = { 0.5, -3 }, f16 = { 0.5, -3 }, bf16 = { 0.5, -3 },
      i64 = { 1 << 40, -3 }, i32 = { 5, -3 }, i16 = { 5, -3 }, i8 = { 5, -3 }, u8 = { 5, 3 },
      bool = { true, false } }
    for _, dt in ipairs(kreach.dtypes) do
      local k = prog["inc<" .. CPP_TYPES[dt] .. ">"]
      local x = kreach.from_table(vals[dt], { dtype = dt })
      local y = kreach.empty({ 2 }, dt):poison()
      k{ grid = 1, block = 32 }(x, y, 2)
      local want = {}
      for i, v in ipairs(vals[dt]) do
        if dt == "bool" then want[i] = not v else want[i] = v + 1 end
      end
      assert.same(want, y:to_table(), dt)
      -- a pointer of the wrong dtype is refused, naming both
      local other = dt == "f32" and "f64" or "f32"
      local ok, err = pcall(k{ grid = 1, block = 1 }, kreach.empty({ 2 }, other), y, 2)
      assert.matches(other .. " tensor", err)
    end
  end)

  it("passes every pointer type", function()
    local ts = {}
    for i, dt in ipairs(kreach.dtypes) do ts[i] = kreach.zeros({ 1 }, dt) end
    prog.all_ptrs{ grid = 1, block = 1 }(table.unpack(ts))
    for i, dt in ipairs(kreach.dtypes) do
      assert.equals(dt == "bool" and true or 7, ts[i]:to_table()[1], dt)
    end
  end)

  it("finds a C++ kernel in a namespace by its mangled name", function()
    local x = kreach.from_table({ 1, 2, 3 })
    prog.twice{ grid = 1, block = 32 }(x, 3)
    assert.same({ 2, 4, 6 }, x:to_table())
    assert.matches("^_ZN2ns5twice", prog.twice.attributes.symbol)
    assert.equals("x", prog.twice.params[1].name)
  end)

  it("takes grid and block as numbers or {x, y, z}", function()
    local out = kreach.empty({ 2 * 3 * 2 * 4 * 2 * 2 }, "i32"):poison()
    prog.where{ grid = { 2, 3, 2 }, block = { 4, 2, 2 } }(out)
    local r = out:to_table()
    for b = 0, 11 do
      for t = 0, 15 do assert.equals(b * 1000 + t, r[b * 16 + t + 1]) end
    end
    prog.where:launch({ grid = 1, block = 8 }, out)
    assert.equals(7, out:to_table(8, 1)[1])
  end)

  it("raises the dynamic shared memory limit above 48 KiB when asked", function()
    local n = 50000 -- 200,000 bytes
    local out = kreach.zeros({ 1 }, "f32")
    prog.big_shared{ grid = 1, block = 256, shared = n * 4 }(out, n)
    assert.equals(n, out:to_table()[1]) -- sums of ones stay exact in f32
    local d = kreach.device()
    local ok, err = pcall(prog.big_shared{ grid = 1, block = 256,
      shared = d.shared_per_block_optin_bytes + 1 }, out, n)
    assert.matches("asks for %d+ bytes of dynamic shared memory", err)
  end)

  it("refuses bad configurations with clear messages", function()
    local function err_of(cfg)
      local ok, e = pcall(function() prog.empty(cfg)() end)
      assert.is_false(ok)
      return e
    end
    assert.matches("too many threads per block for 'empty': 2048", err_of{ grid = 1, block = 2048 })
    assert.matches("block {1, 1, 128} for 'empty' exceeds the device's", err_of{ grid = 1, block = { 1, 1, 128 } })
    assert.matches("grid {1, 70000, 1} for 'empty' exceeds", err_of{ grid = { 1, 70000 }, block = 1 })
    assert.matches("needs 'block'", err_of{ grid = 1 })
    assert.matches("must be a positive integer", err_of{ grid = 0, block = 1 })
    assert.matches("unknown option 'blocks'", err_of{ grid = 1, blocks = 1 })
    local ok, e = pcall(function() return prog.nope end)
    assert.matches("has no kernel 'nope'", e)
  end)

  it("checks vector pointer alignment", function()
    local x = kreach.zeros({ 64 }, "f32")
    local y = kreach.zeros({ 64 }, "f32")
    prog.vec4{ grid = 1, block = 16 }(x, y)
    local ok, err = pcall(prog.vec4{ grid = 1, block = 1 }, x:narrow(1, 2, 8), y)
    assert.matches("not aligned", err)
  end)

  it("reports the kernel's attributes", function()
    local a = prog.big_shared.attributes
    assert.is_true(a.registers > 0)
    assert.is_true(a.max_threads_per_block >= 256)
    assert.equals("big_shared", a.symbol)
  end)
end)

describe("events", function()
  it("time work on the harness stream", function()
    local p = assert(kreach.build{ source = DTYPES_SRC, cache_dir = cache })
    local a, b = kreach.event(), kreach.event()
    a:record()
    p.empty{ grid = 1, block = 1 }()
    b:record()
    local ms = a:elapsed_ms(b)
    assert.is_true(ms >= 0 and ms < 1000)
    assert.is_true(b:query())
    b:synchronize()
    local c = kreach.event()
    local ok, err = pcall(function() return a:elapsed_ms(c) end)
    assert.matches("has not been recorded", err)
    assert.is_true(kreach.time_ms(function() p.empty{ grid = 1, block = 1 }() end) >= 0)
    c:free(); c:free()
    assert.has_error(function() c:record() end)
  end)
end)
