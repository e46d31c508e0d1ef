-- kreach.timing's policy without a GPU: option checking, the speed-of-light arithmetic and the
-- faster-than-light rule. (The engine itself is tested on the GPU: tests/lua/gpu/timing_spec.lua.)
local timing = require "kreach.timing"

describe("kreach.timing options", function()
  it("has documented defaults and returns them merged with overrides", function()
    local o = timing.options()
    assert.equals("cold", o.mode)
    assert.equals(2, o.flush_factor)
    assert.equals(10, o.min_samples)
    assert.equals(0.01, o.rel_ci)
    assert.equals(2, o.budget_s)
    o = timing.options{ mode = "graph", budget_s = 0.5, min_samples = 20.0 }
    assert.equals("graph", o.mode)
    assert.equals(0.5, o.budget_s)
    assert.equals(20, o.min_samples)
    assert.equals("integer", math.type(o.min_samples))
  end)

  it("refuses unknown options, bad types and bad values", function()
    assert.has_error(function() timing.options{ budget = 1 } end, "timing: unknown option 'budget'")
    assert.has_error(function() timing.options{ mode = "warm" } end, "timing: unknown mode 'warm' (cold, hot, graph)")
    assert.has_error(function() timing.options{ budget_s = "2" } end, "timing: option 'budget_s' must be a number, got string")
    assert.has_error(function() timing.options{ min_samples = 2.5 } end, "timing: option 'min_samples' must be a positive integer, got 2.5")
    assert.has_error(function() timing.options{ rel_ci = 0 } end, "timing: option 'rel_ci' must be positive")
    assert.has_error(function() timing.options{ flush_factor = 1 } end, "timing: flush_factor below 2 does not make a sample cold")
    -- a hot measurement does not flush, so the factor does not matter there
    assert.equals(1, timing.options{ mode = "hot", flush_factor = 1 }.flush_factor)
  end)
end)

describe("the speed of light", function()
  local cal = { copy_bytes_per_s = 4e12, flops_per_s = { f32 = 50e12, tf32 = 400e12, bf16 = 800e12, f16 = 790e12, f64 = 60e12 } }

  it("takes the larger of the bytes and flops bounds", function()
    -- 4 GB at 4 TB/s: 1 ms; 1e9 flops at 50 TFLOP/s would be 0.02 ms, but f32 counts TF32 (400)
    local s = timing.sol({ bytes = 4e9, flops = 1e9, dtype = "f32" }, 2, cal, "cold")
    assert.near(1, s.bytes_bound_ms, 1e-12)
    assert.near(1e9 / 400e12 * 1e3, s.flops_bound_ms, 1e-15)
    assert.near(1, s.bound_ms, 1e-12)
    assert.near(0.5, s.fraction, 1e-12)
    assert.near(4e9 / 2e-3, s.achieved_bytes_per_s, 1)
    assert.near(1e9 / 2e-3, s.achieved_flops_per_s, 1e-3)
    -- a matmul: 2 * 8192^3 flops in bf16 against 800 TFLOP/s
    local f = 2 * 8192 ^ 3
    s = timing.sol({ bytes = 3 * 8192 * 8192 * 2, flops = f, dtype = "bf16" }, 2, cal, "cold")
    assert.near(f / 800e12 * 1e3, s.bound_ms, 1e-12)
  end)

  it("drops the bytes bound where the data may sit in L2 (hot and graph modes)", function()
    local s = timing.sol({ bytes = 4e9, flops = 1e9, dtype = "bf16" }, 2, cal, "hot")
    assert.is_nil(s.bytes_bound_ms)
    assert.near(1e9 / 800e12 * 1e3, s.bound_ms, 1e-15)
  end)

  it("has no figures without a calibration", function()
    assert.is_nil(timing.sol({ bytes = 1, flops = 1, dtype = "f32" }, 1, nil, "cold"))
  end)

  it("calls a time impossible only when its whole interval is below the bound by the margin", function()
    local sol = { bound_ms = 1, bytes_bound_ms = 1 }
    -- within the margin: not flagged
    assert.is_nil(timing.faster_than_light({ median = 0.95, ci_hi = 0.96, max = 0.97 }, sol, 0.1))
    -- the median is far below but the interval reaches the bound: not flagged (noise)
    assert.is_nil(timing.faster_than_light({ median = 0.5, ci_hi = 0.95, max = 1.2 }, sol, 0.1))
    local why = timing.faster_than_light({ median = 0.5, ci_hi = 0.6, max = 0.7 }, sol, 0.1)
    assert.truthy(why and why:find("below the speed%-of%-light bound 1 ms by more than 10%%"))
    -- no bound: nothing to say
    assert.is_nil(timing.faster_than_light({ median = 0.5, ci_hi = 0.6 }, { bound_ms = 0 }, 0.1))
  end)
end)
