-- Asynchronous faults: a kernel that writes through a bad address is reported at the next
-- synchronisation, naming the kernel, and the process stays able to report it. Each case
-- runs in its own kreach process, since such a fault leaves the CUDA context unusable.
local kreach = require "kreach"

local function run(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local p = io.popen(("%q %q 2>&1; echo \"status=$?\""):format(kreach.executable(), path))
  local out = p:read("a")
  p:close()
  os.remove(path)
  return out, tonumber(out:match("status=(%d+)"))
end

local PRELUDE = [[
local kreach = require "kreach"
local p = assert(kreach.build{ source = [=[
extern "C" __global__ void bad(float *x, long long off) { x[off] = 1.0f; }
extern "C" __global__ void fine(float *x) { x[0] = 2.0f; }
]=] })
local x = kreach.zeros({ 16 })
]]

describe("an illegal address", function()
  it("is reported at the next synchronisation, naming the kernel", function()
    local out, status = run(PRELUDE .. [[
p.fine{ grid = 1, block = 1 }(x)
p.bad{ grid = 1, block = 1 }(x, 1 << 40)
local ok, err = pcall(kreach.synchronize)
print("sync ok:", ok)
print("message:", err)
print("broken:", kreach.broken())
local ok2, err2 = pcall(function() return x:to_table() end)
print("after:", ok2, err2)
local ok3, err3 = pcall(function() p.fine{ grid = 1, block = 1 }(x) end)
print("launch after:", ok3, err3)
print("still here")
]])
    assert.equals(0, status, out)
    assert.matches("sync ok:%s+false", out)
    assert.matches("message:[^\n]*illegal memory access", out)
    assert.matches("message:[^\n]*after kernel 'bad' %(the last of %d+ kernels", out)
    assert.matches("broken:%s+true", out)
    assert.matches("after:%s+false[^\n]*unusable", out)
    assert.matches("launch after:%s+false[^\n]*unusable", out)
    assert.matches("still here", out)
  end)

  it("reaches the top level as a clear error and exit status 1", function()
    local out, status = run(PRELUDE .. [[
p.bad{ grid = 1, block = 1 }(x, -(1 << 40))
print(x:to_table()[1])
]])
    assert.equals(1, status, out)
    assert.matches("kreach: [^\n]*illegal memory access[^\n]*after kernel 'bad'", out)
  end)

  it("in a C++ kernel found by its mangled name is reported by its source name", function()
    local out, status = run([[
local kreach = require "kreach"
local p = assert(kreach.build{ source = "namespace q { __global__ void oops(int *p) { p[1LL << 41] = 1; } }" })
local t = kreach.zeros({ 4 }, "i32")
p.oops{ grid = 1, block = 32 }(t)
local ok, err = pcall(kreach.synchronize)
print(err)
]])
    assert.equals(0, status, out)
    assert.matches("after kernel 'oops'", out)
  end)
end)
