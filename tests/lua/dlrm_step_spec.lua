-- The Lua DLRM training step (experiments/dlrm/step.lua) without a GPU: its configurations are
-- experiments/workloads/dlrm.py's; for both, a whole step runs on shape-only tensors (every
-- operator's shape and dtype checks, and the step's own kernels compiled and their launches
-- checked for sm_90); and where a DLRM-Bench problem's shapes are the step's, the step hands
-- that problem's operator exactly the problem's argument list (names in order, shapes, dtypes),
-- which is what lets a candidate replace it.
local problem = require "kreach.problem"
local support = require "support"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."
local dlrm = dofile(root .. "/experiments/dlrm/step.lua")

describe("the Lua DLRM step", function()
  it("has dlrm.py's configurations", function()
    local out, rc = support.sh(("cd %q && python3 -c 'import json, dlrm; print(json.dumps(dlrm.CONFIGS))'"):format(
      root .. "/experiments/workloads"))
    assert.equals(0, rc, out)
    local py = require("cjson").decode(out:match("(%b{})%s*$"))
    for name, cfg in pairs(dlrm.CONFIGS) do
      local p = py[name]
      assert.is_table(p, name)
      assert.same(p.rows, cfg.rows)
      assert.same(p.bot, cfg.bot)
      assert.same(p.top, cfg.top)
      assert.equals(p.dim, cfg.dim)
      assert.equals(p.batch, cfg.batch)
      assert.equals(p.lr, cfg.lr)
      assert.equals(p.max_rows, cfg.max_rows)
    end
  end)

  for _, name in ipairs({ "kaggle", "mlperf" }) do
    describe(name, function()
      local s = dlrm.new(name, { meta = true })

      it("runs a whole step on shape-only tensors", function()
        local loss = s:step(1)
        assert.same({ 1 }, loss.shape)
        assert.equals(s.D + 27 * 26 / 2, s.top_in)
        assert.equals(26, #s.tables)
      end)

      it("gives each problem that fits it the problem's own argument list", function()
        local fits = 0
        for _, id in ipairs(dlrm.SLOTS) do
          local sizes, why = s:problem_sizes(id)
          if sizes then
            fits = fits + 1
            local p = problem.load(problem.resolve("dlrm-bench/" .. id))
            local inst = p:instantiate{ dtype = "f32", sizes = sizes }
            local args = s:args_of(id, s.data[1])
            assert.equals(#inst.args, #args, p.name)
            for i, a in ipairs(inst.args) do
              assert.same(a.shape, args[i].shape, ("%s: argument %d (%s)"):format(p.name, i, a.name))
              assert.equals(a.dtype, args[i].dtype, ("%s: argument %d (%s)"):format(p.name, i, a.name))
            end
          else
            assert.is_string(why)
          end
        end
        -- 7, 8 and 11 fit both; 1 fits Kaggle's, 10 MLPerf's; 5 neither (one-hot)
        assert.equals(4, fits)
        assert.is_nil(s:problem_sizes(5))
        assert.equals(name == "kaggle", s:problem_sizes(1) ~= nil)
        assert.equals(name == "mlperf", s:problem_sizes(10) ~= nil)
      end)

      it("lists what a step computes, written by the step (measure.lua compares two steps by it)", function()
        local s2 = dlrm.new(name, { meta = true })
        local outs = s2:outputs()
        -- the loss, two input gradients, then dW and db of every dense layer (bottom, top, head)
        assert.equals(3 + 2 * (#s2.cfg.bot - 1) + 2 * #s2.cfg.top, #outs)
        assert.equals("loss", outs[1].name)
        assert.same({ 1 }, outs[1].t.shape)
        assert.same({ s2.B, s2.T, s2.D }, outs[2].t.shape)
        assert.equals("head layer 1 db", outs[#outs].name)
        assert.same({ 1 }, outs[#outs].t.shape)
        local seen = {}
        for _, o in ipairs(outs) do
          assert.is_nil(seen[o.name], o.name)
          seen[o.name] = true
          assert.is_false(o.t:written(), o.name .. " before the step")
        end
        s2:step(1)
        for _, o in ipairs(outs) do assert.is_true(o.t:written(), o.name .. " after the step") end
      end)
    end)
  end

  it("refuses an unknown configuration", function()
    assert.has_error(function() dlrm.new("terabyte", { meta = true }) end,
      "dlrm step: unknown configuration 'terabyte' (kaggle, mlperf)")
  end)
end)
