-- kreach.judge.timing's policy without a GPU: option checking, the speed-of-light arithmetic and the
-- faster-than-light rule. (The engine itself is tested on the GPU: tests/lua/gpu/timing_spec.lua.)
local timing = require "kreach.judge.timing"

describe("kreach.judge.timing options", function()
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
    assert.has_error(function() timing.options{ min_samples = 100, max_samples = 10 } end, "timing: min_samples (100) is more than max_samples (10)")
    assert.has_error(function() timing.options{ warmup_min = 50, warmup_max = 20 } end, "timing: warmup_min (50) is more than warmup_max (20)")
    assert.has_error(function() timing.options{ level = 1 } end, "timing: option 'level' must be below 1, got 1")
    -- a bound given alone moves the other's default
    local o5 = timing.options{ max_samples = 5 }
    assert.same({ 5, 5 }, { o5.min_samples, o5.max_samples })
    local o20k = timing.options{ min_samples = 20000 }
    assert.same({ 20000, 20000 }, { o20k.min_samples, o20k.max_samples })
    assert.equals(2, timing.options{ warmup_max = 2 }.warmup_min)
    -- a hot measurement does not flush, so the factor does not matter there
    assert.equals(1, timing.options{ mode = "hot", flush_factor = 1 }.flush_factor)
  end)
end)

describe("timing.measure's plan", function()
  it("refuses an order that does not list each subject once, before touching the device", function()
    local function subject(name) return { name = name, call = function() error("called") end } end
    for _, order in ipairs({ { 1, 1 }, { 2 }, { 1, 2, 3 }, { 0, 1 } }) do
      assert.has_error(function() timing.measure({ subject("a"), subject("b") }, {}, { order = order }) end,
        "timing.measure: plan.order must list each subject's index once")
    end
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

describe("kreach.judge.measure's input sets", function()
  local measure = require "kreach.judge.measure"
  local kreach = require "kreach"

  it("takes and checks its options", function()
    local o = measure.options()
    assert.equals(2, o.sets)
    assert.equals(3, measure.options{ sets = 3.0 }.sets)
    assert.equals("integer", math.type(measure.options{ sets = 3.0 }.sets))
    assert.has_error(function() measure.options{ sets = 0 } end)
    assert.has_error(function() measure.options{ sets = 1.5 } end)
    assert.has_error(function() measure.options{ memory_fraction = 1.5 } end)
    assert.has_error(function() measure.options{ nope = 1 } end)
  end)

  it("uses as many sets as fit in the free memory, and says why when fewer", function()
    -- problem 1 at N = 1000: A, B and C are 4 MB each in f32
    local inst = kreach.load_problem("1"):instantiate{ sizes = { N = 1000 } }
    local mo = measure.options{ sets = 4 }
    -- a set with a candidate: A, B, the baseline's C and the candidate's C
    local plenty = measure.plan_sets(inst, mo, true, 1e12)
    assert.same({ requested = 4, used = 4, per_set_bytes = 16e6 }, plenty)
    -- beside the sets: the oracle's f64 A, B, C (24 MB) and one input drawn in f32 (8 MB)
    local tight = measure.plan_sets(inst, mo, true, (32e6 + 2 * 16e6) / mo.memory_fraction)
    assert.equals(2, tight.used)
    assert.matches("4 input sets of 0.016 GB do not fit", tight.fallback)
    -- never fewer than one: the fallback is one set, still with new values every round
    local none = measure.plan_sets(inst, mo, true, 1e6)
    assert.equals(1, none.used)
    assert.matches("1 used$", none.fallback)
    -- the baseline alone needs one output per set
    assert.equals(12e6, measure.plan_sets(inst, mo, false, 1e12).per_set_bytes)
  end)
end)

describe("the rounds' input sets", function()
  it("takes one set in turn in cold and hot modes, all in graph mode", function()
    assert.same({ 1 }, timing.round_sets("cold", 1, 3))
    assert.same({ 3 }, timing.round_sets("hot", 3, 3))
    assert.same({ 1 }, timing.round_sets("cold", 4, 3))
    assert.same({ 1, 2, 3 }, timing.round_sets("graph", 7, 3))
  end)
end)
