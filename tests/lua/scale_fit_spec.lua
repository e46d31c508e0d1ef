-- The model-scale sweep without a GPU (experiments/scale): the run list and its command lines,
-- a failed run's reason, a run's row from a report built here, the least-squares fit and its
-- t-interval against values computed by hand, the verdict, and fit.lua on the fixture
-- tests/data/scale/fixture-scale.json (made-up numbers chosen for hand-computed answers; not
-- study data).
local support = require "support"
local report = require "kreach.profile.report"
local trace_mod = require "kreach.profile.trace"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."
package.path = root .. "/experiments/scale/?.lua;" .. root .. "/experiments/workloads/?.lua;" .. package.path
local fitlib = require "fitlib"
local sweep = require "sweep"
local runs = require "runs"
local KREACH = require("kreach").executable()
local FIXTURE = root .. "/tests/data/scale/fixture-scale.json"

local function close(want, got, tol, what)
  assert.is_number(got, what)
  assert.is_true(math.abs(got - want) <= (tol or 1e-12) * math.max(1, math.abs(want)),
    ("%s: expected %.17g, got %.17g"):format(what or "value", want, got))
end

describe("experiments/scale/fitlib.lua: Student's t", function()
  it("gives the two-sided 95% quantiles of the tables", function()
    close(12.706204736, fitlib.t_quantile(0.975, 1), 1e-8, "df 1")
    close(4.302652730, fitlib.t_quantile(0.975, 2), 1e-8, "df 2")
    close(3.182446305, fitlib.t_quantile(0.975, 3), 1e-8, "df 3")
    close(2.228138852, fitlib.t_quantile(0.975, 10), 1e-8, "df 10")
    close(2.042272456, fitlib.t_quantile(0.975, 30), 1e-8, "df 30")
    close(-4.302652730, fitlib.t_quantile(0.025, 2), 1e-8, "lower tail")
    close(0.5, fitlib.t_cdf(0, 5), 1e-14, "cdf at 0")
    -- df 1 is the Cauchy distribution: P(T <= 1) = 3/4
    close(0.75, fitlib.t_cdf(1, 1), 1e-12, "Cauchy")
    assert.has_error(function() fitlib.t_quantile(1, 2) end)
  end)
end)

describe("experiments/scale/fitlib.lua: the fit", function()
  it("fits a line by least squares, with the slope's t-interval on n - 2 df", function()
    -- by hand: mean x 1.5, mean y 2.75, Sxx 5, Sxy 5.5, slope 1.1, intercept 1.1, residuals
    -- -0.1, 0.8, -1.3, 0.6, RSS 2.7, se = sqrt(2.7 / 2 / 5) = sqrt(0.27)
    local f = fitlib.ols({ 0, 1, 2, 3 }, { 1, 3, 2, 5 })
    close(1.1, f.slope, 1e-12, "slope")
    close(1.1, f.intercept, 1e-12, "intercept")
    close(2.7, f.rss, 1e-12, "rss")
    assert.equals(2, f.df)
    close(math.sqrt(0.27), f.se, 1e-12, "se")
    local lo, hi = fitlib.slope_interval(f)
    close(1.1 - 4.30265272974946 * math.sqrt(0.27), lo, 1e-9, "lo")
    close(1.1 + 4.30265272974946 * math.sqrt(0.27), hi, 1e-9, "hi")
    assert.equals("undecided", fitlib.verdict(lo, hi))
  end)

  it("says holds, contradicted or undecided from where the interval lies", function()
    assert.equals("holds", fitlib.verdict(-0.3, -0.1))
    assert.equals("contradicted", fitlib.verdict(0.1, 0.3))
    assert.equals("undecided", fitlib.verdict(-0.1, 0.3))
    assert.equals("undecided", fitlib.verdict(nil, nil))
    -- points on a falling line exactly: a zero-width interval below zero
    local f = fitlib.ols({ 8, 9, 10 }, { 0.3, 0.2, 0.1 })
    local lo, hi = fitlib.slope_interval(f)
    close(-0.1, lo, 1e-9); close(-0.1, hi, 1e-9)
    assert.equals("holds", fitlib.verdict(lo, hi))
  end)

  it("gives two points a line and no interval, and refuses one point or one x", function()
    local f = fitlib.ols({ 9, 10 }, { 0.2, 0.1 })
    close(-0.1, f.slope)
    assert.is_nil(f.se)
    assert.is_nil(fitlib.slope_interval(f))
    assert.has_error(function() fitlib.ols({ 1 }, { 1 }) end, "ols: a line needs two points at least")
    assert.has_error(function() fitlib.ols({ 2, 2, 2 }, { 1, 2, 3 }) end, "ols: every x is the same")
  end)
end)

describe("experiments/scale/fitlib.lua on the fixture", function()
  local a = fitlib.analyse(assert(fitlib.load(FIXTURE)))

  it("fits each family and mode, GPT-2 first", function()
    local keys = {}
    for i, g in ipairs(a.groups) do keys[i] = g.family .. "/" .. g.mode end
    assert.same({ "gpt2/infer", "gpt2/train", "llama/infer", "llama/train" }, keys)
    local inf, tr, li, lt = a.groups[1], a.groups[2], a.groups[3], a.groups[4]
    -- GPT-2 inference: x = 8, 9, 10, 11; y = .30 .27 .25 .21: Sxy -0.145, slope -0.029,
    -- RSS 7e-5, se sqrt(7e-6); 95%: -0.029 -/+ 4.302653 * 0.0026458
    close(-0.029, inf.fit_gpu.slope, 1e-9, "infer slope")
    close(math.sqrt(7e-6), inf.fit_gpu.se, 1e-7, "infer se")
    close(-0.029 - 4.30265272974946 * math.sqrt(7e-6), inf.lo, 1e-7, "infer lo")
    close(-0.029 + 4.30265272974946 * math.sqrt(7e-6), inf.hi, 1e-7, "infer hi")
    assert.equals("holds", inf.verdict)
    -- wall: y = .28 .25 .23 .20: Sxy -0.13, slope -0.026
    close(-0.026, inf.fit_wall.slope, 1e-9, "infer wall slope")
    -- GPT-2 training: y = 0.1 x (1, 3, 2, 5): the first test's line scaled by 0.1
    close(0.11, tr.fit_gpu.slope, 1e-9, "train slope")
    close(0.11 - 4.30265272974946 * math.sqrt(0.0027), tr.lo, 1e-7, "train lo")
    assert.equals("undecided", tr.verdict)
    -- Llama inference: two sizes, slope -0.05 / log10(3), no interval
    close(-0.05 / math.log(3, 10), li.fit_gpu.slope, 1e-9, "llama slope")
    assert.is_nil(li.lo)
    assert.equals("undecided", li.verdict)
    -- Llama training: one size measured, the other failed
    assert.is_nil(lt.fit_gpu)
    assert.equals(1, #lt.failed)
    assert.equals("undecided", lt.verdict)
  end)

  it("says why in a sentence a group: the verdict, the device and the shares that moved", function()
    local s = a.groups[1].sentence
    assert.truthy(s:find('"the fraction shrinks with model scale" holds on fixture device', 1, true), s)
    assert.truthy(s:find("vendor libraries' share of GPU time went 62.0% -> 75.0%", 1, true), s)
    assert.truthy(s:find("gemm 62.0% -> 75.0%", 1, true), s)
    assert.truthy(s:find("the library share rises with size and the addressable share falls", 1, true), s)
    s = a.groups[2].sentence
    assert.truthy(s:find("undecided on fixture device: the interval holds zero", 1, true), s)
    assert.truthy(s:find("the library share did not rise with size", 1, true), s)
    assert.truthy(a.groups[3].sentence:find("needs three sizes", 1, true))
    assert.truthy(a.groups[4].sentence:find("Not measured: 3b (the program exited with status 1: out of memory", 1, true))
  end)

  it("refuses a file that is not a sweep's summary, naming it and the row", function()
    local dir = support.tmpdir()
    local bad = support.write(dir, "bad-scale.json", "{ not json")
    local doc, err = fitlib.load(bad)
    assert.is_nil(doc)
    assert.truthy(err:find(bad .. ": not JSON", 1, true), err)
    doc, err = fitlib.load(support.write(dir, "x.json", '{"device": {}}'))
    assert.is_nil(doc)
    assert.truthy(err:find('no "rows"', 1, true), err)
    doc, err = fitlib.load(support.write(dir, "y.json",
      '{"rows": [{"name": "r1", "family": "gpt2", "mode": "infer", "status": "ok", "params": 5, "addr_gpu": 0.1, "vendor_gpu": 0.5}]}'))
    assert.is_nil(doc)
    assert.truthy(err:find("row 1 (r1): no number for addr_wall", 1, true), err)
  end)
end)

describe("experiments/scale/fit.lua", function()
  it("prints the table and writes Markdown and CSV", function()
    local dir = support.tmpdir()
    local out, rc = support.sh(("%q %q --data %q --md %q --csv %q"):format(KREACH, root .. "/experiments/scale/fit.lua",
      FIXTURE, dir .. "/t.md", dir .. "/t.csv"))
    assert.equals(0, rc, out)
    assert.truthy(out:find("| GPT-2 | infer | 4 | -2.90 | [-4.04, -1.76] | -2.60 | [-3.21, -1.99] | holds |", 1, true), out)
    local md = support.slurp(dir .. "/t.md")
    assert.truthy(md:find("^# The model%-scale sweep"))
    local csv = support.slurp(dir .. "/t.csv")
    assert.truthy(csv:find("\ngpt2,infer,xl,fixture gpt2 xl,100000000000,4,1024,bf16,3,0.9,0.21,0.2,0.75,0.04,100,10.0,ok,,4,-0.029,-0.040384,-0.017616,",
      1, true), csv)
    assert.truthy(csv:find("\nllama,train,3b,", 1, true), csv)
  end)

  it("says what it needs", function()
    local out, rc = support.sh(("%q %q"):format(KREACH, root .. "/experiments/scale/fit.lua"))
    assert.equals(2, rc, out)
    assert.truthy(out:find("--data FILE.json is needed", 1, true), out)
    out, rc = support.sh(("%q %q --data /nonexistent/s.json"):format(KREACH, root .. "/experiments/scale/fit.lua"))
    assert.equals(1, rc, out)
    assert.truthy(out:find("/nonexistent/s.json", 1, true), out)
  end)
end)

describe("experiments/scale/sweep.lua", function()
  it("lists every size in each mode at one batch and sequence length", function()
    local list = sweep.runs()
    assert.equals(12, #list)
    assert.equals("scale-gpt2-small-infer", list[1].name)
    assert.equals("scale-gpt2-xl-train", list[8].name)
    assert.equals("scale-llama-3b-train", list[12].name)
    for _, r in ipairs(list) do
      local argv = table.concat(r.argv, " ")
      assert.truthy(argv:find("--batch 4 --seq 1024 --warmup 2 --steps 3", 1, true), argv)
      assert.truthy(argv:find("--precision " .. (r.mode == "infer" and "bf16" or "autocast%-bf16")), argv)
    end
    local some = sweep.runs({ gpt2 = { "xl" }, llama = {}, modes = { "train" }, batch = 2, seq = 512 })
    assert.equals(1, #some)
    assert.same({ "experiments/workloads/gpt2.py", "--size", "xl", "--mode", "train", "--precision", "autocast-bf16",
                  "--batch", "2", "--seq", "512", "--warmup", "2", "--steps", "3" }, some[1].argv)
    assert.has_error(function() sweep.runs({ gpt2 = { "huge" } }) end, "unknown gpt2 size 'huge' (sizes: small, medium, large, xl)")
    assert.has_error(function() sweep.runs({ modes = { "serve" } }) end)
    assert.has_error(function() sweep.runs({ batch = 0 }) end)
  end)

  it("reads why a run failed from its output", function()
    local oom = table.concat({
      "knobs {\"param_count\": 3212749824}",
      "Traceback (most recent call last):",
      '  File "llama.py", line 200, in <module>',
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 79.19 GiB",
    }, "\n")
    assert.equals("out of memory: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 79.19 GiB",
      sweep.failure_reason(oom))
    assert.equals("RuntimeError: shapes do not match",
      sweep.failure_reason("Traceback (most recent call last):\n  x\nRuntimeError: shapes do not match\n"))
    assert.equals("(stopped after 150 s)", sweep.failure_reason("step 0 1.0\n\n(stopped after 150 s)"))
    assert.equals("no output", sweep.failure_reason(""))
    assert.equals(3212749824, runs.program_line(oom, "knobs").param_count)
    assert.is_nil(runs.program_line(oom, "summary"))
  end)

  it("makes a run's row from its profile, its summary line and its knobs", function()
    -- 100 us of GPU time in a 200 us step: a vendor GEMM 60, an elementwise add 30 (addressable),
    -- an unclassified kernel 10
    local US = 1000
    local t = { source = "cupti", meta = {}, memops = {}, ranges = { { name = "step", start_ns = 0, end_ns = 200 * US } }, kernels = {
      { name = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", start_ns = 10 * US, end_ns = 70 * US, stream = 7 },
      { name = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
        start_ns = 80 * US, end_ns = 110 * US, stream = 7 },
      { name = "my_mystery_kernel_xyz", start_ns = 120 * US, end_ns = 130 * US, stream = 7 },
    } }
    t = trace_mod.finish(t)
    local rep = report.build(assert(trace_mod.select(t, { range = "step" })))
    local fig = runs.figures(rep)
    close(0.3, fig.addr_gpu); close(0.15, fig.addr_wall); close(0.6, fig.vendor_gpu); close(0.1, fig.unclassified_gpu)
    close(0.5, fig.busy)
    assert.equals(3, fig.kernels)
    close(0.6, fig.families.gemm); close(0.3, fig.families.elementwise); close(0.1, fig.families.unclassified)
    assert.equals("elementwise", fig.top.family)
    local run = sweep.runs({ gpt2 = { "medium" }, llama = {}, modes = { "infer" } })[1]
    local row = sweep.row(run, fig, { median_step_ms = 12.5, peak_mem_allocated_bytes = 3 * 2 ^ 30 },
                          { model = "GPT-2 medium", param_count = 354823168, n_layer = 24, n_embd = 1024, torch_version = "2.11.0" })
    assert.equals("ok", row.status)
    assert.equals(354823168, row.params)
    assert.equals(1024, row.width)
    assert.equals(3.0, row.peak_mem_allocated_gib)
    assert.equals(12.5, row.median_step_ms)
    close(0.3, row.addr_gpu)
    assert.equals("2.11.0", row.torch)
    local failed = sweep.row(run, nil, nil, { param_count = 354823168 })
    assert.is_nil(failed.status)
    assert.equals(354823168, failed.params)
  end)
end)

describe("experiments/scale/run.lua without a GPU", function()
  local RUN = root .. "/experiments/scale/run.lua"
  it("lists the runs' command lines with --list", function()
    local out, rc = support.sh(("%q %q --list --sizes small,xl --llama none --batch 2"):format(KREACH, RUN))
    assert.equals(0, rc, out)
    local n = 0
    for _ in out:gmatch("scale%-gpt2%-%a+%-%a+ +python3 [^\n]*gpt2%.py %-%-size %a+ %-%-mode %a+ [^\n]*%-%-batch 2 %-%-seq 1024") do n = n + 1 end
    assert.equals(4, n, out)
  end)

  -- On the host device (kreach's CUDA emulation) the sweep runs its loop for real, but the
  -- program finds no CUDA device and exits 77: each run is a failed row with its reason, and
  -- the summary is written all the same.
  it("records a run that fails as a row with its reason and goes on", function()
    local dir = support.tmpdir()
    local out, rc = support.sh(("KREACH_DEVICE=host %q %q --sizes small --llama none --out %q --db %q --python %q"):format(
      KREACH, RUN, dir .. "/s.json", dir .. "/s.db", os.getenv("KREACH_PYTHON") or "python3"))
    assert.equals(0, rc, out)
    local doc = require("kreach.json").decode(support.slurp(dir .. "/s.json"))
    assert.equals(2, #doc.rows)
    for i, mode in ipairs({ "infer", "train" }) do
      local r = doc.rows[i]
      assert.equals("scale-gpt2-small-" .. mode, r.name)
      assert.equals("failed", r.status)
      assert.truthy(r.error:find("exited with status 77", 1, true), r.error)
      assert.equals(4, r.batch)
      assert.equals(1024, r.seq)
    end
    assert.equals(4, doc.batch)
    assert.is_string(doc.device.name)
    assert.truthy(out:find("\nscale%-gpt2%-small%-train +%- FAILED "), out)
  end)

  -- (the interpreter here is `false`, which fails at once: what --append keeps does not depend on
  -- why the runs failed, and the test stays short)
  it("adds to an earlier summary with --append, and refuses one of another shape", function()
    local dir = support.tmpdir()
    local base = ("KREACH_DEVICE=host %q %q --sizes small --llama none --out %q --db %q --python false"):format(
      KREACH, RUN, dir .. "/s.json", dir .. "/s.db")
    local out, rc = support.sh(base .. " --modes infer")
    assert.equals(0, rc, out)
    out, rc = support.sh(base .. " --modes train --append")
    assert.equals(0, rc, out)
    local doc = require("kreach.json").decode(support.slurp(dir .. "/s.json"))
    local names = {}
    for i, r in ipairs(doc.rows) do names[i] = r.name end
    assert.same({ "scale-gpt2-small-infer", "scale-gpt2-small-train" }, names)
    out, rc = support.sh(base .. " --modes train --append --batch 2")
    assert.equals(2, rc, out)
    assert.truthy(out:find("has batch 4, this call 2", 1, true), out)
  end)

  it("refuses bad options with status 2", function()
    local out, rc = support.sh(("%q %q --sizes huge --list"):format(KREACH, RUN))
    assert.equals(2, rc, out)
    assert.truthy(out:find("unknown gpt2 size 'huge'", 1, true), out)
    out, rc = support.sh(("%q %q --only nothing --list"):format(KREACH, RUN))
    assert.equals(2, rc, out)
    assert.truthy(out:find("--only: no run named nothing", 1, true), out)
  end)
end)
