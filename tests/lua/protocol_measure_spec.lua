-- kreach.judge.measure.time's timed protocol without a GPU: the real measure.time and timing.measure
-- on the host device (KREACH_DEVICE=host: kreach's tensors and operators on the CPU; ctest sets
-- it for protocol_ specs), with what only a GPU does given through opts.device: the candidate's
-- compile (a program whose one kernel is a Lua function that computes ReLU with kreach's host
-- operator, or misbehaves on a chosen call, and records the state of every buffer it is
-- given) and timing's events (1 ms for a sample in which the candidate's kernel ran, 2 ms
-- otherwise). The candidate file itself is a real one, loaded, sandboxed and called by
-- kreach.candidate.lua. The problem is a ReLU defined here whose reference records the buffers
-- the baseline (f32) and the oracle (f64) are called on.
--
-- What is checked: which outputs are poisoned before each call (the candidate's before each of
-- its calls, the baseline's too in cold mode; the baseline's before each of its calls, never the
-- candidate's); the candidate called first, on new input values every round, the sets in
-- turn; which calls the oracle judges; what a wrong value, an unwritten element or a changed
-- input found while timing becomes; and the speedup's direction. And, as plain functions, the
-- decisions measure.time takes from them: poisoned_before, rechecked_sets, torch_ratios (the
-- speedups against PyTorch, whose worker no CPU test runs).
local kreach = require "kreach"
local measure = require "kreach.judge.measure"
local ops = require "kreach.ops"
local support = require "support"
local timing = require "kreach.judge.timing"

local host_ok, host = pcall(require, "kreach.host")

describe("measure's decisions, known answers", function()
  it("poisons what poisoned_before names", function()
    assert.same({ "candidate", "baseline" }, measure.poisoned_before("candidate", "cold"))
    assert.same({ "candidate" }, measure.poisoned_before("candidate", "hot"))
    assert.same({ "candidate" }, measure.poisoned_before("candidate", "graph"))
    for _, mode in ipairs({ "cold", "hot", "graph" }) do
      assert.same({ "baseline" }, measure.poisoned_before("baseline", mode))
    end
    assert.has_error(function() measure.poisoned_before("pytorch", "cold") end, "measure.poisoned_before: no subject 'pytorch'")
  end)

  it("judges only the sets the rounds used, and every set in graph mode", function()
    assert.equals(1, measure.rechecked_sets("cold", 2, 1))
    assert.equals(2, measure.rechecked_sets("hot", 2, 7))
    assert.equals(3, measure.rechecked_sets("graph", 3, 1))
  end)

  it("states the speedups against PyTorch as PyTorch's time over the candidate's", function()
    local function subject(ms) return { summary = { median = ms }, samples = { ms, ms, ms } } end
    local o = timing.options()
    local r = measure.torch_ratios({ baseline = subject(2), candidate = subject(1), pytorch = subject(4),
                                     pytorch_compiled = subject(3) }, o)
    assert.same({ ratio = 4, lo = 4, hi = 4, of = "pytorch", over = "candidate" }, r.speedup_pytorch)
    assert.same({ ratio = 3, lo = 3, hi = 3, of = "pytorch_compiled", over = "candidate" }, r.speedup_compiled)
    assert.same({ ratio = 0.5, lo = 0.5, hi = 0.5, of = "baseline", over = "pytorch" }, r.baseline_vs_pytorch)
    assert.same({ ratio = 2 / 3, lo = 2 / 3, hi = 2 / 3, of = "baseline", over = "pytorch_compiled" }, r.baseline_vs_compiled)
    -- no candidate (a baseline timed alone), no compiled model: no ratios of theirs
    r = measure.torch_ratios({ baseline = subject(2), pytorch = subject(4) }, o)
    assert.same({ 0.5 }, { r.baseline_vs_pytorch.ratio, r.speedup_pytorch, r.speedup_compiled, r.baseline_vs_compiled })
  end)
end)

describe("measure.time's protocol on the host device", function()
  if not (host_ok and host.active()) then
    it("runs on the host device", function()
      error("KREACH_DEVICE=host is not set (or this kreach has no host device): ctest sets it for protocol_ specs")
    end)
    return
  end

  -- the reference's spy: called with ("baseline" | "oracle", x, y) before each reference call
  local spy = function() end
  local P = kreach.problem{
    id = 9001, name = "protocol_relu", suite = "tests", category = "activation",
    description = "ReLU over n elements, its reference watched",
    sizes = { n = 64 },
    args = { kreach.input("x", { "n" }, { domain = "real" }), kreach.output("y", { "n" }) },
    reference = function(o, x, y)
      spy(y.dtype == "f64" and "oracle" or "baseline", x, y)
      o.relu(x, y)
    end,
    flops = function(s) return s.n end,
    torch = { model = "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n" },
  }
  local inst = P:instantiate{}
  local lib = inst:ops(ops.get(false))

  local cand_path = support.tmpfile("_relu.lua")
  local f = assert(io.open(cand_path, "w"))
  f:write([==[
return {
  source = [[extern "C" __global__ void relu(const float *x, float *y, int n) {}]],
  forward = function(k, x, y) k.relu{ grid = 1, block = 1 }(x, y, x:numel()) end,
}
]==])
  f:close()

  local function all_poisoned(t) return t:count_poisoned() == t:numel() end

  -- run(topts, misbehave) -> measure.time's result and what was seen: { calls = { {who, set,
  -- hash, cand_poisoned, base_poisoned}, ... } in call order, oracle = number of oracle runs }.
  -- misbehave(c, x, y), optional: on the candidate's c-th call, after it computed the answer.
  -- The candidate's calls: 1 and 2 the plain calls on sets 1 and 2, 3 the warm-up (warmup_max
  -- = 1), then one a round, so that round r is call r + 3.
  local function run(topts, misbehave)
    local seen = { calls = {}, oracle = 0 }
    local set_of, base_out, cand_out = {}, {}, {}
    local nsets = 0
    local function set(x)
      if not set_of[x] then nsets = nsets + 1; set_of[x] = nsets end
      return set_of[x]
    end
    spy = function(who, x, y)
      if who == "oracle" then seen.oracle = seen.oracle + 1; return end
      local k = set(x)
      base_out[k] = y
      seen.calls[#seen.calls + 1] = { who = "baseline", set = k, hash = lib.hash(x), base_poisoned = all_poisoned(y),
                                      cand_poisoned = cand_out[k] and all_poisoned(cand_out[k]) }
    end
    local launches, now_s = 0, 0
    local prog = { kernels = { "relu" }, kernel = function(_, name)
      assert(name == "relu")
      return function() return function(x, y)
        launches = launches + 1
        local k = set(x)
        cand_out[k] = y
        seen.calls[#seen.calls + 1] = { who = "candidate", set = k, hash = lib.hash(x), cand_poisoned = all_poisoned(y),
                                        base_poisoned = base_out[k] and all_poisoned(base_out[k]) }
        lib.relu(x, y)
        if misbehave then misbehave(launches, x, y) end
      end end
    end }
    local device = {
      build = function(spec) assert(spec.source:find("relu")); return prog end,
      timing = {
        event = function()
          return { record = function(self) self.at = launches end, free = function() end,
                   elapsed_ms = function(self, later) return later.at > self.at and 1 or 2 end }
        end,
        gate = function()
          return { hold = function() end, release = function() end, timeouts = function() return 0 end, free = function() end }
        end,
        flush = function() return 4096 end,
        -- the budgets' clock, 1 ms a reading: the constant times converge long before the
        -- budget, and a rule that never stops ends on it rather than looping for ever
        now = function() now_s = now_s + 1e-3; return now_s end,
      },
    }
    local o = { mode = "cold", warmup_min = 1, warmup_max = 1 }
    for k, v in pairs(topts or {}) do o[k] = v end
    local r = measure.time(inst, { candidate = cand_path, device = device, timing = o })
    spy = function() end
    return r, seen
  end

  local function of(seen, who)
    local l = {}
    for _, c in ipairs(seen.calls) do if c.who == who then l[#l + 1] = c end end
    return l
  end

  it("times a correct candidate: correct, 2 ms against 1 ms is a speedup of 2", function()
    local r = run()
    assert.equals("correct", r.verdict.verdict, tostring(r.verdict.detail))
    assert.same({ 2, 1 }, { r.baseline.summary.median, r.candidate.summary.median })
    assert.same({ 2, 2, 2 }, { r.speedup.ratio, r.speedup.lo, r.speedup.hi })
    assert.same({ "candidate", "baseline" }, r.timing.order)
    assert.equals(2, r.sets.used)
  end)

  for _, mode in ipairs({ "cold", "hot" }) do
    it(("poisons the candidate's outputs before each of its calls (%s mode)"):format(mode), function()
      local r, seen = run({ mode = mode })
      assert.equals("correct", r.verdict.verdict, tostring(r.verdict.detail))
      local cand = of(seen, "candidate")
      assert.is_true(#cand > 10)
      for i, c in ipairs(cand) do
        assert.is_true(c.cand_poisoned, ("candidate call %d: its outputs were not poisoned"):format(i))
        -- the baseline's outputs on the set (known once the baseline ran on it): poisoned
        -- before the candidate's call in cold mode; in hot mode they keep the baseline's last
        -- answer (the candidate runs first on new values, so it answers nothing of theirs)
        if c.base_poisoned ~= nil then
          assert.equals(mode == "cold", c.base_poisoned, ("candidate call %d: the baseline's outputs"):format(i))
        end
      end
      for i, c in ipairs(of(seen, "baseline")) do
        assert.is_true(c.base_poisoned, ("baseline call %d: its outputs were not poisoned"):format(i))
        -- the candidate's outputs hold its answer, for the round's check: never poisoned here
        assert.is_false(c.cand_poisoned, ("baseline call %d: the candidate's outputs were poisoned"):format(i))
      end
    end)
  end

  it("calls the candidate first, on new values every round, the sets in turn", function()
    local r, seen = run()
    local cand, base = of(seen, "candidate"), of(seen, "baseline")
    -- plain calls on sets 1 and 2, a warm-up call on set 1, then one call a round
    assert.equals(3 + r.timing.rounds, #cand)
    assert.equals(#cand, #base)
    local sets = {}
    for i, c in ipairs(cand) do sets[i] = c.set end
    local want = { 1, 2, 1 }
    for round = 1, r.timing.rounds do want[#want + 1] = (round - 1) % 2 + 1 end
    assert.same(want, sets)
    -- the plain calls and warm-ups: all the candidate's before any of the baseline's
    local first_base
    for i, c in ipairs(seen.calls) do if c.who == "baseline" then first_base = first_base or i end end
    assert.equals(4, first_base)
    -- each round: the candidate's call, then the baseline's on the same set and values, values
    -- no earlier call saw
    local before = {}
    for i = 1, 3 do before[cand[i].hash] = true end
    for round = 1, r.timing.rounds do
      local c, b = seen.calls[6 + 2 * round - 1], seen.calls[6 + 2 * round]
      assert.same({ "candidate", "baseline" }, { c.who, b.who })
      assert.same({ c.set, c.hash }, { b.set, b.hash })
      assert.is_nil(before[c.hash], ("round %d: the candidate saw inputs an earlier call saw"):format(round))
      before[c.hash] = true
    end
  end)

  it("judges the first and last timed call on each set with the oracle, the rounds between with the cheap check", function()
    local r, seen = run()
    local ch = r.checks
    local function wheres(list)
      local w = {}
      for i, c in ipairs(list) do w[i] = c.where end
      return w
    end
    assert.same({ "sample 1, input set 1, its first timed call", "sample 2, input set 2, its first timed call" }, wheres(ch.first))
    assert.same({ "input set 1, its last timed call", "input set 2, its last timed call" }, wheres(ch.last))
    for _, c in ipairs(ch.first) do assert.is_true(c.ok) end
    for _, c in ipairs(ch.last) do assert.is_true(c.ok) end
    assert.equals(r.timing.rounds, ch.rounds)
    assert.equals(ch.rounds - 2, ch.cheap)
    assert.same({ 0, 4, 4 }, { ch.doubts, ch.oracle, seen.oracle })
    -- the oracle's rounds are disturbed: rounds 2 and 3 (after rounds 1 and 2) are not kept
    assert.equals(2, r.timing.discarded)
    assert.equals(r.timing.rounds - 2, r.candidate.summary.n)
  end)

  it("makes a wrong value in a round the candidate's verdict: incorrect, found while timing, where", function()
    local r = run(nil, function(c, _, y) if c == 5 + 3 then y:fill(7) end end)
    assert.equals("incorrect", r.verdict.verdict)
    assert.equals("wrong_values", r.verdict.reason)
    assert.matches("^found while timing %(sample 5, input set 1%): output 'y': ", r.verdict.detail)
  end)

  it("makes a wrong value in the first timed call on a set incorrect, said so", function()
    local r = run(nil, function(c, _, y) if c == 2 + 3 then y:fill(7) end end)
    assert.equals("incorrect", r.verdict.verdict)
    assert.equals("wrong_values", r.verdict.reason)
    assert.matches("^found while timing %(sample 2, input set 2, its first timed call%): output 'y': ", r.verdict.detail)
  end)

  it("makes an element left unwritten in a round incomplete_write", function()
    local r = run(nil, function(c, _, y)
      if c == 6 + 3 then
        local v = y:narrow(1, 60, 5)
        v:poison()
        v:free()
      end
    end)
    assert.equals("incorrect", r.verdict.verdict)
    assert.equals("incomplete_write", r.verdict.reason)
    assert.equals("found while timing (sample 6, input set 2): output 'y' has 5 of 64 elements unwritten", r.verdict.detail)
  end)

  it("makes an input changed in a round input_mutation", function()
    local r = run(nil, function(c, x) if c == 7 + 3 then x:fill(0) end end)
    assert.equals("incorrect", r.verdict.verdict)
    assert.equals("input_mutation", r.verdict.reason)
    assert.equals("found while timing (sample 7, input set 1): the inputs x changed", r.verdict.detail)
  end)
end)
