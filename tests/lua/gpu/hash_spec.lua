-- The input hash on the GPU (issue 34): kreach.ops' lib.hash, the hash_bytes kernel compiled by
-- NVRTC, over the cases of tests/lua/hash_cases.lua for every dtype: a change of any element,
-- byte or bit of an input changes its hash (what input_mutation is judged by). The host spec
-- (tests/lua/hash_inputs_spec.lua) runs the same cases through the kernel emulated on the CPU;
-- here the grid is the GPU's (8 blocks an SM), so the large case goes round the grid-stride
-- loop of a real launch.
local kreach = require "kreach"
local core = require "kreach.core"
local ops = require "kreach.ops"
local support = require "support"
local cases = require "hash_cases"

describe("the input hash on the GPU", function()
  local lib = ops.get(false)
  local threads = core.device().sm_count * 8 * 256
  local rand = support.rng(support.seed("gpu/hash_spec"))

  it("knows every dtype", function()
    assert.same(cases.DTYPES, kreach.dtypes)
  end)

  for _, dt in ipairs(cases.DTYPES) do
    it(("sees a change of any element, byte or bit of a %s tensor"):format(dt), function()
      local total = 0
      for _, shape in ipairs(cases.shapes(dt, threads)) do
        local fails, n = cases.check(lib, dt, shape, rand, threads)
        assert.same({}, fails)
        total = total + n
      end
      assert.is_true(total > 100)
    end)

    it(("sees the last element of a %s tensor changed in place, and put back"):format(dt), function()
      assert.same({}, cases.change_in_place(lib, dt))
    end)
  end
end)
