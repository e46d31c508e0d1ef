-- The correctness metrics on the GPU against answers worked out by hand: lib.metrics (what
-- `kreach check` judges by) and lib.compare (what `kreach oracle` reports) on the hand-built
-- outputs and oracles of tests/lua/compare_cases.lua, the output at f32, bf16 (where the case's
-- values are exact in bf16) and f64, the oracle at f64; and the same answers whatever the
-- launch (the grid depends on the element count and the GPU's SMs).
local kreach = require "kreach"
local ops = require "kreach.ops"
local cases = require "compare_cases"

describe("kreach.ops.compare on the GPU", function()
  local lib = ops.get(false)

  for _, c in ipairs(cases.cases) do
    local dtypes = { "f32", "f64" }
    if c.bf16 then dtypes[#dtypes + 1] = "bf16" end
    for _, dt in ipairs(dtypes) do
      it(("metrics, y %s: %s"):format(dt, c.name), function()
        local y = kreach.from_table(c.y, { dtype = dt })
        local r = kreach.from_table(c.r, { dtype = "f64" })
        local m = lib.metrics(y, r, { tols = c.tols })
        assert.same({}, cases.mismatches(m, c.want, cases.FIELDS))
        if c.diff then
          assert.same({}, cases.mismatches(lib.compare(y, r), c.diff, cases.DIFF_FIELDS))
        end
        y:free(); r:free()
      end)
    end
  end

  it("integer outputs: the count of elements that differ", function()
    local y = kreach.from_table({ 1, 2, 3, 4, 5, -6 }, { dtype = "i64" })
    local r = kreach.from_table({ 1, 2, 0, 4, 7, -6 }, { dtype = "i64" })
    assert.same({ n = 6, mismatches = 2 }, lib.metrics(y, r))
    assert.same({ n = 6, mismatches = 2 }, lib.compare(y, r))
    y:free(); r:free()
  end)

  it("many elements: the sums are the same as over a few blocks", function()
    -- 3 * 2^20 elements, each y_i = r_i + 2^-10 where i % 1024 == 0: sum_d2 = 3072 * 2^-20
    local n = 3 << 20
    local rv, yv, fail_a = {}, {}, 0
    for i = 0, n - 1 do
      local v = ((i * 7919) % 2001 - 1000) / 8
      rv[i + 1] = v
      yv[i + 1] = i % 1024 == 0 and v + 2 ^ -10 or v
      -- allclose at 1e-4: |d| = 2^-10 fails where 1e-4 + 1e-4 |r| < 2^-10
      if i % 1024 == 0 and 1e-4 + 1e-4 * math.abs(v) < 2 ^ -10 then fail_a = fail_a + 1 end
    end
    local y = kreach.from_table(yv, { dtype = "f32" })
    local r = kreach.from_table(rv, { dtype = "f64" })
    local m = lib.metrics(y, r)
    assert.equals(3072 * 2 ^ -20, m.sum_d2)
    assert.equals(2 ^ -10, m.max_abs)
    assert.equals(125, m.max_ref)
    assert.same({ fail_a, 0 }, m.allclose_fail)
    assert.is_true(fail_a > 0 and fail_a < 3072)
    y:free(); r:free()
  end)
end)
