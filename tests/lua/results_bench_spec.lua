-- What `kreach bench` prints (kreach.results.bench): the table's header and lines, with and
-- without PyTorch's columns, a failed problem's line, the closing lines with the parity of the
-- baselines with PyTorch eager, and the --json object. No GPU: records made by hand.
local bench = require "kreach.results.bench"
local cjson = require "cjson"

local function ok_rec(torch)
  return { problem_id = 19, problem_name = "19_ReLU", verdict = "baseline", throttled = true,
    timing = { baseline = { summary = { median = 0.01234, ci_lo = 0.012, ci_hi = 0.0127, iqr = 0.0005, n = 30 },
                            sol = { achieved_bytes_per_s = 2.5e12, achieved_flops_per_s = 1.2e13, fraction = 0.62 } },
               baseline_backend = { backend = "cudnn", version = "9.1" }, timing = { stop_reason = "ci" },
               pytorch = torch and { summary = { median = 0.02 } } or nil,
               ratios = torch and { baseline_vs_pytorch = { ratio = 0.617, lo = 0.6, hi = 0.63 } } or nil,
               pytorch_env = torch and { torch = "2.4.0", cudnn_tf32 = true } or nil } }
end
local FAR = { problem_id = 23, problem_name = "23_Softmax_with_a_really_long_name_that_gets_cut_here", verdict = "baseline",
  timing = { baseline = { summary = { median = 1.5, iqr = 0.1, n = 5 } },
             ratios = { baseline_vs_pytorch = { ratio = 1.7, lo = 1.6, hi = 1.8 } }, pytorch_env = { torch = "2.4.0" } } }
local FAILED = { problem_id = 40, problem_name = "40_X", verdict = "runtime_error", reason = "boom\nline two", timing = "{}" }

describe("kreach.results.bench", function()
  it("writes the table's header and lines, without PyTorch", function()
    assert.equals("id   problem                               median ms              95% CI   IQR %     n      GB/s   TFLOP/s   %SOL  stop\n",
      bench.header(false))
    assert.equals("19   19_ReLU                                  0.0123    [0.0120, 0.0127]    4.05    30    2500.0     12.00    62%  ci throttled  [cudnn 9.1]\n",
      bench.line(ok_rec(false), false))
    assert.equals("40   40_X                                 FAILED runtime_error: boom | line two\n", bench.line(FAILED, false))
  end)

  it("adds PyTorch's median and the ratio to it where PyTorch was timed", function()
    assert.matches("torch ms base/torch %[95%% CI%]  stop\n$", bench.header(true))
    assert.equals("19   19_ReLU                                  0.0123    [0.0120, 0.0127]    4.05    30    2500.0     12.00    62%     0.0200 0.617 [0.600, 0.630]  ci throttled  [cudnn 9.1]\n",
      bench.line(ok_rec(true), true))
    assert.equals("23   23_Softmax_with_a_really_long_name_t     1.5000                   -    6.67     5         -         -      -          - 1.700 [1.600, 1.800]  -\n",
      bench.line(FAR, true))
  end)

  it("closes with the count, the time, the run and the parity with PyTorch eager", function()
    local res = { records = { ok_rec(false), FAILED }, run_id = 7, db = "/tmp/r.db", planned = 2 }
    assert.equals("\n2 problems at f32 in 2.2 s (run 7 in /tmp/r.db)\n", bench.footer(res, "f32", 2.25))
    assert.is_nil(bench.parity(res.records))
    res = { records = { ok_rec(true), FAR, FAILED }, run_id = 7, db = "/tmp/r.db", planned = 1 }
    assert.equals("\n1 problem at f32 in 2.2 s (run 7 in /tmp/r.db)\n"
      .. "kreach baseline / PyTorch eager (PyTorch 2.4.0, cuDNN TF32 on): geometric mean 1.024 over 2 problems, median 1.159; below 0.9 on 1, above 1.1 on 1, above 1.5 on 1 (23: 1.70)\n",
      bench.footer(res, "f32", 2.25))
  end)

  it("writes one JSON object: the run, the rows with their summaries and bounds, the wall time", function()
    local s = bench.json({ records = { ok_rec(true), FAILED }, run_id = 7, db = "/tmp/r.db", planned = 2 }, 2.25)
    assert.equals(1, select(2, s:gsub("\n", "")))
    local v = cjson.decode(s)
    assert.same({ 7, "/tmp/r.db", 2.25, 2 }, { v.run_id, v.db, v.wall_s, #v.rows })
    assert.same({ "ci", 30, "cudnn", 0.02, 0.617 }, { v.rows[1].stop, v.rows[1].summary.n, v.rows[1].baseline_backend.backend,
      v.rows[1].pytorch.summary.median, v.rows[1].ratios.baseline_vs_pytorch.ratio })
    assert.same({ "runtime_error", "boom\nline two" }, { v.rows[2].verdict, v.rows[2].reason })
    assert.is_nil(v.rows[2].summary)
  end)
end)
