-- PyTorch in the same run (kreach.pytorch) on the GPU: the Python worker computes on kreach's
-- inputs (its outputs match kreach's baseline on the same values, parameters included), times
-- itself with the flush and the gate, and kreach.judge.measure interleaves it with the baseline and
-- the candidate and states the ratios against it. Needs a python3 with CUDA PyTorch
-- (KREACH_PYTHON, else python3): without one the spec fails, saying so, since the GPU machine
-- has one.
local kreach = require "kreach"
local pytorch = require "kreach.pytorch"
local measure = require "kreach.judge.measure"
local ops = require "kreach.ops"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local cands = here .. "/../../candidates"

local found, why = pytorch.find()

describe("kreach.pytorch", function()
  it("finds a python3 with CUDA PyTorch", function()
    assert(found, why)
    print("found", found.python, found.torch, found.cuda, found.device)
  end)
  if not found then return end

  -- kreach's baseline and PyTorch's model on the same set: outputs within the dtype's noise
  local function same_outputs(id, sizes, dtype, tol)
    local inst = kreach.load_problem(id):instantiate{ sizes = sizes, dtype = dtype }
    local s = assert(pytorch.start{ python = found.python })
    local vals = inst:make_args(11)
    inst:run_reference(vals)
    assert(s:load("eager", inst))
    assert(s:mirror(1, inst, vals))
    s:refresh(1)
    local r = assert(s:call("eager", 1, { copy = true }))
    local lib = inst:ops(ops.get(false))
    for i, out in pairs(s:outputs(1)) do
      local m = lib.metrics(out, vals[i], {})
      print(inst.problem.name, dtype or "f32", inst.args[i].name, "rel_l2 vs kreach's baseline", m.rel_l2, "max_abs", m.max_abs)
      assert.is_true(m.rel_l2 < tol)
    end
    local t = assert(s:call("eager", 1, { timed = true, flush_bytes = 100 * 2 ^ 20 }))
    print("timed call", t.ms, "ms, host", t.host_ms, "ms, gated", t.gated, "events", t.event_ms, "span", t.span_ms)
    assert.is_true(t.ms > 0)
    -- the time is the guard's: its events and the span of the call's records, taken in C; PyTorch's
    -- own model queues on the caller's stream alone, so the span stays within the events
    assert.is_true(s.info.guarded)
    assert.is_table(r.guard)
    assert.is_true(t.event_ms > 0 and t.span_ms > 0)
    assert.equals(math.max(t.event_ms, t.span_ms), t.ms)
    assert.equals(0, t.other_streams)
    assert.is_true(t.span_ms <= t.event_ms + 0.01, ("span %g ms past events %g ms"):format(t.span_ms, t.event_ms))
    s:close()
    inst:free(vals)
    return r
  end

  it("runs the model on kreach's inputs: 19_ReLU, 23_Softmax", function()
    same_outputs("19", { batch_size = 64, dim = 4099 }, nil, 1e-6)
    same_outputs("23", { batch_size = 64, dim = 4099 }, "bf16", 1e-2)
  end)

  it("binds kreach's params to the model's parameters: a convolution and LayerNorm", function()
    same_outputs("63", { batch_size = 2, in_channels = 16, out_channels = 32, height = 64, width = 64 }, nil, 1e-5)
    same_outputs("40", { batch_size = 4, features = 16, dim1 = 32, dim2 = 32 }, nil, 1e-5)
  end)

  it("refuses a model whose parameters are not the problem's", function()
    local inst = kreach.load_problem("63"):instantiate{ sizes = { batch_size = 2, in_channels = 16, out_channels = 32,
                                                                  height = 32, width = 32 } }
    local s = assert(pytorch.start{ python = found.python })
    inst.args[2].shape = { 32, 16, 5, 5 } -- as if the problem declared a 5x5 kernel
    local ok, err = s:load("eager", inst)
    print(err)
    assert.is_nil(ok)
    assert.truthy(err:find("are not the problem's params", 1, true))
    s:close()
  end)

  it("reports the model's own failure, and the session goes on", function()
    local inst = kreach.load_problem("19"):instantiate{ sizes = { batch_size = 4, dim = 128 } }
    local s = assert(pytorch.start{ python = found.python })
    local ok, err = s:call("nope", 1, {})
    assert.is_nil(ok)
    assert.truthy(err:find("KeyError", 1, true))
    assert(s:load("eager", inst))
    s:close()
  end)

  it("is timed beside the baseline and a candidate by kreach.judge.measure, with the ratios", function()
    local inst = kreach.load_problem("19"):instantiate{ sizes = { batch_size = 64, dim = 4099 } }
    local s = assert(pytorch.start{ python = found.python })
    local r = measure.time(inst, { candidate = cands .. "/019_relu.lua", timing = { budget_s = 0.5 },
                                   pytorch = { session = s } })
    s:close()
    for _, w in ipairs(r.warnings) do print("warning", w) end
    assert.equals("correct", r.verdict.verdict)
    print("baseline", r.baseline.summary.median, "candidate", r.candidate.summary.median, "pytorch", r.pytorch.summary.median)
    assert.is_true(r.pytorch.summary.n >= 10)
    local sp, bp = r.ratios.speedup_pytorch, r.ratios.baseline_vs_pytorch
    print("speedup vs pytorch", sp.ratio, sp.lo, sp.hi, "baseline/pytorch", bp.ratio, bp.lo, bp.hi)
    assert.is_true(sp.lo <= sp.ratio and sp.ratio <= sp.hi)
    assert.near(r.pytorch.summary.median / r.candidate.summary.median, sp.ratio, 1e-9 + 0.05 * sp.ratio)
    assert.equals(r.pytorch_env.torch, found.torch)
    -- a ReLU is one kernel in PyTorch and in kreach: within a factor of two of each other
    assert.is_true(bp.ratio > 0.5 and bp.ratio < 2)
  end)
end)
