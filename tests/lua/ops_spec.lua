-- The operator library without a GPU: every family's CUDA source compiles for sm_90 at every
-- float dtype with the instantiations it will ask for, and the operators check shapes.
local kreach = require "kreach"
local ops = require "kreach.ops"
local meta = require "kreach.meta"

describe("kreach.ops", function()
  for _, fam in ipairs(ops.families) do
    local mod = ops.family(fam)
    if mod then
      for _, src in ipairs(mod.sources or {}) do
        it(("compiles %s (%s) for every float dtype"):format(fam, src.name), function()
          for _, dt in ipairs({ "f64", "f32", "bf16", "f16" }) do
            local prog, err = kreach.build{ source = ops.compile_source(fam, src.source), arch = "sm_90",
              name = "kreach_ops_" .. fam .. ".cu", options = ops.OPTIONS,
              instantiate = src.instantiate(ops.CTYPE[dt], dt) }
            assert(prog, ("%s at %s:\n%s"):format(fam, dt, tostring(err)))
            assert.is_true(#prog.kernels > 0)
          end
        end)
      end
    end
  end

  it("has a module for every family, and none for another name", function()
    for _, fam in ipairs(ops.families) do
      assert.is_function(ops.family(fam).install, fam)
    end
    assert.is_nil(ops.family("nosuch"))
  end)

  it("checks linear's arguments on shape-only tensors (torch.nn.Linear's layout)", function()
    local lib = ops.get(true)
    local function m(shape, dt) return meta.new(shape, dt or "f32") end
    local y = m({ 8, 4 })
    lib.linear(m({ 8, 13 }), m({ 4, 13 }), m({ 4 }), y, { activation = "relu" })
    assert.is_true(y:written())
    local function err(...)
      local ok, e = pcall(lib.linear, ...)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.matches("w is {4, 12}, expected %[out, 13%]", err(m({ 8, 13 }), m({ 4, 12 }), nil, m({ 8, 4 })))
    assert.matches("y is {8, 5}, expected {8, 4}", err(m({ 8, 13 }), m({ 4, 13 }), nil, m({ 8, 5 })))
    assert.matches("b is {5}, expected {4}", err(m({ 8, 13 }), m({ 4, 13 }), m({ 5 }), m({ 8, 4 })))
    assert.matches("activation 'gelu': 'relu', 'sigmoid' or none", err(m({ 8, 13 }), m({ 4, 13 }), nil, m({ 8, 4 }), { activation = "gelu" }))
    assert.matches("w is bf16, expected f32", err(m({ 8, 13 }), m({ 4, 13 }, "bf16"), nil, m({ 8, 4 })))
    local z = m({ 8, 4 })
    lib.mul_add(m({ 8, 4 }), m({ 8, 4 }), m({ 8, 4 }), z)
    assert.is_true(z:written())
    local ok, e = pcall(lib.mul_add, m({ 8, 4 }), m({ 8, 5 }), m({ 8, 4 }), z)
    assert.is_false(ok)
    assert.matches("mul_add: b is {8, 5} but a is {8, 4}", tostring(e))
  end)

  it("checks shapes on shape-only tensors and records writes", function()
    local lib = ops.get(true)
    local x = meta.new({ 4, 8 }, "f32", "x")
    local y = meta.new({ 4, 8 }, "f32", "y")
    lib.relu(x, y)
    assert.is_true(y:written())
    assert.is_false(x:written())
    local ok, err = pcall(lib.relu, x, meta.new({ 4, 9 }, "f32", "y"))
    assert.matches("relu: y is {4, 9} but x is {4, 8}", err)
    ok, err = pcall(lib.matmul, meta.new({ 4, 5 }, "f32"), meta.new({ 6, 7 }, "f32"), meta.new({ 4, 7 }, "f32"))
    assert.matches("inner sizes 5 and 6 differ", err)
    ok, err = pcall(lib.relu, meta.new({ 4 }, "i32"), meta.new({ 4 }, "i32"))
    assert.matches("a floating dtype is needed", err)
    local c = meta.new({ 2, 3, 7 }, "bf16")
    lib.matmul(meta.new({ 2, 3, 5 }, "bf16"), meta.new({ 5, 7 }, "bf16"), c)
    assert.is_true(c:written())
    -- a write through a view counts for the tensor it views
    local z = meta.new({ 6 }, "f32")
    lib.relu(meta.new({ 2, 3 }, "f32"), z:view(2, 3))
    assert.is_true(z:written())
  end)
end)
