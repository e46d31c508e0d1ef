-- kreach.kernel on the GPU: the first launch on real tensors compiles for the device and
-- launches; later launches reuse the program; a problem whose reference is its own kernel runs
-- as a baseline and as the fp64 oracle; launch errors name the line that launched.
local kreach = require "kreach"
local problem = require "kreach.problem"
local support = require "support"

local THIS = debug.getinfo(1, "S").source:sub(2)
local cache = support.tmpdir()

local TWICE = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };
template <typename T> __global__ void twice(const T *x, T *y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (T)((typename Acc<T>::type)2 * (typename Acc<T>::type)x[i]);
}
]]
local INSTANTIATE = { "twice<float>", "twice<double>", "twice<__half>", "twice<__nv_bfloat16>" }

describe("kreach.kernel on the GPU", function()
  local arch = kreach.device().arch

  it("compiles on the first launch, for the device, and launches", function()
    local decl = debug.getinfo(1, "l").currentline + 1
    local k = kreach.kernel{ source = TWICE, instantiate = INSTANTIATE, cache_dir = cache }
    assert.matches("not compiled", tostring(k))
    local n = 1000
    local vals = {}
    for i = 1, n do vals[i] = i - 500.25 end
    local x = kreach.from_table(vals)
    local y = kreach.empty({ n }):poison()
    k["twice<float>"]{ grid = (n + 255) // 256, block = 256 }(x, y, n)
    local out = y:to_table()
    for i = 1, n do assert.equals(2 * vals[i], out[i]) end -- doubling is exact in f32
    assert.equals(("kreach.kernel(kernel_spec.cu, %s:%d, compiled for %s)"):format(THIS, decl, arch), tostring(k))
    -- later launches (other kernels of the program included) reuse the one program
    local p = assert(k:build())
    assert.is_true(rawequal(p, k:build(arch)))
    local xd, yd = x:to("f64"), kreach.empty({ n }, "f64"):poison()
    k["twice<double>"]:launch({ grid = (n + 255) // 256, block = 256 }, xd, yd, n)
    local outd = yd:to_table()
    for i = 1, n do assert.equals(2 * vals[i], outd[i]) end
    assert.matches("compiled for " .. arch .. "%)$", tostring(k))
  end)

  it("raises a bad launch on real tensors at the line that launched", function()
    local k = kreach.kernel{ source = TWICE, instantiate = INSTANTIATE, cache_dir = cache }
    local x, h = kreach.zeros({ 8 }), kreach.zeros({ 8 }, "f16")
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() k["twice<float>"]{ grid = 1, block = 32 }(x, h, 8) end)
    assert.is_false(ok)
    assert.matches("^" .. THIS:gsub("%p", "%%%0") .. ":" .. line .. ": kernel 'twice<float>' argument 2", err)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() k["twice<float>"]{ grid = 1, block = 4096 }(x, x, 8) end)
    assert.is_false(ok)
    assert.matches("^" .. THIS:gsub("%p", "%%%0") .. ":" .. line .. ": .*too many threads per block", err)
    assert.is_false((kreach.broken())) -- refused before the launch: the context is fine
  end)

  it("raises a source that does not compile at its first launch, naming the declaration", function()
    local decl = debug.getinfo(1, "l").currentline + 1
    local k = kreach.kernel{ name = "broken.cu", cache_dir = cache, source = [[
extern "C" __global__ void f(float *y) { y[0] = nope; }
]] }
    local ok, err = pcall(function() k.f{ grid = 1, block = 1 }(kreach.zeros({ 1 })) end)
    assert.is_false(ok)
    assert.is_truthy(err:find(("%s:%d: kreach.kernel 'broken.cu' does not compile for %s"):format(THIS, decl, arch), 1, true), err)
    assert.is_truthy(err:find(("%s:%d: error: identifier \"nope\" is undefined"):format(THIS, decl + 1), 1, true), err)
  end)

  it("serves a problem's reference as its baseline and as its fp64 oracle", function()
    local dir = support.tmpdir()
    local path = dir .. "/007_Twice.lua"
    support.spit(path, ([==[
local kreach = require "kreach"
local k = kreach.kernel{ name = "twice.cu", source = %q, instantiate = { "twice<float>", "twice<double>", "twice<__half>", "twice<__nv_bfloat16>" } }
local C = { f32 = "float", f64 = "double", f16 = "__half", bf16 = "__nv_bfloat16" }
return kreach.problem{
  id = 7, name = "7_Twice", suite = "test", category = "elementwise", description = "y = 2 x",
  sizes = { n = 100003 },
  args = { kreach.input("x", { "n" }, { dist = "normal(0, 3)", domain = "real" }), kreach.output("y", { "n" }) },
  reference = function(ops, x, y)
    k["twice<" .. C[x.dtype] .. ">"]{ grid = (x:numel() + 255) // 256, block = 256 }(x, y, x:numel())
  end,
  flops = function(s) return s.n end,
  torch = { model = "class Model(nn.Module): pass" },
}
]==]):format(TWICE))
    local p = problem.load(path)
    for _, dt in ipairs({ "f32", "bf16", "f16" }) do
      local inst = p:instantiate{ dtype = dt }
      assert.is_true(inst:validate()) -- with the device open: compiled for its architecture
      local vals = inst:make_args(1)
      inst:run_reference(vals) -- raises if an element is left unwritten (poisoned)
      local ovals = inst:oracle_args(vals)
      inst:run_reference(ovals)
      -- doubling is exact in every dtype: the baseline equals the oracle, tolerance 0
      local m = kreach.ops.compare(vals[#vals], ovals[#ovals])
      assert.equals(0, m.rel_l2, dt)
      assert.equals(0, m.nonfinite, dt)
      inst:free_oracle(vals, ovals)
    end
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)
