-- A launch on the host device (KREACH_DEVICE=host, set by ctest for host_ specs) is checked as a
-- GPU launch is, before the kernel runs: the host device runs a kernel as native code on
-- kreach's own heap, so an f32 kernel given an f16 tensor used to write past the tensor's end
-- and corrupt the heap (glibc aborted). Each argument against the parameter's type (the
-- trampolines of kreach.host), the count, and the configuration, raised at the line that
-- launched and naming the kernel, as kreach.core.nvrtc's launches are.
local kreach = require "kreach"
local host = require "kreach.host"

local THIS = debug.getinfo(1, "S").source:sub(2)
local function at(line) return "^" .. THIS:gsub("%p", "%%%0") .. ":" .. line .. ": " end

local SOURCE = [[
struct Pair { float a, b; };
template <typename T> __global__ void twice(const T *x, T *y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + x[i];
}
extern "C" __global__ void put_int(int *y, int v) { y[0] = v; }
extern "C" __global__ void put_u32(int *y, unsigned v) { y[0] = (int)v; }
extern "C" __global__ void put_float(float *y, float v) { y[0] = v; }
extern "C" __global__ void put_flag(int *y, bool v) { y[0] = v ? 7 : 3; }
enum Mode : unsigned char { OFF = 0, ON = 200 };
extern "C" __global__ void put_mode(int *y, Mode m) { y[0] = (int)m; }
extern "C" __global__ void bytes(void *p, long long n) { for (long long i = 0; i < n; i++) ((char *)p)[i] = 1; }
extern "C" __global__ void chars(char *p) { p[0] = 2; }
extern "C" __global__ void vec4(float4 *p) { p[0] = make_float4(1, 2, 3, 4); }
extern "C" __global__ void pairs(Pair *p) { p[0].a = 1; }
]]

describe("a launch on the host device", function()
  if not host.active() then
    it("needs the host device (KREACH_DEVICE=host)", function() pending("not on the host device") end)
    return
  end
  local k = kreach.kernel{ source = SOURCE, instantiate = { "twice<float>", "twice<double>" } }

  it("launches what fits its declaration", function()
    local x, y = kreach.from_table({ 1, 2, 3 }), kreach.zeros({ 3 })
    k["twice<float>"]{ grid = 1, block = 32 }(x, y, 3)
    assert.same({ 2, 4, 6 }, y:to_table())
    local i = kreach.zeros({ 1 }, "i32")
    k.put_int{ grid = 1, block = 1 }(i, 2.0) -- an integral float is the integer (it used to pass 0)
    assert.same({ 2 }, i:to_table())
    k.put_u32{ grid = 1, block = 1 }(i, 4294967295)
    assert.same({ -1 }, i:to_table())
    k.put_flag{ grid = 1, block = 1 }(i, true)
    assert.same({ 7 }, i:to_table())
    k.put_mode{ grid = 1, block = 1 }(i, 200.0) -- an enum takes an integer, or an integral float
    assert.same({ 200 }, i:to_table())
    local f = kreach.zeros({ 1 })
    k.put_float{ grid = 1, block = 1 }(f, 3) -- an integer for a float
    assert.same({ 3 }, f:to_table())
    for _, dt in ipairs({ "f16", "u8", "i64" }) do k.bytes{ grid = 1, block = 1 }(kreach.zeros({ 2 }, dt), 2) end -- void * takes any dtype
    for _, dt in ipairs({ "i8", "u8" }) do k.chars{ grid = 1, block = 1 }(kreach.zeros({ 2 }, dt)) end -- char * takes i8 and u8
    local v = kreach.zeros({ 8 })
    k.vec4{ grid = 1, block = 1 }(v)
    assert.same({ 1, 2, 3, 4, 0, 0, 0, 0 }, v:to_table())
  end)

  -- each case: the launch, and what its error says after the launching line's position
  local x, h, i = kreach.zeros({ 8 }), kreach.zeros({ 8 }, "f16"), kreach.zeros({ 1 }, "i32")
  local cases = {
    { "a tensor of another dtype than the pointer's", function() k["twice<float>"]{ grid = 1, block = 32 }(x, h, 8) end,
      "kernel 'twice<float>' argument 2: f32 tensor expected, got f16 tensor" },
    { "an i64 tensor for char *", function() k.chars{ grid = 1, block = 1 }(kreach.zeros({ 1 }, "i64")) end,
      "kernel 'chars' argument 1: i8 or u8 tensor expected, got i64 tensor" },
    { "a pointer to a struct", function() k.pairs{ grid = 1, block = 1 }(x) end,
      "kernel 'pairs' argument 1: kreach has no tensor dtype for this pointer type" },
    { "a float4 * into a tensor's middle", function() k.vec4{ grid = 1, block = 1 }(x:narrow(1, 2, 4)) end,
      "kernel 'vec4' argument 1: the tensor's address is not aligned for this vector type" },
    { "a number for a pointer", function() k["twice<float>"]{ grid = 1, block = 32 }(x, 5, 8) end,
      "kernel 'twice<float>' argument 2: tensor expected, got number" },
    { "a fraction for an int", function() k.put_int{ grid = 1, block = 1 }(i, 2.5) end,
      "kernel 'put_int' argument 2: 2.5 is not an integer" },
    { "an int out of range", function() k.put_int{ grid = 1, block = 1 }(i, 1 << 40) end,
      "kernel 'put_int' argument 2: 1099511627776 is out of range" },
    { "an enum out of its type's range", function() k.put_mode{ grid = 1, block = 1 }(i, 256) end,
      "kernel 'put_mode' argument 2: 256 is out of range" },
    { "a negative unsigned", function() k.put_u32{ grid = 1, block = 1 }(i, -1) end,
      "kernel 'put_u32' argument 2: -1 is out of range" },
    { "a tensor for an int", function() k.put_int{ grid = 1, block = 1 }(i, i) end,
      "kernel 'put_int' argument 2: integer expected, got tensor" },
    { "a boolean for an int", function() k.put_int{ grid = 1, block = 1 }(i, true) end,
      "kernel 'put_int' argument 2: integer expected, got boolean" },
    { "a boolean for a float", function() k.put_float{ grid = 1, block = 1 }(x, false) end,
      "kernel 'put_float' argument 2: number expected, got boolean" },
    { "a 2 for a bool", function() k.put_flag{ grid = 1, block = 1 }(i, 2) end,
      "kernel 'put_flag' argument 2: a boolean or 0 or 1 expected" },
    { "one argument too many", function() k.put_int{ grid = 1, block = 1 }(i, 1, 2) end,
      "kernel 'put_int' takes 2 arguments, got 3" },
    { "a string", function() k.put_int{ grid = 1, block = 1 }(i, "1") end,
      "kernel 'put_int' argument 2: a tensor, number or boolean expected, got string" },
    { "a block over 1024 threads", function() k["twice<float>"]{ grid = 1, block = 4096 }(x, x, 8) end,
      "too many threads per block for 'twice<float>': 4096" },
  }
  for _, c in ipairs(cases) do
    it("refuses " .. c[1] .. " before the kernel runs, at the line that launched", function()
      local line = debug.getinfo(c[2], "S").linedefined
      local ok, err = pcall(c[2])
      assert.is_false(ok)
      assert.matches(at(line), err)
      assert.is_truthy(err:find(c[3], 1, true), err)
    end)
  end

  it("refuses a freed tensor", function()
    local y = kreach.zeros({ 8 })
    y:free()
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() k["twice<float>"]{ grid = 1, block = 32 }(x, y, 8) end)
    assert.is_false(ok)
    assert.matches(at(line) .. "kernel 'twice<float>' argument 2: the tensor has been freed", err)
  end)

  it("leaves the refused launch's outputs as they were", function()
    local y = kreach.from_table({ 5, 5, 5, 5 }):to("f16")
    assert.is_false((pcall(function() k["twice<float>"]{ grid = 1, block = 32 }(kreach.zeros({ 4 }), y, 4) end)))
    assert.same({ 5, 5, 5, 5 }, y:to_table())
  end)
end)
