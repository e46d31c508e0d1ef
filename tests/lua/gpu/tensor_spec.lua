-- Tensors on the GPU: metadata, host round trips for every dtype, fills, device conversion
-- (f32 to bf16 rounds to nearest even), views, release, poison.
local kreach = require "kreach"

local seed = tonumber(os.getenv("KREACH_SEED")) or 4242
print("seed", seed)

-- values each dtype holds exactly
local EXACT = {
  f64 = { 0, 1, -2.5, 1 / 3, 1e300, -1e-300 },
  f32 = { 0, 1, -2.5, (string.unpack("<f", string.pack("<f", 0.1))), (2 - 2 ^ -23) * 2 ^ 127 },
  f16 = { 0, 1, -2.5, 65504, 2 ^ -10, 2 ^ -24 },
  bf16 = { 0, 1, -2.5, 1 + 2 ^ -7, (2 - 2 ^ -7) * 2 ^ 127 },
  i64 = { 0, 1, -1, math.maxinteger, math.mininteger },
  i32 = { 0, 1, -1, 2147483647, -2147483648 },
  i16 = { 0, 32767, -32768 },
  i8 = { 0, 127, -128 },
  u8 = { 0, 1, 255 },
  bool = { true, false, true },
}

describe("tensor", function()
  it("has shape, dtype, numel, size, dim and nbytes", function()
    local t = kreach.empty({ 2, 3, 4 }, "bf16")
    assert.same({ 2, 3, 4 }, t.shape)
    assert.equals("bf16", t.dtype)
    assert.equals(24, t:numel())
    assert.equals(3, t:dim())
    assert.equals(3, t:size(2))
    assert.equals(4, t:size(-1))
    assert.same({ 2, 3, 4 }, t:size())
    assert.equals(48, t:nbytes())
    assert.has_error(function() t:size(4) end)
    assert.matches("kreach.Tensor%(bf16, {2, 3, 4}%)", tostring(t))
    local s = kreach.empty({}, "f32")
    assert.equals(1, s:numel())
    assert.equals(0, s:dim())
    local z = kreach.empty({ 0, 5 })
    assert.equals(0, z:numel())
    assert.same({}, z:to_table())
  end)

  it("round-trips every dtype through tables and bytes", function()
    for _, dt in ipairs(kreach.dtypes) do
      local v = EXACT[dt]
      local t = kreach.from_table(v, { dtype = dt })
      assert.equals(dt, t.dtype)
      assert.same(v, t:to_table())
      local b = t:to_bytes()
      assert.equals(#v * kreach.dtype_size(dt), #b)
      assert.same(v, kreach.from_bytes(b, { #v }, dt):to_table())
      assert.same({ v[2] }, t:to_table(2, 1))
    end
  end)

  it("rounds to nearest even when a table fills a 16-bit float tensor", function()
    -- 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to the even one (1)
    local t = kreach.from_table({ 1 + 2 ^ -8, 1 + 3 * 2 ^ -8, 1 + 2 ^ -8 + 2 ^ -20 }, { dtype = "bf16" })
    assert.same({ 1, 1 + 2 ^ -6, 1 + 2 ^ -7 }, t:to_table())
  end)

  it("refuses values a dtype cannot hold", function()
    assert.has_error(function() kreach.from_table({ 256 }, { dtype = "u8" }) end)
    assert.has_error(function() kreach.from_table({ 1.5 }, { dtype = "i32" }) end)
    assert.has_error(function() kreach.from_table({ 2 }, { dtype = "bool" }) end)
    assert.has_error(function() kreach.from_table({ "x" }, { dtype = "f32" }) end)
    local ok, err = pcall(function() kreach.empty({ 3 }, "i8"):fill(200) end)
    assert.matches("200 is out of range for i8", err)
  end)

  it("fills every dtype on the device", function()
    for _, dt in ipairs(kreach.dtypes) do
      local v = dt == "bool" and true or 3
      local t = kreach.empty({ 1000 }, dt):fill(v)
      local r = t:to_table()
      assert.equals(1000, #r)
      assert.equals(v, r[1])
      assert.equals(v, r[1000])
    end
    -- an odd-sized, misaligned view: the fill covers exactly its elements
    local base = kreach.zeros({ 1001 }, "f32")
    base:narrow(1, 2, 999):fill(5)
    local r = base:to_table()
    assert.equals(0, r[1]); assert.equals(5, r[2]); assert.equals(5, r[1000]); assert.equals(0, r[1001])
  end)

  it("converts f32 to bf16 on the device as the host does (nearest even)", function()
    local n = 1 << 20
    local src = kreach.empty({ n }, "f32"):normal(0, 1000, seed)
    local dev = src:to("bf16"):to_table()
    local host = kreach.from_table(src:to_table(), { dtype = "bf16" }):to_table()
    local mismatch = 0
    for i = 1, n do if dev[i] ~= host[i] then mismatch = mismatch + 1 end end
    assert.equals(0, mismatch)
    -- the tie cases, on the device
    local ties = kreach.from_table({ 1 + 2 ^ -8, 1 + 3 * 2 ^ -8, -(1 + 2 ^ -8) }, { dtype = "f32" })
    assert.same({ 1, 1 + 2 ^ -6, -1 }, ties:to("bf16"):to_table())
  end)

  it("converts between all dtypes with truncation and saturation for integers", function()
    local f = kreach.from_table({ 2.9, -2.9, 1e10, -1e10, 0 / 0, 0.5 }, { dtype = "f32" })
    assert.same({ 2, -2, 2147483647, -2147483648, 0, 0 }, f:to("i32"):to_table())
    assert.same({ 2, 0, 255, 0, 0, 0 }, f:to("u8"):to_table())
    assert.same({ true, true, true, true, true, true }, f:to("bool"):to_table())
    local i = kreach.from_table({ 16777217, -3, 0 }, { dtype = "i64" })
    assert.same({ 16777216, -3, 0 }, i:to("f32"):to_table()) -- 2^24 + 1 rounds to even
    assert.same({ 16777217, -3, 0 }, i:to("f64"):to_table())
    assert.same({ 1, -3, 0 }, i:to("i8"):to_table()) -- wraps like a C cast
    for _, a in ipairs(kreach.dtypes) do
      for _, b in ipairs(kreach.dtypes) do
        local v = (a == "bool" or b == "bool") and { 1, 0, 1 } or { 1, 0, 3 }
        local t = kreach.from_table(v, { dtype = a == "bool" and "u8" or a }):to(a)
        local back = t:to(b):to("f64"):to_table()
        assert.same(v, back, a .. " -> " .. b)
      end
    end
  end)

  it("makes views without copying", function()
    local t = kreach.from_table({ 1, 2, 3, 4, 5, 6 }, { shape = { 2, 3 } })
    local v = t:view(3, 2)
    assert.same({ 3, 2 }, v.shape)
    assert.equals(t:data_ptr(), v:data_ptr())
    assert.same({ 6 }, t:view({ -1 }).shape)
    assert.same({ 6 }, t:flatten().shape)
    assert.has_error(function() t:view(4, 2) end)
    assert.has_error(function() t:view(-1, -1) end)
    local row = t:narrow(1, 2, 1)
    assert.same({ 1, 3 }, row.shape)
    assert.same({ 4, 5, 6 }, row:to_table())
    row:fill(9)
    assert.same({ 1, 2, 3, 9, 9, 9 }, t:to_table())
    local ok, err = pcall(function() t:narrow(2, 1, 2) end)
    assert.matches("would not be contiguous", err)
    assert.equals(3, t:view(1, 6):narrow(2, 2, 3):numel())
    assert.same({ 2, 3, 9 }, t:view(1, 6):narrow(2, 2, 3):to_table())
    assert.has_error(function() t:narrow(1, 2, 2) end)
    -- a view keeps the storage alive after the original is freed
    t:free()
    assert.same({ 9, 9, 9 }, row:to_table())
  end)

  it("copies between tensors, tables and bytes", function()
    local a = kreach.from_table({ 1, 2, 3, 4 }, { dtype = "f32" })
    local b = kreach.empty({ 4 }, "f64"):copy_from(a)
    assert.same({ 1, 2, 3, 4 }, b:to_table())
    b:copy_from({ 5, 6, 7, 8 })
    assert.same({ 5, 6, 7, 8 }, b:to_table())
    a:copy_from(string.pack("<ff", 10, 20), 8)
    assert.same({ 1, 2, 10, 20 }, a:to_table())
    assert.has_error(function() a:copy_from(string.rep("x", 12), 8) end)
    assert.has_error(function() a:copy_from({ 1, 2 }) end)
    assert.has_error(function() a:copy_from(kreach.empty({ 5 })) end)
    local c = a:clone()
    assert.are_not.equal(a:data_ptr(), c:data_ptr())
    assert.same(a:to_table(), c:to_table())
    assert.equals(20, a:narrow(1, 4, 1):item())
  end)

  it("releases once through free, __close and __gc", function()
    local t = kreach.empty({ 16 })
    assert.is_true(t:is_live())
    t:free()
    t:free()
    assert.is_false(t:is_live())
    assert.matches("freed", tostring(t))
    local ok, err = pcall(function() return t:numel() end)
    assert.matches("tensor has been freed", err)
    ok, err = pcall(function() return t.shape end)
    assert.matches("tensor has been freed", err)
    local escaped
    do
      local c <close> = kreach.empty({ 8 })
      escaped = c
    end
    assert.is_false(escaped:is_live())
    assert.has_error(function() t.shape = {} end)
  end)

  it("poisons every element and counts the ones still poisoned", function()
    for _, dt in ipairs(kreach.dtypes) do
      local t = kreach.empty({ 777 }, dt):poison()
      assert.equals(777, t:count_poisoned())
      t:narrow(1, 1, 100):fill(dt == "bool" and false or 0)
      assert.equals(677, t:count_poisoned())
      if dt == "f32" or dt == "f64" or dt == "f16" or dt == "bf16" then
        local v = t:to_table(200, 1)[1]
        assert.is_true(v ~= v) -- a NaN
      end
    end
  end)
end)
