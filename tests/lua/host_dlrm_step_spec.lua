-- The Lua DLRM training step (experiments/dlrm/step.lua) on real values without a GPU: on the
-- host device (KREACH_DEVICE=host, set by ctest for host_ specs), at a batch of 4 with tables cut
-- to 30 rows, both configurations:
--   - its losses over 3 steps against PyTorch's (experiments/dlrm/torch_step.py on the CPU:
--     dlrm.py's model and SGD on the same parameters and data), as measure.lua's cross-check
--     does on the GPU at full width;
--   - Step:differs, measure.lua's guard around a timed substitution: a substitute that computes
--     the operator passes, one whose output is off by 1% or that raises is named.
-- Needs python3-torch (/usr/bin/python3; KREACH_PYTHON names another).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local dlrm = dofile(here .. "/../../experiments/dlrm/step.lua")
local support = require "support"


describe("the Lua DLRM step on the host device", function()
  local PYTHON = support.host_python_or_fail(it)
  if not PYTHON then return end

  for _, name in ipairs({ "kaggle", "mlperf" }) do
    it(name .. ": 3 steps' losses agree with PyTorch's on the same values", function()
      local s = dlrm.new(name, { batch = 4, max_rows = 30, batches = 2, seed = 3 })
      local r = s:cross_check{ steps = 3, python = PYTHON, device = "cpu" }
      assert.is_nil(r.torch_error, r.torch_error)
      print(("  %s: Lua %s, PyTorch %s, worst relative difference %.2e"):format(name,
        table.concat(r.lua, " "), table.concat(r.torch, " "), r.max_rel_diff))
      assert.equals(3, #r.lua)
      for i = 1, 3 do assert.is_true(r.lua[i] == r.lua[i] and r.lua[i] > 0, "a finite loss") end
      assert.is_true(r.max_rel_diff < 1e-5, ("worst relative difference %.3g"):format(r.max_rel_diff))
    end)
  end

  describe("Step:differs", function()
    local s = dlrm.new("kaggle", { batch = 4, max_rows = 30, batches = 1, seed = 5 })
    assert(s:problem_sizes(7), "problem 7 fits the step")
    local function sub(after)
      return { call = function(a)
        s.lib.dot_interaction(a[1], a[2], a[3])
        if after then after(a) end
        return true
      end }
    end

    it("passes a substitute that computes the operator, and leaves the parameters alone", function()
      local before = s.tables[1]:to_table()
      assert.is_nil(s:differs({ { problem = 7, sub = sub() } }))
      assert.same(before, s.tables[1]:to_table())
      assert.equals(dlrm.CONFIGS.kaggle.lr, s.lr)
      assert.is_nil(s.subs[7])
    end)

    it("names what differs when the substitute's output is off by 1%", function()
      local why = s:differs({ { problem = 7, sub = sub(function(a) s.lib.scale(a[3], a[3], 1.01) end) } })
      assert.is_string(why)
      assert.matches("^[%w() ]+ differs from the plain step's: relative L2 [%d.e-]+", why)
      assert.is_nil(s.subs[7])
    end)

    it("names a substitute that raises", function()
      local why = s:differs({ { problem = 7, sub = { call = function() return false, "launch failed: planted" end } } })
      assert.matches("^the step with it failed: .*planted", why)
      assert.equals(dlrm.CONFIGS.kaggle.lr, s.lr)
    end)
  end)
end)
