-- Tensors over 4 GiB and over 2^31 elements: allocated, filled on the device, read back in
-- part, viewed, converted and counted with 64-bit indices throughout.
local kreach = require "kreach"

local N = (1 << 32) + 4097   -- u8 elements: over 4 GiB and over 2^31 elements

local SRC = [[
extern "C" __global__ void pattern(unsigned char *p, unsigned long long n) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += stride)
    p[i] = (unsigned char)((i * 2654435761ull) >> 13);
}
]]

local function expected(i) -- i is 0-based, like the kernel's
  return ((i * 2654435761) >> 13) & 0xff
end

describe("a tensor over 4 GiB", function()
  local t
  setup(function() t = kreach.empty({ N }, "u8") end)
  teardown(function() if t then t:free() end end)

  it("reports its size in 64 bits", function()
    assert.equals(N, t:numel())
    assert.equals(N, t:nbytes())
    assert.equals(N, t:size(1))
  end)

  it("is written by a kernel and read back in part, far past 2^31 and 2^32", function()
    local p = assert(kreach.build{ source = SRC })
    p.pattern{ grid = 4096, block = 256 }(t, N)
    for _, first in ipairs({ 0, (1 << 31) - 5, (1 << 32) - 5, N - 16 }) do
      local got = t:to_table(first + 1, 16)
      for k = 1, 16 do
        assert.equals(expected(first + k - 1), got[k], "element " .. (first + k - 1))
      end
    end
    local tail = t:narrow(1, N - 99, 100)
    assert.equals(expected(N - 100), tail:to_table(1, 1)[1])
    local s = t:to_bytes(N - 3, 3)
    assert.equals(expected(N - 1), s:byte(3))
  end)

  it("is filled, poisoned and counted on the device", function()
    t:fill(7)
    assert.same({ 7, 7 }, t:to_table(N - 1, 2))
    t:poison()
    assert.equals(N, t:count_poisoned())
    t:narrow(1, (1 << 32) + 1, 10):fill(0)
    assert.equals(N - 10, t:count_poisoned())
    t:randint(0, 256, 99)
    local a = t:to_table(N - 1000, 1000)
    local seen = {}
    for _, v in ipairs(a) do seen[v] = true end
    local distinct = 0
    for _ in pairs(seen) do distinct = distinct + 1 end
    assert.is_true(distinct > 200)
  end)

  it("converts and views across the 4 GiB boundary", function()
    local f = kreach.empty({ 1200000000 }, "f32") -- 4.8 GB in one tensor
    f:uniform(-1, 1, 5)
    local last = f:to_table(f:numel(), 1)[1]
    assert.is_true(last >= -1 and last < 1)
    local v = f:view(1200, -1)
    assert.same({ 1200, 1000000 }, v.shape)
    local row = v:narrow(1, 1200, 1)
    assert.equals(last, row:to_table(1000000, 1)[1])
    f:free()
  end)
end)
