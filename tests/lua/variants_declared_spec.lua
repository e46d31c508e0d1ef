-- The operators' declared variants (kreach.ops' header: each family's `variants`, the paths its
-- selection picks by size; K.variant; kreach.ops.record and with_limits), without running a
-- kernel: the declarations are well formed, naming an undeclared variant raises, the limits
-- are put back, every family that names variants names its own, and docs/correctness.md's table
-- is what tests/lua/variants_doc.lua writes. tests/lua/variants_values_spec.lua runs them.
local ops = require "kreach.ops"
local values = require "values"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."

describe("the operators' declared variants", function()
  it("are named once each, say when they are taken, and say why where they are not checked", function()
    local n = 0
    for _, fam in ipairs(ops.families) do
      local names = {}
      for _, v in ipairs(ops.family(fam).variants or {}) do
        n = n + 1
        assert.is_string(v.name)
        assert.is_truthy(v.name:match("^[%w_.]+$"), v.name)
        assert.is_nil(names[v.name], ("%s declares %s twice"):format(fam, v.name))
        names[v.name] = true
        assert.is_truthy(type(v.when) == "string" and #v.when > 10, fam .. "/" .. v.name .. " says when it is taken")
        for k in pairs(v) do
          assert.is_truthy(k == "name" or k == "when" or k == "alignment" or k == "unreachable",
            ("%s/%s: unknown field %s"):format(fam, v.name, tostring(k)))
        end
        assert.is_truthy(v.unreachable == nil or (type(v.unreachable) == "string" and #v.unreachable > 10))
        assert.is_truthy(v.alignment == nil or v.alignment == true)
      end
    end
    assert.is_true(n > 100, ("%d variants"):format(n))
    -- kreach.ops.variants lists them in the families' order with their ids
    local all = ops.variants()
    assert.equal(n, #all)
    assert.equal("elementwise/unary.packs", all[1].id)
  end)

  it("raise where a call names a variant its family does not declare, and are recorded when asked", function()
    local K = ops.library{}.kit
    local ok, err = pcall(K.variant, "reduce", "f32", "row.sideways")
    assert.is_false(ok)
    assert.matches("kreach.ops.reduce: the selection chose the variant 'row.sideways', which the family's variants do not declare", err, 1, true)
    ok, err = pcall(K.variant, "nofamily", "f32", "row")
    assert.is_false(ok)
    assert.matches("kreach.ops.nofamily: the selection chose the variant 'row'", err, 1, true)
    local rec = {}
    local prev = ops.record(rec)
    K.variant("reduce", "f32", "row", "row.tail")
    K.variant("reduce", "f64", "row")
    ops.record(prev)
    K.variant("reduce", "bf16", "row") -- not recording: not counted
    assert.same({ ["reduce/row"] = { f32 = 1, f64 = 1 }, ["reduce/row.tail"] = { f32 = 1 } }, rec)
  end)

  it("have limits that with_limits lowers and puts back, also when the call raises", function()
    local scan = ops.family("scan")
    local shipped = scan.limits.grid_max
    assert.equal(7, ops.with_limits({ scan = { grid_max = 1 } }, function(a) assert.equal(1, scan.limits.grid_max); return a end, 7))
    assert.equal(shipped, scan.limits.grid_max)
    local ok, err = pcall(ops.with_limits, { scan = { grid_max = 2 } }, function() error("planted", 0) end)
    assert.is_false(ok)
    assert.equal("planted", err)
    assert.equal(shipped, scan.limits.grid_max)
    ok, err = pcall(ops.with_limits, { scan = { grid_maxx = 2 } }, function() end)
    assert.is_false(ok)
    assert.matches("no limit 'grid_maxx'", err, 1, true)
    ok, err = pcall(ops.with_limits, { elementwise = { x = 1 } }, function() end)
    assert.is_false(ok)
    assert.matches("the family elementwise has no limits", err, 1, true)
  end)

  it("are named by each family's own file, and every case is there for declared variants", function()
    local known = {}
    for _, v in ipairs(ops.variants()) do known[v.id] = v end
    for _, fam in ipairs(ops.families) do
      -- a family is one file, ops/<family>.lua, or a directory whose entry is ops/<family>/init.lua
      local f = io.open(("%s/scripts/kreach/ops/%s.lua"):format(root, fam))
        or assert(io.open(("%s/scripts/kreach/ops/%s/init.lua"):format(root, fam)))
      local src = f:read("a")
      f:close()
      for named in src:gmatch('K%.variant%("([%w_]+)"') do
        assert.equal(fam, named, ("scripts/kreach/ops/%s.lua names a variant of %s"):format(fam, named))
      end
    end
    local ids = {}
    for _, c in ipairs(values.VARIANT_CASES) do
      assert.is_nil(ids[c.id], "two cases named " .. c.id)
      assert.is_truthy(c.id:match("^[%w_]+$"), c.id)
      ids[c.id] = true
      for _, v in ipairs(c.reaches) do
        assert.is_truthy(known[v], ("case %s is there for %s, which is not declared"):format(c.id, v))
        assert.is_falsy(known[v].alignment or known[v].unreachable, ("case %s: %s is declared not checked"):format(c.id, v))
      end
    end
  end)

  it("have mutants (tests/lua/variants_mutants.lua) whose text is in the sources once and whose case exists", function()
    local cases = {}
    for _, c in ipairs(values.VARIANT_CASES) do cases[c.id] = true end
    local ids = {}
    for _, m in ipairs(dofile(here .. "/variants_mutants.lua")) do
      assert.is_nil(ids[m.id], "two mutants named " .. m.id)
      ids[m.id] = true
      local f = assert(io.open(root .. "/" .. m.file, "rb"))
      local src = f:read("a")
      f:close()
      local n, at = 0, 1
      while true do
        local a, b = src:find(m.old, at, true)
        if not a then break end
        n, at = n + 1, b + 1
      end
      assert.equal(1, n, ("mutant %s: its text is in %s %d times"):format(m.id, m.file, n))
      assert.are_not.equal(m.old, m.new)
      local case = m.env.KREACH_VARIANTS_ONLY:match("^%^([%w_]+)%$$")
      assert.is_truthy(case and cases[case], ("mutant %s names no case"):format(m.id))
    end
  end)

  it("are the table of docs/correctness.md (build/kreach tests/lua/variants_doc.lua writes it)", function()
    local doc = dofile(here .. "/variants_doc.lua")
    local f = assert(io.open(root .. "/docs/correctness.md", "rb"))
    local text = f:read("a")
    f:close()
    local want = assert(doc.with_table(text))
    assert(want == text, "docs/correctness.md's table of the variants is out of date: run build/kreach tests/lua/variants_doc.lua")
  end)
end)
