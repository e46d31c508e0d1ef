-- kreach.kernel without a GPU: declaring a kernel compiles nothing; a problem that carries its
-- own reference kernel loads, instantiates and validates (the launch checked on shape-only
-- tensors, compiled for an architecture); compile and launch errors name the file and line;
-- the compile goes through kreach.build's memory and disk caches.
local kreach = require "kreach"
local kernel = require "kreach.kernel"
local meta = require "kreach.meta"
local problem = require "kreach.problem"
local lfs = require "lfs"
local support = require "support"

local THIS = debug.getinfo(1, "S").source:sub(2)

local function cubins(dir)
  local n = 0
  for f in lfs.dir(dir) do if f:match("%.kcubin$") then n = n + 1 end end
  return n
end

local GOOD = [[
extern "C" __global__ void twice(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i];
}
]]

-- A problem file whose reference launches `launch` (Lua) on a kernel of `cuda`; `extra` goes
-- beside the kernel's name (more options of kreach.kernel). Returns its path and the lines of
-- the file where kreach.kernel{ is called, where the CUDA source starts, and where the launch is.
local LAUNCH = "k.twice{ grid = (x:numel() + 255) // 256, block = 256 }(x, y, x:numel())"
local function write_problem(dir, cuda, launch, extra)
  local text = ([==[
local kreach = require "kreach"
local k = kreach.kernel{
  name = "mine.cu", %s
  source = [[
%s]],
}
return kreach.problem{
  id = 7, name = "7_Twice", suite = "test", category = "elementwise", description = "y = 2 x",
  sizes = { n = 1000 },
  args = { kreach.input("x", { "n" }), kreach.output("y", { "n" }) },
  reference = function(ops, x, y)
    %s
  end,
  flops = function(s) return s.n end,
  torch = { model = "class Model(nn.Module): pass" },
}
]==]):format(extra or "", cuda, launch or LAUNCH)
  local path = dir .. "/007_Twice.lua"
  support.spit(path, text)
  local n, launch_line = 0, nil
  for line in text:gmatch("[^\n]*\n") do
    n = n + 1
    if line:find("reference = function", 1, true) then launch_line = n + 1 end
  end
  return path, 2, 5, launch_line
end

local function validate_error(path)
  local p = problem.load(path) -- loading compiles nothing, so it never fails for the CUDA
  local ok, err = pcall(function() return p:instantiate():validate() end)
  assert.is_false(ok, "validate should have failed")
  return tostring(err)
end

describe("kreach.kernel", function()
  local dir, cache
  before_each(function()
    dir = support.tmpdir()
    cache = support.tmpdir()
  end)
  after_each(function()
    os.execute("rm -rf '" .. dir .. "' '" .. cache .. "'")
  end)

  it("is the facade's kreach.kernel", function()
    assert.equals(kernel.new, kreach.kernel)
  end)

  it("compiles nothing when declared, even a source that does not compile", function()
    local k = kreach.kernel{ source = "this is not CUDA", cache_dir = cache }
    assert.equals(0, cubins(cache))
    assert.matches("not compiled", tostring(k))
    local ok = kreach.kernel{ source = GOOD, cache_dir = cache }
    assert.equals(0, cubins(cache))
    assert.matches("not compiled", tostring(ok))
  end)

  it("names its source after the declaring file, and says where it was declared", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local k = kreach.kernel{ source = GOOD }
    assert.equals("kernel_spec.cu", k.name)
    assert.equals(THIS .. ":" .. line, k.where)
    assert.equals("given.cu", kreach.kernel{ source = GOOD, name = "given.cu" }.name)
  end)

  it("compiles on k:build(arch) without a GPU, once per architecture, through kreach.build's cache", function()
    local k = kreach.kernel{ source = GOOD, name = "twice.cu", cache_dir = cache }
    local p = assert(k:build("sm_90"))
    assert.equals("sm_90", p.arch)
    assert.same({ "twice" }, p.kernels)
    assert.equals(1, cubins(cache)) -- the disk cache of kreach.build
    assert.is_true(rawequal(p, k:build("sm_90")))
    local p80 = assert(k:build("sm_80"))
    assert.equals("sm_80", p80.arch)
    assert.equals(2, cubins(cache))
    assert.matches("compiled for sm_80, sm_90", tostring(k))
    -- the same source declared again, or built by kreach.build, is the same cache entry
    local again = assert(kreach.kernel{ source = GOOD, name = "twice.cu", cache_dir = cache }:build("sm_90"))
    assert.equals(p.key, again.key)
    assert.equals("memory", again.cache)
    local direct = assert(kreach.build{ source = GOOD, name = "twice.cu", arch = "sm_90", cache_dir = cache })
    assert.equals(p.key, direct.key)
    assert.equals("memory", direct.cache)
    -- and a new process finds it on disk
    local src = dir .. "/cache_check.lua"
    support.spit(src, ([[
local k = require("kreach").kernel{ source = %q, name = "twice.cu", cache_dir = %q }
io.write(k:build("sm_90").cache)
]]):format(GOOD, cache))
    local h = io.popen(("'%s' '%s'"):format(kreach.executable(), src))
    local out = h:read("a")
    h:close()
    assert.equals("disk", out)
  end)

  it("passes options and instantiations to NVRTC", function()
    local k = kreach.kernel{ source = [[
template <typename T> __global__ void fill(T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (T)VALUE;
}
]], options = { "-DVALUE=3" }, instantiate = { "fill<float>", "fill<double>" }, cache_dir = cache }
    local p = assert(k:build("sm_90"))
    assert.same({ "fill<float>", "fill<double>" }, p.kernels)
    local bad = kreach.kernel{ source = "__global__ void f() { int x = VALUE; }", cache_dir = cache }
    assert.is_nil((bad:build("sm_90")))
  end)

  it("reports a compile error at the declaration, with NVRTC's lines turned into the file's", function()
    local decl = debug.getinfo(1, "l").currentline + 1
    local k = kreach.kernel{ name = "bad.cu", cache_dir = cache, source = [[
extern "C" __global__ void f(float *y) {
  y[0] = undefined_name;
}
]] }
    local p, err = k:build("sm_90")
    assert.is_nil(p)
    assert.is_truthy(err:find(("%s:%d: kreach.kernel 'bad.cu' does not compile for sm_90:\n"):format(THIS, decl), 1, true), err)
    assert.is_truthy(err:find(("%s:%d: error: identifier \"undefined_name\" is undefined"):format(THIS, decl + 2), 1, true), err)
    assert.is_nil(err:find("bad.cu(", 1, true), err)
    -- the same error again, without compiling again
    local p2, err2 = k:build("sm_90")
    assert.is_nil(p2)
    assert.equals(err, err2)
    assert.equals(0, cubins(cache))
  end)

  it("keeps NVRTC's own lines when the source is not written in the declaring file", function()
    local k = kreach.kernel{ name = "built.cu", cache_dir = cache,
                             source = "extern \"C\" __global__ void f(float *y) {\n" .. "  y[0] = nope;\n}\n" }
    local _, err = k:build("sm_90")
    assert.is_truthy(err:find("built.cu(2): error: identifier \"nope\" is undefined", 1, true), err)
  end)

  it("raises for misuse at the line that declared it", function()
    local ok, err = pcall(kreach.kernel, { sorce = GOOD })
    assert.is_false(ok)
    assert.matches("unknown option 'sorce' %(did you mean 'source'%?%)", err)
    local line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() local _ = kreach.kernel{ name = "x.cu" } end)
    assert.is_false(ok)
    assert.matches("^" .. THIS:gsub("%p", "%%%0") .. ":" .. line .. ": kreach.kernel: 'source' is required", err)
    ok, err = pcall(kreach.kernel, { source = GOOD, options = { 3 } })
    assert.is_false(ok)
    assert.matches("option 'options': entry 1 is a number, not a string", err)
    ok, err = pcall(kreach.kernel, { source = GOOD, no_cache = "yes" })
    assert.is_false(ok)
    assert.matches("option 'no_cache' must be a boolean, got string", err)
    ok, err = pcall(kreach.kernel, "source")
    assert.is_false(ok)
    assert.matches("table expected, got string", err)
    local k = kreach.kernel{ source = GOOD }
    ok, err = pcall(function() k.twice = 1 end)
    assert.is_false(ok)
    assert.matches("read%-only", err)
    ok, err = pcall(function() return k.twice(256) end)
    assert.is_false(ok)
    assert.matches("kernel 'twice': a launch takes a table", err)
  end)

  it("checks a launch on shape-only tensors without a GPU and marks what it writes", function()
    local k = kreach.kernel{ source = GOOD, cache_dir = cache }
    local x, y = meta.new({ 1000 }, "f32", "x"), meta.new({ 1000 }, "f32", "y")
    k.twice{ grid = 4, block = 256 }(x, y, 1000)
    assert.is_true(y:written())  -- float *y
    assert.is_false(x:written()) -- const float *x
    if require("kreach.core").device_state() ~= "open" then
      assert.matches("compiled for " .. kernel.CHECK_ARCH, tostring(k))
    end
    -- the method form, and a view: the write is the root's
    local x2, y2 = meta.new({ 10, 100 }, "f32"), meta.new({ 10, 100 }, "f32")
    k.twice:launch({ grid = 4, block = 256 }, x2:flatten(), y2:flatten(), 1000)
    assert.is_true(y2:written())
    assert.is_false(x2:written())
  end)

  it("reports a bad launch at the line that launched", function()
    local k = kreach.kernel{ source = GOOD, cache_dir = cache }
    local x, h = meta.new({ 8 }, "f32"), meta.new({ 8 }, "f16")
    local function at(line) return THIS:gsub("%p", "%%%0") .. ":" .. line .. ": " end
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() k.twice{ grid = 1, block = 32 }(x, h, 8) end)
    assert.is_false(ok)
    assert.matches("^" .. at(line) .. "kernel 'twice' argument 2 %(float %* y%): f32 tensor expected, got f16 tensor", err)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() k.twice{ grid = 1, block = 32 }(x, x) end)
    assert.matches("^" .. at(line) .. "kernel 'twice' takes 3 arguments", err)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() k.twice{ grid = 1, block = 2048 }(x, x, 8) end)
    assert.matches("^" .. at(line) .. ".*too many threads per block for 'twice': 2048", err)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() k.thrice{ grid = 1, block = 32 }(x, x, 8) end)
    assert.matches("^" .. at(line) .. ".*has no kernel 'thrice' %(kernels: twice%)", err)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() k.twice:launch({ grid = 1, blocks = 32 }, x, x, 8) end)
    assert.matches("^" .. at(line) .. "unknown option 'blocks' for a launch", err)
  end)

  it("reaches a kernel whose name is a method's through k:kernel(name)", function()
    local k = kreach.kernel{ cache_dir = cache, source = [[
extern "C" __global__ void build(float *y) { y[threadIdx.x] = 1.f; }
]] }
    local y = meta.new({ 32 }, "f32")
    k:kernel("build"){ grid = 1, block = 32 }(y)
    assert.is_true(y:written())
  end)

  it("needs a GPU only to launch on real tensors: k:build() without an arch is the device's", function()
    if kreach.has_device() then return end
    local k = kreach.kernel{ source = GOOD, cache_dir = cache }
    local ok, err = pcall(k.build, k)
    assert.is_false(ok)
    assert.matches("no CUDA device", err)
    -- a launch with no shape-only tensor is a real one: it needs the device, and says so at
    -- the line that launched (and main.c makes that uncaught error exit 77)
    local none = kreach.kernel{ source = 'extern "C" __global__ void nothing(int n) {}', cache_dir = cache }
    local line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() none.nothing{ grid = 1, block = 1 }(3) end)
    assert.is_false(ok)
    assert.matches("^" .. THIS:gsub("%p", "%%%0") .. ":" .. line .. ": no CUDA device: ", err)
    assert.matches("not compiled", tostring(none))
  end)
end)

describe("a problem file with its own reference kernel", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("loads, instantiates and validates at every dtype without a GPU", function()
    local path = write_problem(dir, [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <typename T> __global__ void twice(const T *x, T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (T)(2.f * (float)x[i]);
}
]], [[local C = { f32 = "float", f64 = "double", f16 = "__half", bf16 = "__nv_bfloat16" }
    k["twice<" .. C[x.dtype] .. ">"]{ grid = 4, block = 256 }(x, y, x:numel())]],
      [[instantiate = { "twice<float>", "twice<double>", "twice<__half>", "twice<__nv_bfloat16>" },]])
    local p = problem.load(path)
    for _, dt in ipairs({ "f32", "bf16", "f16" }) do
      assert.is_true(p:instantiate{ dtype = dt }:validate())
    end
  end)

  it("validates through kreach show, with status 0", function()
    local path = write_problem(dir, GOOD)
    local h = io.popen(("'%s' show '%s' 2>&1; echo status=$?"):format(kreach.executable(), path))
    local out = h:read("a")
    h:close()
    assert.matches("7_Twice %(elementwise, problem 7 of test%)", out)
    assert.matches("status=0\n$", out)
  end)

  it("fails validation with the file and line of CUDA that does not compile", function()
    local path, decl_line, source_line = write_problem(dir, (GOOD:gsub("2%.f %* x%[i%]", "2.f * z[i]")))
    local err = validate_error(path)
    assert.is_truthy(err:find(("%s:%d: kreach.kernel 'mine.cu' does not compile for"):format(path, decl_line), 1, true), err)
    -- the bad line is the source's third
    assert.is_truthy(err:find(("%s:%d: error: identifier \"z\" is undefined"):format(path, source_line + 2), 1, true), err)
  end)

  it("fails validation with the line of a launch that does not fit", function()
    local path, _, _, launch_line = write_problem(dir, GOOD, "k.twice{ grid = 4, block = 256 }(x, y)")
    local err = validate_error(path)
    assert.is_truthy(err:find(("%s:%d: kernel 'twice' takes 3 arguments"):format(path, launch_line), 1, true), err)
  end)

  it("knows the outputs from the kernel's non-const pointers", function()
    -- the output declared const: never written
    local path = write_problem(dir, (GOOD:gsub("float %*y", "const float *y"):gsub("y%[i%] = 2%.f %* x%[i%]", "(void)x; (void)y")))
    assert.matches("does not write output 'y'", validate_error(path))
    -- the input not const: written, which a reference must not do
    path = write_problem(dir, (GOOD:gsub("const float %*x", "float *x")))
    assert.matches("writes input 'x', which it must only read", validate_error(path))
  end)
end)
