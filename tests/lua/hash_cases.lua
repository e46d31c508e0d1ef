-- The cases of kreach.ops' tensor hash (lib.hash: kreach.judge.check.hash_inputs hashes every input
-- and parameter with it before and after a candidate's call, and a changed hash is the verdict
-- input_mutation), shared by the host spec (hash_inputs_spec: the kernel emulated on the CPU)
-- and the GPU one (gpu/hash_spec). A candidate that changes any byte of an input must change its
-- hash: for every dtype, a tensor of pseudo-random bytes is hashed, then copies of it that differ
-- in one place: its first, a middle and its last element (each byte of it alone, each bit of
-- it alone, and the whole element), every byte of a small tensor in turn, and for a large one
-- a sample of bytes that includes its first and last ones and the edges of the kernel's words,
-- blocks and grid stride; and two elements swapped. Every copy must hash unlike the original
-- and unlike every other copy (a hash that ignored where a byte is would give two of them one
-- hash). The same bytes at another address hash alike.
local tensors = require "kreach.tensors"

local M = {}

-- every dtype kreach has (kreach.core.tensor's table): the spec checks that this is all of them
M.DTYPES = { "f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "bool" }

-- random_bytes(rand, n) -> n bytes from rand (support.rng's)
local function random_bytes(rand, n)
  local b = {}
  for i = 1, n do b[i] = string.char(rand(256) - 1) end
  return table.concat(b)
end

-- with(s, i, byte) -> s with its byte i (1-based) replaced
local function with(s, i, byte) return s:sub(1, i - 1) .. string.char(byte) .. s:sub(i + 1) end

-- shapes(dtype, threads) -> the shapes to hash at that dtype: one element; sizes whose byte
-- counts leave each remainder of 4 (the kernel reads 4-byte words, then the last n % 4 bytes one
-- by one); a matrix; and one whose words outnumber the launch's threads (the grid-stride loop
-- goes round more than once: `threads` is the most the launch has, kreach.ops.compare's
-- blocks_for)
function M.shapes(dtype, threads)
  local size = tensors.dtype_size(dtype)
  local big = (threads * 4 + 4 * 5 + 3) // size + 1
  return { { 1 }, { 3 }, { 5 }, { 6 }, { 7 }, { 3, 5 }, { big } }
end

-- positions(nb, threads) -> the byte positions (1-based) to flip in a tensor of nb bytes: every
-- one of a small tensor; for a large one the first and last 8, the middle, and both sides of
-- each edge of a block's words (256 words, 1024 bytes) and of the grid stride
local function positions(nb, threads)
  local p, seen = {}, {}
  local function add(i) if i >= 1 and i <= nb and not seen[i] then seen[i] = true; p[#p + 1] = i end end
  if nb <= 64 then
    for i = 1, nb do add(i) end
    return p
  end
  for i = 1, 8 do add(i); add(nb + 1 - i) end
  for d = -4, 3 do
    add(nb // 2 + d)
    add(1024 + d + 1)
    add(threads * 4 + d + 1)
  end
  return p
end

-- variants(bytes, size, threads) -> { {what, bytes}... }: the copies of `bytes` (elements of
-- `size` bytes) that differ from it in one place
local function variants(bytes, size, threads)
  local nb, v = #bytes, {}
  local numel = nb // size
  local function add(what, b)
    assert(b ~= bytes and #b == nb, what)
    v[#v + 1] = { what, b }
  end
  local elements = { first = 1, middle = numel // 2 + 1, last = numel }
  for _, name in ipairs({ "first", "middle", "last" }) do
    local e = elements[name]
    -- one element is the first and the last; the middle one of two or fewer is one of them
    if (name == "first" or e ~= 1) and (name ~= "middle" or e ~= numel) then
      local at = (e - 1) * size
      -- the whole element
      local whole = bytes:sub(1, at)
      for k = 1, size do whole = whole .. string.char(bytes:byte(at + k) ~ 0xff) end
      add(("the %s element (%d of %d), every byte"):format(name, e, numel), whole .. bytes:sub(at + size + 1))
      -- each of its bytes, each of its bits
      for k = 1, size do
        for bit = 0, 7 do
          add(("the %s element (%d of %d), byte %d, bit %d"):format(name, e, numel, k, bit),
            with(bytes, at + k, bytes:byte(at + k) ~ (1 << bit)))
        end
      end
    end
  end
  -- bytes one at a time (skipping those flipped above: bit 0 of each element's bytes)
  local first_last = {}
  for _, e in pairs(elements) do
    for k = 1, size do first_last[(e - 1) * size + k] = true end
  end
  for _, i in ipairs(positions(nb, threads)) do
    if not first_last[i] then add(("byte %d of %d"):format(i, nb), with(bytes, i, bytes:byte(i) ~ 1)) end
  end
  -- the first and last elements swapped (when they differ): the same bytes in other places
  if numel > 1 then
    local a, b = bytes:sub(1, size), bytes:sub(nb - size + 1)
    if a ~= b then add("the first and last elements swapped", b .. bytes:sub(size + 1, nb - size) .. a) end
  end
  return v
end

-- check(lib, dtype, shape, rand, threads) -> a list of failures (empty when the hash saw every
-- change), and the number of copies hashed
function M.check(lib, dtype, shape, rand, threads)
  local size = tensors.dtype_size(dtype)
  local numel = 1
  for _, d in ipairs(shape) do numel = numel * d end
  local bytes = random_bytes(rand, numel * size)
  local label = ("%s [%s]"):format(dtype, table.concat(shape, ", "))
  local fails = {}
  local function hash_of(b)
    local t = tensors.from_bytes(b, shape, dtype)
    assert(t:to_bytes() == b, label .. ": from_bytes changed the bytes")
    local h = lib.hash(t)
    t:free()
    return h
  end
  local t0 = tensors.from_bytes(bytes, shape, dtype)
  local h0 = lib.hash(t0)
  if type(h0) ~= "string" or not h0:match("^%x+$") or #h0 ~= 32 then
    fails[#fails + 1] = ("%s: the hash is %s, not 32 hex digits"):format(label, tostring(h0))
  end
  -- the same bytes at another address (t0 still holds its own)
  local again = hash_of(bytes)
  if again ~= h0 then fails[#fails + 1] = ("%s: the same bytes hash as %s and %s"):format(label, h0, again) end
  t0:free()
  local seen = { [h0] = "the original" }
  local vs = variants(bytes, size, threads)
  for _, v in ipairs(vs) do
    local h = hash_of(v[2])
    if seen[h] then
      fails[#fails + 1] = ("%s: %s hashes as %s does (%s)"):format(label, v[1], seen[h], h)
    else
      seen[h] = v[1]
    end
  end
  return fails, #vs
end

-- change_in_place(lib, dtype) -> a list of failures: a tensor's last element changed in place
-- (the same buffer, as a candidate's kernel would) changes its hash, and the old value put back
-- gives the old hash again
function M.change_in_place(lib, dtype)
  local fails = {}
  local t = tensors.from_table({ 0, 1, 0, 1, 0, 1, 0 }, { dtype = dtype })
  local h0 = lib.hash(t)
  local last = t:narrow(1, 7, 1)
  last:fill(1)
  local h1 = lib.hash(t)
  if h1 == h0 then fails[#fails + 1] = dtype .. ": the last element set to 1 in place, and the hash is unchanged" end
  last:fill(0)
  local h2 = lib.hash(t)
  if h2 ~= h0 then fails[#fails + 1] = ("%s: the last element put back, and the hash is %s, not %s"):format(dtype, h2, h0) end
  last:free()
  t:free()
  return fails
end

-- its(it, assert, lib, threads, rand, dtypes): the per-dtype cases as tests, added with the
-- spec's busted `it` and `assert` inside its `describe` (the host spec and the GPU spec share
-- them): every dtype known, and for each a change of any element, byte or bit seen, and the last
-- element changed in place and put back. `dtypes` is kreach.dtypes; `threads` the most threads
-- lib.hash launches.
function M.its(it, assert, lib, threads, rand, dtypes)
  it("knows every dtype", function()
    assert.same(M.DTYPES, dtypes)
  end)

  for _, dt in ipairs(M.DTYPES) do
    it(("sees a change of any element, byte or bit of a %s tensor"):format(dt), function()
      local total = 0
      for _, shape in ipairs(M.shapes(dt, threads)) do
        local fails, n = M.check(lib, dt, shape, rand, threads)
        assert.same({}, fails)
        total = total + n
      end
      assert.is_true(total > 100)
    end)

    it(("sees the last element of a %s tensor changed in place, and put back"):format(dt), function()
      assert.same({}, M.change_in_place(lib, dt))
    end)
  end
end

return M
