-- kreach.profile.report and kreach.profile.families: family shares over both denominators,
-- GPU-busy time with overlapping streams, the Amdahl projection against hand-computed values,
-- the renderings, and speedups from evaluation results. Exact arithmetic is compared to 1e-12
-- relative (the sums are of a handful of doubles).
local report = require "kreach.profile.report"
local trace_mod = require "kreach.profile.trace"
local families = require "kreach.profile.families"

local US = 1000 -- ns
local GEMM = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT"
local ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
local SOFTMAX = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)"
local POOL = "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int)"

-- A trace from { name, start_us, end_us[, stream] } kernels, { kind, start_us, end_us } memory
-- operations and { name, start_us, end_us } ranges.
local function make(kernels, memops, ranges)
  local t = { source = "cupti", kernels = {}, memops = {}, ranges = {}, meta = {} }
  for _, k in ipairs(kernels) do
    t.kernels[#t.kernels + 1] = { name = k[1], start_ns = k[2] * US, end_ns = k[3] * US, stream = k[4] or 7 }
  end
  for _, m in ipairs(memops or {}) do
    t.memops[#t.memops + 1] = { kind = m[1], copy_kind = m[1] == "memcpy" and "HtoD" or nil, start_ns = m[2] * US, end_ns = m[3] * US }
  end
  for _, r in ipairs(ranges or {}) do t.ranges[#t.ranges + 1] = { name = r[1], start_ns = r[2] * US, end_ns = r[3] * US } end
  return trace_mod.finish(t)
end

local function close(want, got, what)
  assert.is_true(math.abs(got - want) <= 1e-12 * math.max(1, math.abs(want)),
    ("%s: expected %.17g, got %.17g"):format(what or "value", want, got))
end

local function family(rep, name)
  for _, f in ipairs(rep.families) do if f.family == name then return f end end
end

describe("kreach.profile.report", function()
  -- 100 us of GPU time in a 200 us step: gemm 60, elementwise 30, softmax 10
  local t = make({ { GEMM, 10, 70 }, { ADD, 80, 110 }, { SOFTMAX, 120, 130 } }, {}, { { "step", 0, 200 } })
  local sel = assert(trace_mod.select(t, { range = "step" }))

  it("gives each family's time and its share of GPU time and of wall time", function()
    local rep = report.build(sel)
    close(200e-6, rep.wall_s, "wall")
    close(100e-6, rep.totals.gpu_s, "gpu")
    local g = family(rep, "gemm")
    assert.equals(1, g.count)
    close(60e-6, g.time_s)
    close(0.6, g.frac_gpu)
    close(0.3, g.frac_wall)
    assert.is_false(g.addressable)
    assert.is_true(g.vendor)
    close(0.3, family(rep, "elementwise").frac_gpu)
    close(0.15, family(rep, "elementwise").frac_wall)
    close(0.1, family(rep, "softmax_loss").frac_gpu)
    close(0.4, rep.addressable.frac_gpu, "addressable / GPU")
    close(0.2, rep.addressable.frac_wall, "addressable / wall")
    close(0.6, rep.not_addressable.frac_gpu)
    close(0.5, rep.totals.busy_frac, "busy")
    assert.equals(3, #rep.kernels)
    assert.equals(GEMM, rep.kernels[1].name)
    close(60e-6, rep.kernels[1].mean_s)
  end)

  it("counts overlapping streams once in GPU-busy time, and every record in GPU time", function()
    -- [0,10) and [5,15) overlap on two streams, [20,30) and a memcpy [28,32) overlap too
    local o = make({ { GEMM, 0, 10, 7 }, { ADD, 5, 15, 13 }, { SOFTMAX, 20, 30, 7 } }, { { "memcpy", 28, 32 } })
    local rep = report.build(o) -- the window: first kernel start to last kernel end, [0, 30)
    close(30e-6, rep.wall_s)
    close(34e-6, rep.totals.gpu_s)             -- 10 + 10 + 10 + 4
    close(25e-6, rep.totals.busy_s)            -- [0, 15) and [20, 30): the memcpy's tail is outside
    close(25 / 30, rep.totals.busy_frac)
    close(4 / 34, family(rep, "memory").frac_gpu)
    -- busy time is clipped to the selected ranges
    local r2 = make({ { GEMM, 0, 10 }, { ADD, 5, 25 }, { SOFTMAX, 30, 50 } }, {}, { { "s", 0, 12 }, { "s", 20, 40 } })
    local s2 = assert(trace_mod.select(r2, { range = "s" }))
    local rep2 = report.build(s2)
    close(32e-6, rep2.wall_s)                  -- 12 + 20
    close(27e-6, rep2.totals.busy_s)           -- [0, 12), [20, 25) and [30, 40)
    close(50e-6, rep2.totals.gpu_s)            -- whole kernels: 10 + 20 + 20
    assert.equals(3, rep2.totals.kernels)
    close(report.busy_ns(s2.kernels, s2.meta.selection.intervals) / 1e9, rep2.totals.busy_s)
  end)

  it("projects Amdahl's end-to-end speedup over both denominators", function()
    local rep = report.build(sel, { speedups = { elementwise = 2, softmax_loss = 1.5 } })
    local p = rep.projection
    -- GPU time: f = 0.3 at 2x, 0.1 at 1.5x
    close(1 / (0.6 + 0.15 + 0.1 / 1.5), p.gpu.S, "S over GPU time")
    close(1.2244897959183674, p.gpu.S, "S over GPU time, by hand")
    close(0.4, p.gpu.sum_f)
    close(15e-6 + 10e-6 / 3, p.gpu.saved_s, "saved")
    close(100e-6 - (15e-6 + 10e-6 / 3), p.gpu.after_s)
    close(100e-6 / p.gpu.S, p.gpu.after_s, "after = before / S")
    -- wall time: the same kernels are 0.15 and 0.05 of it; the other 100 us are unchanged
    close(1 / (0.8 + 0.075 + 0.05 / 1.5), p.wall.S, "S over wall time")
    close(p.gpu.saved_s, p.wall.saved_s)
    close(200e-6 / p.wall.S, p.wall.after_s)
    assert.equals("S = 1 / ((1 - 0.4000) + 0.3000/2 + 0.1000/1.5) = 1.2245", p.gpu.formula)
    assert.equals(2, #p.terms)
    assert.equals("elementwise", p.terms[1].family)
    close(15e-6, p.terms[1].saved_s)
  end)

  it("keeps families without a speedup at 1.0x", function()
    local base = report.build(sel, { speedups = { elementwise = 2 } }).projection
    local same = report.build(sel, { speedups = { elementwise = 2, gemm = 1, conv = 3 } }).projection
    close(base.gpu.S, same.gpu.S)
    close(base.wall.S, same.wall.S)
    close(1 / (0.7 + 0.15), base.gpu.S)
    local none = report.build(sel, { speedups = {} }).projection
    close(1, none.gpu.S)
    close(0, none.wall.saved_s)
    -- a speedup below 1 is a slowdown, projected the same way
    close(1 / (0.7 + 0.3 / 0.5), report.build(sel, { speedups = { elementwise = 0.5 } }).projection.gpu.S)
  end)

  it("refuses unknown families and speedups that are not positive numbers", function()
    local rep = report.build(sel)
    assert.error_matches(function() report.project(rep, { elementwize = 2 }) end, "unknown family 'elementwize'")
    assert.error_matches(function() report.project(rep, { gemm = 0 }) end, "must be a positive number")
    assert.error_matches(function() report.project(rep, { gemm = 0 / 0 }) end, "must be a positive number")
  end)

  it("lists unclassified kernels and the 'other' family by name, outside the addressable share", function()
    local u = make({ { GEMM, 0, 50 }, { "my_kernel(float*)", 50, 75 }, { POOL, 75, 100 } })
    local rep = report.build(u)
    assert.equals(1, rep.unclassified.count)
    assert.equals("my_kernel(float*)", rep.unclassified.kernels[1].name)
    close(0.25, rep.unclassified.frac_gpu)
    close(0.25, rep.addressable.frac_gpu) -- 'other' is addressable, unclassified is not counted
    assert.equals(POOL, rep.other.kernels[1].name)
    assert.is_nil(family(rep, "unclassified"))
    local text = report.text(rep)
    assert.matches("\nunclassified kernels %(no rule matched", text)
    assert.matches("\n +1 x +25%.000 us  my_kernel%(float%*%)\n", text)
    assert.matches("up to 50%.0%% of GPU time if they all were", text)
  end)

  it("applies an addressable policy and custom rules", function()
    local rep = report.build(sel, { addressable = { gemm = true } })
    close(1.0, rep.addressable.frac_gpu)
    local rules = require("kreach.profile.classify").extend({ { id = "mine", family = "attention", kernel = { "^cunn_SoftMax" } } })
    rep = report.build(sel, { rules = rules })
    close(0.1, family(rep, "attention").frac_gpu)
    assert.is_nil(family(rep, "softmax_loss"))
  end)

  it("renders text with the formula, JSON, and CSV", function()
    local rep = report.build(sel, { speedups = { elementwise = 2, softmax_loss = 1.5 } })
    local text = report.text(rep)
    assert.matches("window: 1 of 1 'step' ranges %(0 skipped%); wall 200%.000 us", text)
    assert.matches("\ngemm +no %(vendor%) +1 +60%.000 +60%.0%% +30%.0%%\n", text)
    assert.matches("\naddressable: 40%.0%% of GPU time, 20%.0%% of wall time\n", text)
    assert.matches("S = 1 / %(%(1 %- sum_i f_i%) %+ sum_i f_i / s_i%)", text)
    assert.matches("GPU time:  S = 1 / %(%(1 %- 0%.4000%) %+ 0%.3000/2 %+ 0%.1000/1%.5%) = 1%.2245", text)
    local back = require("cjson").decode(report.json(rep))
    assert.equals(3, back.totals.kernels)
    close(0.4, back.addressable.frac_gpu)
    close(rep.projection.gpu.S, back.projection.gpu.S)
    local csv = report.csv(rep)
    local first = csv:match("^[^\n]*")
    assert.equals("section,name,family,addressable,count,time_s,mean_s,frac_gpu,frac_wall,speedup", first)
    assert.matches("\nfamily,gemm,gemm,false,1,6e%-05,6e%-05,0%.6,0%.3,\n", csv)
    assert.matches('\nkernel,"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char%*, 3ul> >%(int, at::native::CUDAFunctor_add<float>, std::array<char%*, 3ul>%)",elementwise,true,1,', csv)
    assert.matches("\nprojection,gpu,,,,", csv)
  end)

  it("writes CSV cells a spreadsheet will not run", function()
    local rep = report.build(sel, {})
    rep.kernels[1].name = "=HYPERLINK(\"http://x\")"
    rep.kernels[1].family = "@SUM(A1)"
    local csv = report.csv(rep)
    assert.matches('\nkernel,"\'=HYPERLINK%(""http://x""%)",\'@SUM%(A1%),', csv)
  end)

  it("measures a trace without a window over its kernels, and an empty one as empty", function()
    local rep = report.build(t)
    close(120e-6, rep.wall_s) -- 10 us to 130 us
    local empty = report.build(make({}))
    assert.equals(0, empty.totals.kernels)
    assert.matches("no kernels or memory operations in the window", report.text(empty))
  end)
end)

describe("kreach.profile.families", function()
  it("maps problems to families by category, with per-problem exceptions", function()
    assert.equals("gemm", families.family_of({ suite = "kernelbench-l1", id = 1, category = "matmul" }))
    assert.equals("elementwise", families.family_of({ suite = "kernelbench-l1", id = 12, category = "matmul" }))
    assert.equals("softmax_loss", families.family_of({ suite = "kernelbench-l1", id = 23, category = "activation" }))
    assert.equals("elementwise", families.family_of({ suite = "kernelbench-l1", id = 19, category = "activation" }))
    assert.equals("other", families.family_of({ category = "pooling" }))
    assert.equals("sort_scan", families.family_of({ category = "scan" }))
    assert.equals("conv", families.family_of({ category = "convolution" }))
    local f, err = families.family_of({ name = "x", category = "quantum" })
    assert.is_nil(f)
    assert.matches("maps to no family", err)
  end)

  it("maps every shipped problem's category", function()
    local kreach = require "kreach"
    local s = kreach.load_suite("kernelbench-l1")
    for _, path in ipairs(s.files) do
      local p = require("kreach.problem").load(path)
      assert.is_truthy(families.family_of(p), p.name)
    end
  end)

  it("takes the geometric mean of correct candidates' speedups per family", function()
    local results = {
      { suite = "kernelbench-l1", id = 19, category = "activation", verdict = "correct", speedup = 2.0 },
      { suite = "kernelbench-l1", id = 20, category = "activation", correct = true, speedup = 8.0 },
      { suite = "kernelbench-l1", id = 21, category = "activation", verdict = "incorrect", speedup = 100 },
      { suite = "kernelbench-l1", id = 23, category = "activation", verdict = { verdict = "correct" }, speedup = 1.5 },
      { problem = { suite = "kernelbench-l1", id = 1, category = "matmul" }, verdict = "correct", speedup = 0.9 },
      { family = "reduction", verdict = "correct", speedup = 1.2 },
      { suite = "kernelbench-l1", id = 19, category = "activation", verdict = "correct" }, -- no speedup
    }
    local s, detail = families.speedups(results)
    close(4.0, s.elementwise)
    close(1.5, s.softmax_loss)
    close(0.9, s.gemm)
    close(1.2, s.reduction)
    assert.equals(2, detail.elementwise.n)
    assert.is_nil(s.attention)
    -- per problem, the best candidate only
    results[#results + 1] = { suite = "kernelbench-l1", id = 19, category = "activation", verdict = "correct", speedup = 4.5 }
    close(math.sqrt(2.0 * 8.0 * 4.5) ^ (2 / 3), families.speedups(results).elementwise)
    close(6.0, families.speedups(results, { per_problem = "best" }).elementwise)
  end)

  it("parses --speedups", function()
    assert.same({ gemm = 1.2, elementwise = 2 }, families.parse("gemm=1.2,elementwise=2"))
    assert.same({ gemm = 1.25 }, families.parse(" gemm = 1.25 "))
    local r, err = families.parse("gemm")
    assert.is_nil(r)
    assert.matches("family=number", err)
    r, err = families.parse("gemm=0")
    assert.is_nil(r)
    assert.matches("positive number", err)
    r, err = families.parse("gemm=1.2,elementwise=2,gemm=3")
    assert.is_nil(r)
    assert.equals("the speedup of gemm is given twice (1.2 and 3)", err)
  end)
end)
