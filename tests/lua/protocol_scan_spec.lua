-- kreach scan-trivial's verdicts accumulate over every trial: kreach.judge.trivial.fold with known
-- answers, and kreach.judge.trivial.scan itself on the host device (KREACH_DEVICE=host; ctest sets it
-- for protocol_ specs) on a problem made here whose output is ones on one trial and zeros on
-- every other: the "zeros" candidate fails KernelBench's rule when that is the first trial, and
-- passes it when that is a trial of other than default inputs (which KernelBench never draws).
-- The summary of `kreach scan-trivial` over problems (scan.passes) is tested too.
local kreach = require "kreach"
local problem = require "kreach.problem"
local scan = require "kreach.judge.trivial"

local function fresh() return { kb = true, kb01 = true, kr = true } end
local function fold_all(trials)
  local st = fresh()
  for _, t in ipairs(trials) do scan.fold(st, t) end
  return st
end

describe("scan.fold, known answers", function()
  it("passes KernelBench's rule only when every trial it judged passed", function()
    local pass = { kernelbench = true, kernelbench_v01 = true, kreach = true }
    local fail = { kernelbench = false, kernelbench_v01 = false, kreach = true }
    assert.is_true(fold_all({ pass, pass, pass }).kb)
    assert.is_false(fold_all({ fail, pass, pass }).kb)
    assert.is_false(fold_all({ pass, fail, pass }).kb)
    assert.is_false(fold_all({ pass, pass, fail }).kb)
    -- the v0.1 tolerance apart from today's
    local loose = { kernelbench = false, kernelbench_v01 = true, kreach = true }
    local st = fold_all({ loose, pass })
    assert.same({ false, true }, { st.kb, st.kb01 })
    st = fold_all({ pass, { kernelbench = true, kernelbench_v01 = false }, pass })
    assert.same({ true, false }, { st.kb, st.kb01 })
  end)

  it("leaves KernelBench's verdict alone in a trial it does not run", function()
    local fail = { kernelbench = false, kernelbench_v01 = false }
    local other = { kreach = true } -- a centred or shifted trial: KernelBench draws only default inputs
    local st = fold_all({ fail, other, other })
    assert.same({ false, false }, { st.kb, st.kb01 })
    st = fold_all({ other, { kernelbench = true, kernelbench_v01 = true } })
    assert.same({ true, true }, { st.kb, st.kb01 })
  end)

  it("keeps kreach's first failure and its reason", function()
    local st = fold_all({ { kreach = true }, { kreach = false, reason = "incomplete_write" },
                          { kreach = false, reason = "wrong_values" }, { kreach = true } })
    assert.same({ false, "incomplete_write" }, { st.kr, st.reason })
    -- a trial kreach could not judge (the baseline fails the output) changes nothing
    st = fold_all({ { kreach = nil }, { kreach = true } })
    assert.same({ true }, { st.kr, st.reason })
  end)
end)

describe("scan.passes, known answers", function()
  it("lists each problem a candidate passes under each rule, from every output", function()
    local rows = {
      { id = 1, outputs = { y = { zeros = { kernelbench = true, kernelbench_v01 = true, kreach = false },
                                  copy = { na = "no input" } } } },
      { id = 2, outputs = { y = { zeros = { kernelbench = false, kernelbench_v01 = true, kreach = false },
                                  copy = { kernelbench = true, kernelbench_v01 = true, kreach = true } } } },
      { id = 3, error = "failed" },
    }
    local p = scan.passes(rows, { "zeros", "copy" })
    assert.same({ kb = { 1 }, kb01 = { 1, 2 }, kr = {} }, p.zeros)
    assert.same({ kb = { 2 }, kb01 = { 2 }, kr = { 2 } }, p.copy)
  end)
end)

describe("scan.scan on the host device", function()
  local host_ok, host = pcall(require, "kreach.host")
  if not (host_ok and host.active()) then
    it("runs on the host device", function()
      error("KREACH_DEVICE=host is not set (or this kreach has no host device): ctest sets it for protocol_ specs")
    end)
    return
  end

  -- identity(ones_on) -> a problem y = x whose input is all ones on its ones_on-th draw and
  -- zeros on every other, and the list of the draws' distributions. The problem's draws come in
  -- order: the constant's calibration (default inputs) first, then the five trials.
  local function identity(ones_on)
    local draws = {}
    local P = kreach.problem{
      id = 9002, name = "protocol_scan_identity", suite = "tests", category = "elementwise",
      description = "y = x, with inputs that are ones on one draw only",
      sizes = { n = 8 },
      args = {
        kreach.input("x", { "n" }, { dist = problem.host_dist{ text = "ones on one draw",
          draw = function(shape, _, variant)
            draws[#draws + 1] = variant
            local v = #draws == ones_on and 1 or 0
            local out = {}
            for i = 1, shape[1] do out[i] = v end
            return out
          end } }),
        kreach.output("y", { "n" }),
      },
      reference = function(_, x, y) y:copy_from(x) end,
      flops = function() return 0 end,
      torch = { model = "class Model(nn.Module):\n    def forward(self, x):\n        return x.clone()\n" },
    }
    return P, draws
  end

  it("fails the zeros candidate under KernelBench's rule when only the first of its trials fails", function()
    local P, draws = identity(2) -- trial 1
    local r = scan.scan(P:instantiate{}, { policy = { trials = 5 } })
    -- the calibration, then the five trials with their distributions
    assert.same({ "default", "default", "centred", "default", "shifted", "default" }, draws)
    local y = r.outputs.y
    -- the baseline is ones on trial 1 (default inputs): zeros fails there, and passes trials 3
    -- and 5 (zeros against zeros); the constant is the calibration's mean, 0: the same
    assert.same({ false, false, false }, { y.zeros.kernelbench, y.zeros.kernelbench_v01, y.zeros.kreach })
    assert.same({ false, false, false }, { y.constant.kernelbench, y.constant.kernelbench_v01, y.constant.kreach })
    assert.equals("wrong_values", y.zeros.reason)
    -- copy is the identity: it passes everything
    assert.same({ true, true, true }, { y.copy.kernelbench, y.copy.kernelbench_v01, y.copy.kreach })
    -- partial: the first element right (0.3% of 8, rounded up), the others zeros for
    -- KernelBench (so it fails trial 1 only) and unwritten for kreach
    assert.same({ false, false, false, "incomplete_write" },
      { y.partial.kernelbench, y.partial.kernelbench_v01, y.partial.kreach, y.partial.reason })
    assert.equals("the output has one row", y.first_row.na)
    -- and the command's summary: no problem passed by zeros
    assert.same({ kb = {}, kb01 = {}, kr = {} }, scan.passes({ { id = 9002, outputs = r.outputs } }, scan.CANDIDATES).zeros)
  end)

  it("judges KernelBench's rule on the default inputs only", function()
    local P, draws = identity(3) -- trial 2, centred inputs: ones there, zeros in every default trial
    local r = scan.scan(P:instantiate{}, { policy = { trials = 5 } })
    assert.same({ "default", "default", "centred", "default", "shifted", "default" }, draws)
    -- zeros matches every default trial, so KernelBench's rule passes it; kreach fails it on trial 2
    local z = r.outputs.y.zeros
    assert.same({ true, true, false, "wrong_values" }, { z.kernelbench, z.kernelbench_v01, z.kreach, z.reason })
    assert.same({ kb = { 9002 }, kb01 = { 9002 }, kr = {} }, scan.passes({ { id = 9002, outputs = r.outputs } }, { "zeros" }).zeros)
  end)
end)
