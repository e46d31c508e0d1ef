-- kreach lint's launch limits against the GPU's: for kernels compiled for this device, the
-- limits read without a GPU (the architecture's table and the cubin: static shared memory,
-- registers, __launch_bounds__) are the ones a launch uses (the device's properties and the
-- loaded kernel's attributes), and launch:check refuses exactly what a real launch refuses,
-- with the same message.
local kreach = require "kreach"
local meta = require "kreach.meta"

local SRC = [[
extern "C" __global__ void __launch_bounds__(256) tiled(float *x) {
  __shared__ float s[1000];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x + 1) % 256];
}
extern "C" __global__ void odd_shared(float *x) {
  __shared__ float s[7];
  s[threadIdx.x % 7] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x + 1) % 7];
}
extern "C" __global__ void plain(float *x, int n) { if (threadIdx.x == 0 && blockIdx.x == 0) x[0] = n; }
extern "C" __global__ void dyn(float *x) { extern __shared__ float d[]; d[threadIdx.x] = 1; __syncthreads(); if (threadIdx.x == 0) x[0] = d[0]; }
namespace ns { __global__ void cpp(double *d) { __shared__ double t[64]; t[threadIdx.x % 64] = d[0]; __syncthreads(); if (threadIdx.x == 0) d[1] = t[3]; } }
extern "C" __global__ void heavy(float *x) {
  float a[96];
  for (int i = 0; i < 96; i++) a[i] = x[(i * blockDim.x + threadIdx.x) % 1024];
  float s = 0;
  for (int i = 0; i < 96; i++) for (int j = 0; j < 96; j++) s += a[i] * a[(i * 7 + j) % 96];
  x[threadIdx.x % 1024] = s;
}
]]

local function progs()
  local out = {}
  for _, regs in ipairs{ 0, 255, 168, 128, 96, 80, 72, 64, 40 } do
    out[#out + 1] = assert(kreach.build{ source = SRC, name = "limits.cu", no_cache = true,
      options = regs > 0 and { "--maxrregcount=" .. regs } or nil })
  end
  return out
end

describe("launch limits without a GPU, on the GPU", function()
  local ps = progs()

  it("are the device's and the loaded kernels' own", function()
    for _, p in ipairs(ps) do
      for _, name in ipairs{ "tiled", "odd_shared", "plain", "dyn", "cpp", "heavy" } do
        local l = p[name]{ grid = 1, block = 1 }
        local dry, dev = l:limits(), l:limits(true)
        local what = ("%s (%s registers)"):format(name, tostring(dev.registers))
        assert.same(dev.max_block, dry.max_block, what)
        assert.same(dev.max_grid, dry.max_grid, what)
        assert.equals(dev.shared_optin, dry.shared_optin, what)
        assert.equals(dev.static_shared, dry.static_shared, what .. ": static shared memory")
        assert.equals(dev.registers, dry.registers, what .. ": registers")
        assert.equals(dev.max_threads_per_block, dry.max_threads_per_block, what .. ": threads per block")
      end
    end
  end)

  it("refuse exactly what a launch refuses, with the same message", function()
    local p = ps[1]
    local x = kreach.empty({ 1024 }, "f32")
    local mx = meta.new({ 1024 }, "f32")
    local cases = {
      { "plain", { grid = 1, block = 99999 }, { 3 } }, { "plain", { grid = 1, block = { 32, 32, 2 } }, { 3 } },
      { "plain", { grid = { 1, 65536 }, block = 1 }, { 3 } }, { "dyn", { grid = 1, block = 32, shared = 300000 }, {} },
      { "tiled", { grid = 1, block = 512 }, {} }, { "tiled", { grid = 1, block = 256, shared = 232448 - 4000 + 1 }, {} },
      { "tiled", { grid = 1, block = 256, shared = 232448 - 4000 }, {} }, { "heavy", { grid = 1, block = 1024 }, {} },
      { "dyn", { grid = 2, block = 128, shared = 100000 }, {} },
    }
    for _, c in ipairs(cases) do
      local l = p[c[1]](c[2])
      local from = l:limits().from
      local rok, rerr = pcall(function() l(x, table.unpack(c[3])) kreach.synchronize() end)
      local cok, cerr = pcall(function() return l:check(mx, table.unpack(c[3])) end)
      local what = c[1] .. " " .. require("cjson").encode(c[2])
      assert.equals(rok, cok, what)
      if not rok then
        local strip = function(e) return (tostring(e):gsub("^[^:\n]*:%d+: ", "", 1)) end
        assert.equals(strip(rerr), (strip(cerr):gsub(from:gsub("%p", "%%%0") .. "'s", "the device's")
          :gsub("on " .. from:gsub("%p", "%%%0"), "on the device"):gsub("bytes " .. from:gsub("%p", "%%%0") .. " allows",
          "bytes the device allows")), what)
      end
    end
    x:free()
  end)
end)
