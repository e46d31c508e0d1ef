-- Hashing covers every byte (issue 34). A candidate that changes its inputs is caught by their
-- hashes (kreach.judge.check.hash_inputs, before and after each call: the verdict input_mutation), so
-- the hash must see a change of any byte of any input: kreach.ops' lib.hash, its kernel
-- (hash_bytes, kreach.ops.compare) run on the host device (KREACH_DEVICE=host, which ctest sets
-- for hash_ specs) over tests/lua/hash_cases.lua's cases for every dtype; the GPU runs the same
-- cases (tests/lua/gpu/hash_spec.lua). And the content hash of the results store
-- (kreach.core.util.hash, XXH3 in runtime/kr_hash.c; tests/c/test_hash.c tests the C function)
-- over every byte of a string, NULs included.
local kreach = require "kreach"
local check = require "kreach.judge.check"
local core = require "kreach.core"
local host = require "kreach.host"
local ops = require "kreach.ops"
local util = require "kreach.core.util"
local support = require "support"
local cases = require "hash_cases"

describe("the input hash on the host device", function()
  if not host.active() then
    it("needs the host device (KREACH_DEVICE=host)", function() pending("not on the host device") end)
    return
  end
  local lib = ops.get(false)
  -- the most threads lib.hash launches (kreach.ops.compare's blocks_for: 8 blocks of 256 an SM)
  local threads = core.device().sm_count * 8 * 256
  local rand = support.rng(support.seed("hash_inputs_spec"))

  cases.its(it, assert, lib, threads, rand, kreach.dtypes)

  it("hashes every input and parameter of a call, and no output (kreach.judge.check.hash_inputs)", function()
    local inst = { args = { { name = "x", kind = "input" }, { name = "w", kind = "param" },
                            { name = "y", kind = "output" }, { name = "b", kind = "param" } } }
    local vals = { kreach.from_table({ 1, 2, 3, 4, 5 }), kreach.from_table({ 1, 2, 3 }, { dtype = "f16" }),
                   kreach.zeros({ 5 }), kreach.from_table({ 7, 8, 9 }, { dtype = "i32" }) }
    local before = check.hash_inputs(inst, vals, lib)
    assert.same({ 1, 2, 4 }, (function()
      local k = {}
      for i in pairs(before) do k[#k + 1] = i end
      table.sort(k)
      return k
    end)())
    -- each input's last element changed alone changes its hash, and only its own
    for _, i in ipairs({ 1, 2, 4 }) do
      local n = vals[i]:numel()
      local last = vals[i]:narrow(1, n, 1)
      last:fill(100)
      local after = check.hash_inputs(inst, vals, lib)
      for _, j in ipairs({ 1, 2, 4 }) do
        if j == i then
          assert.are_not.equal(before[j], after[j], inst.args[i].name .. "'s last element changed")
        else
          assert.equals(before[j], after[j], inst.args[j].name .. " unchanged")
        end
      end
      last:fill(i == 2 and 3 or (i == 1 and 5 or 9))
      last:free()
      assert.same(before, check.hash_inputs(inst, vals, lib))
    end
    -- an output is not an input: writing it changes nothing
    vals[3]:fill(1)
    assert.same(before, check.hash_inputs(inst, vals, lib))
    for _, t in ipairs(vals) do t:free() end
  end)
end)

describe("the results store's content hash (kreach.core.util.hash)", function()
  it("gives XXH3-128's known answers", function()
    assert.equals("99aa06d3014798d86001c324468d497f", util.hash(""))
  end)

  it("sees a change of any byte, NULs and the last byte included", function()
    -- bytes 0..255 and again, with NULs among them (a string's length, not a C string's)
    local b = {}
    for i = 0, 300 do b[#b + 1] = string.char(i % 256) end
    local s = table.concat(b)
    local seen = { [util.hash(s)] = "the original" }
    for i = 1, #s do
      local t = s:sub(1, i - 1) .. string.char(s:byte(i) ~ 1) .. s:sub(i + 1)
      local h = util.hash(t)
      assert(not seen[h], ("byte %d of %d flipped hashes as %s does"):format(i, #s, seen[h]))
      seen[h] = "byte " .. i
    end
    -- a prefix, and the same string shorter by its last byte, NUL or not
    assert.are_not.equal(util.hash("a\0b"), util.hash("a\0c"))
    assert.are_not.equal(util.hash("a\0"), util.hash("a"))
    assert.are_not.equal(util.hash(s), util.hash(s:sub(1, -2)))
  end)
end)
