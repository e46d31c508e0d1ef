-- A launch checked without a GPU (launch:check, what kreach lint uses): the same C code as a
-- real launch parses the launch table and converts the arguments (shape-only tensors stand in
-- for tensors), and kr_launch_check judges the configuration against the architecture's
-- documented limits and what the cubin says of the kernel (static shared memory, registers,
-- __launch_bounds__). Also k:scratch in a dry run: what kreach.empty checks.
local nvrtc = require "kreach.core.nvrtc"
local tensor = require "kreach.core.tensor"
local meta = require "kreach.meta"

local SRC = [[
extern "C" __global__ void __launch_bounds__(256) tiled(float *x) {
  __shared__ float s[1000];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x + 1) % 256];
}
extern "C" __global__ void plain(float *x, int n) { x[0] = n; }
namespace ns { __global__ void cpp(double *d) { __shared__ double t[64]; t[threadIdx.x] = d[0]; __syncthreads(); d[1] = t[3]; } }
]]

local function build(arch, src, options)
  return assert(nvrtc.build{ source = src or SRC, arch = arch, no_cache = true, name = "t.cu", options = options })
end

local function fails(f, pattern)
  local ok, err = pcall(f)
  assert.is_false(ok, "no error")
  assert.matches(pattern, tostring(err))
end

describe("launch limits without a GPU", function()
  it("are the architecture's, with the kernel's own from its cubin", function()
    local p = build("sm_90")
    local l = p.plain{ grid = 1, block = 1 }:limits()
    assert.equals("sm_90", l.from)
    assert.same({ 1024, 1024, 64 }, l.max_block)
    assert.same({ 2147483647, 65535, 65535 }, l.max_grid)
    assert.equals(1024, l.max_threads_per_block)
    assert.equals(232448, l.shared_optin) -- 227 KiB
    assert.equals(0, l.static_shared)
    assert.is_true(l.registers > 0)
    local t = p.tiled{ grid = 1, block = 1 }:limits()
    assert.equals(4000, t.static_shared) -- the 1 KiB the system reserves is not the kernel's
    assert.equals(256, t.max_threads_per_block) -- __launch_bounds__(256)
    assert.equals(512, p.cpp{ grid = 1, block = 1 }:limits().static_shared) -- a C++ kernel, found by name
    assert.equals(101376, build("sm_89").plain{ grid = 1, block = 1 }:limits().shared_optin) -- 99 KiB
    assert.equals(166912, build("sm_80").plain{ grid = 1, block = 1 }:limits().shared_optin) -- 163 KiB
    assert.equals(4000, build("sm_80").tiled{ grid = 1, block = 1 }:limits().static_shared)
  end)

  it("bound threads per block by the kernel's registers", function()
    -- registers go to a warp in units of 256, from one of the SM's four sub-partitions of
    -- 16384 registers each: at 208 a thread (6656 a warp) 2 warps fit in each, so 256 threads
    -- (what the H200's driver says; pooling all 65536 would give 288)
    local src = [[extern "C" __global__ void heavy(float *x) {
      float a[96];
      for (int i = 0; i < 96; i++) a[i] = x[i * blockDim.x + threadIdx.x];
      float s = 0;
      for (int i = 0; i < 96; i++) for (int j = 0; j < 96; j++) s += a[i] * a[(i * 7 + j) % 96];
      x[threadIdx.x] = s;
    }]]
    local l = build("sm_90", src, { "--maxrregcount=255" }).heavy{ grid = 1, block = 1 }:limits()
    assert.is_true(l.registers > 64, "the kernel uses " .. tostring(l.registers) .. " registers")
    local per_warp = (l.registers * 32 + 255) // 256 * 256
    assert.equals(math.min(1024, 4 * (16384 // per_warp) * 32), l.max_threads_per_block)
    assert.is_true(l.max_threads_per_block < 1024)
  end)

  it("refuse an architecture kreach has no table for", function()
    fails(function() build("sm_88").plain{ grid = 1, block = 1 }:check(meta.new({ 4 }, "f32"), 1) end,
      "no launch limits for sm_88")
  end)
end)

describe("launch:check", function()
  local p = build("sm_90")
  local x = meta.new({ 1024 }, "f32")

  it("passes what a launch would run, and returns true", function()
    assert.is_true(p.plain{ grid = { 4, 2 }, block = { 32, 8 } }:check(x, 3))
    assert.is_true(p.tiled{ grid = 1, block = 256, shared = 232448 - 4000 }:check(x))
    assert.is_true(p.cpp{ grid = 1, block = 64 }:check(meta.new({ 2 }, "f64")))
  end)

  it("refuses the configurations a launch refuses, naming the limit", function()
    fails(function() p.plain{ grid = 1, block = 99999 }:check(x, 3) end,
      "t%.cu: too many threads per block for 'plain': 99999, the most it can run on sm_90 is 1024 %(%d+ registers per thread%)")
    fails(function() p.plain{ grid = 1, block = { 1, 1, 128 } }:check(x, 3) end,
      "t%.cu: block {1, 1, 128} for 'plain' exceeds sm_90's {1024, 1024, 64}")
    fails(function() p.plain{ grid = 1, block = { 32, 32, 2 } }:check(x, 3) end,
      "too many threads per block for 'plain': 2048, the most it can run on sm_90 is 1024")
    fails(function() p.tiled{ grid = 1, block = 512 }:check(x) end, "the most it can run on sm_90 is 256")
    fails(function() p.plain{ grid = { 1, 65536 }, block = 1 }:check(x, 3) end, "grid {1, 65536, 1} for 'plain' exceeds")
    fails(function() p.plain{ grid = 1, block = 1, shared = 300000 }:check(x, 3) end,
      "'plain' asks for 300000 bytes of dynamic shared memory; with its 0 static bytes sm_90 allows 232448")
    fails(function() p.tiled{ grid = 1, block = 1, shared = 232448 - 4000 + 1 }:check(x) end,
      "with its 4000 static bytes sm_90 allows 228448")
    -- the launch table as a launch parses it
    fails(function() p.plain{ grid = 1, block = 1, threads = 32 }(x, 3) end, "unknown option 'threads' for a launch")
    fails(function() p.plain{ grid = 0, block = 1 } end, "launch 'grid' must be a positive integer")
    fails(function() p.plain{ grid = 1, block = 1.5 } end, "launch 'block' must be a positive integer")
    fails(function() p.plain{ block = 1 } end, "launch configuration needs 'grid'")
    fails(function() p.plain{ grid = 1, block = { 1, 1, 1, 1 } } end, "takes 1 to 3 sizes")
    fails(function() p.plain{ grid = 1, block = 1, shared = -1 } end, "'shared' must be >= 0")
  end)

  it("checks the arguments as a launch converts them", function()
    local l = p.plain{ grid = 1, block = 1 }
    fails(function() l:check(x) end, "kernel 'plain' takes 2 arguments %(float %* x, int n%), got 1")
    fails(function() l:check(meta.new({ 4 }, "f64"), 3) end, "argument 1 %(float %* x%): f32 tensor expected, got f64 tensor")
    fails(function() l:check(3, 3) end, "argument 1 %(float %* x%): tensor expected, got number")
    fails(function() l:check({}, 3) end, "tensor expected, got table")
    fails(function() l:check(x, 3.5) end, "argument 2 %(int n%): 3%.5 is not an integer")
    fails(function() l:check(x, 2 ^ 40) end, "argument 2 %(int n%): .* is out of range")
    fails(function() l:check(x, x) end, "argument 2 %(int n%): integer expected, got table")
  end)
end)

describe("scratch requests in a dry run", function()
  it("are checked as kreach.empty checks them, without a GPU", function()
    assert.equals(4096, tensor.check_empty({ 32, 32 }, "f32"))
    assert.equals(0, tensor.check_empty({ 0 }, "f64"))
    assert.equals(32, tensor.check_empty({ 8 })) -- f32 by default
    fails(function() tensor.check_empty({ -1 }, "f32") end, "size 1 of the shape is not a non%-negative integer")
    fails(function() tensor.check_empty({ 1.5 }, "f32") end, "not a non%-negative integer")
    fails(function() tensor.check_empty({ 4 }, "f8") end, "unknown dtype 'f8'")
    fails(function() tensor.check_empty({ 1, 1, 1, 1, 1, 1, 1, 1, 1 }, "f32") end, "dimensions")
    fails(function() tensor.check_empty({ 1 << 62, 8 }, "f32") end, "overflows 64 bits")
    fails(function() tensor.check_empty({ 1 << 62 }, "f64") end, "overflow the address space")
    fails(function() tensor.check_empty(4, "f32") end, "table expected")
  end)
end)
