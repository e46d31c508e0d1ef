-- kreach.tensors and kreach.device, the internal modules behind the facade's tensor and device
-- helpers: what they export, and what they do without a GPU.
local tensor = require "kreach.core.tensor"
local core = require "kreach.core"
local tensors = require "kreach.tensors"
local device = require "kreach.device"
local errors = require "kreach.errors"

describe("kreach.tensors", function()
  it("re-exports kreach.core.tensor's makers and the dtypes", function()
    for _, k in ipairs({ "empty", "from_table", "from_bytes", "is_tensor", "dtype_size" }) do
      assert.equals(tensor[k], tensors[k], k)
    end
    assert.same(tensor.dtypes(), tensors.dtypes)
    assert.equals(2, tensors.dtype_size("bf16"))
  end)

  it("checks shapes and dtypes of zeros and full before it touches the device", function()
    local ok, err = pcall(tensors.zeros, { 2, -1 })
    assert.is_false(ok)
    assert.matches("size 2 of the shape is not a non%-negative integer", err)
    ok, err = pcall(tensors.full, { 2 }, 1.5, "f8")
    assert.is_false(ok)
    assert.matches("unknown dtype 'f8'", err)
  end)
end)

describe("kreach.device", function()
  it("require() is the device's properties, or the user error 'no CUDA device' (status 77)", function()
    local has = core.has_device()
    local ok, r = pcall(device.require)
    if has then
      assert.is_true(ok)
      assert.is_string(r.name)
    else
      assert.is_false(ok)
      assert.equals(errors.Error, getmetatable(r))
      assert.equals(77, r.status)
      assert.matches("^no CUDA device: ", tostring(r))
    end
  end)

  it("time_ms times a function between two events", function()
    assert.is_function(device.time_ms)
    if not core.has_device() then
      -- the events need a GPU: without one, fn is not called
      local called = false
      assert.has_error(function() device.time_ms(function() called = true end) end)
      assert.is_false(called)
    end
  end)
end)
