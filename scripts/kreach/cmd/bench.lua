-- kreach bench <suite|problem>: times the baselines alone, each problem in a fresh worker
-- process, with the timing engine's options; stores each measurement in the results database
-- (as an evaluation without a candidate, verdict "baseline") and prints a table with the
-- achieved bandwidth, FLOP rate and fraction of the speed-of-light bound.
local kreach = require "kreach"

local function fmt(x, f) return x and (f or "%.4g"):format(x) or "-" end

return {
  summary = "Time the baselines of a suite or a problem (needs a GPU).",
  parser = function(p)
    p:argument("target", "A suite (kreach list) or one problem (file, id or name).")
    require("kreach.cli").problem_options(p)
    require("kreach.cli").timing_options(p)
  end,
  run = function(args)
    local cli = require "kreach.cli"
    local ev = require "kreach.eval"
    local problem = require "kreach.problem"
    local sizes, err = cli.sizes(args.size)
    if not sizes then io.stderr:write("kreach bench: ", err, "\n"); return 2 end
    local timing, measure = cli.timing_overrides(args)
    if not timing then io.stderr:write("kreach bench: ", measure, "\n"); return 2 end
    local files = {}
    local is_suite = false
    for _, s in ipairs(problem.suites()) do if s == args.target then is_suite = true end end
    if is_suite then files = problem.load_suite(args.target).files else files = { problem.resolve(args.target) } end
    local dev = kreach.require_device()
    local db, derr = require("kreach.store").open(args.db)
    if not db then problem.raise(derr) end
    local log = function(l) io.stderr:write("kreach bench: ", l, "\n") end
    local t_start = kreach.now()
    local o = { dtype = args.dtype, sizes = sizes, timing = timing, measure = measure,
                calibration = ev.calibration(db, dev, log) }
    local econf = { protocol = ev.PROTOCOL, kind = "bench", dtype = args.dtype, sizes = sizes,
                    timing = require("kreach.timing").options(timing), measure = measure, device = dev.uuid }
    local chash = ev.hash(ev.canonical(econf))
    local argv = { "kreach", "bench" }
    for _, a in ipairs(arg or {}) do argv[#argv + 1] = a end
    local run_id = ev.begin_run(db, dev, argv, econf, chash)
    local rows = {}
    local tty = require("kreach.core.util").isatty(2)
    if not args.json then
      io.write(("%-4s %-36s %10s %19s %7s %5s %9s %9s %6s  %s\n"):format("id", "problem", "median ms", "95% CI", "IQR %", "n",
        "GB/s", "TFLOP/s", "%SOL", "stop"))
    end
    for i, f in ipairs(files) do
      local p = problem.load(f)
      if tty then io.stderr:write(("\r[%d/%d] %s\27[K"):format(i, #files, p.name)); io.stderr:flush() end
      local t0 = kreach.now()
      local r, failed = require("kreach.worker").run(ev.worker_argv("time", { problem_path = f }, o),
        { timeout_s = args.timeout, timeouts = ev.phase_timeouts(args.timeout, timing), memory_bytes = args.worker_memory })
      if tty then io.stderr:write("\r\27[K") end
      local phash = ev.hash(assert(ev.file_text(f)))
      local rec = { run_id = run_id, eval_key = ev.hash(ev.canonical({ chash, phash, "baseline" })), dtype = args.dtype,
                    sizes = sizes, problem = { suite = p.suite, problem_id = p.id, name = p.name, path = f, file_hash = phash },
                    wall_s = kreach.now() - t0, finished_at = os.date("!%Y-%m-%dT%H:%M:%SZ") }
      local row = { id = p.id, name = p.name }
      if not r then
        rec.verdict = { verdict = failed.verdict, reason = failed.reason, detail = failed.detail }
        row.error = failed.verdict .. ": " .. tostring(failed.reason)
      else
        local s = r.baseline.summary
        rec.verdict = { verdict = "baseline", reason = "the baseline timed alone (kreach bench)" }
        rec.baseline_ms, rec.throttled, rec.timing = s.median, r.throttled or false, r
        rec.sol_fraction = r.baseline.sol and r.baseline.sol.fraction or nil
        row.summary, row.sol, row.stop, row.throttled, row.warnings = s, r.baseline.sol, r.timing.stop_reason, r.throttled, r.warnings
      end
      rec.id = db:record_evaluation(rec)
      rows[#rows + 1] = row
      if not args.json then
        if row.error then
          io.write(("%-4d %-36s FAILED %s\n"):format(p.id, p.name:sub(1, 36), row.error:gsub("\n", " | "):sub(1, 200)))
        else
          local s, sol = row.summary, row.sol or {}
          io.write(("%-4d %-36s %10.4f %19s %7.2f %5d %9s %9s %6s  %s%s\n"):format(p.id, p.name:sub(1, 36), s.median,
            s.ci_lo and ("[%.4f, %.4f]"):format(s.ci_lo, s.ci_hi) or "-", 100 * s.iqr / s.median, s.n,
            fmt(sol.achieved_bytes_per_s and sol.achieved_bytes_per_s / 1e9, "%.1f"),
            fmt(sol.achieved_flops_per_s and sol.achieved_flops_per_s / 1e12, "%.2f"),
            fmt(sol.fraction and 100 * sol.fraction, "%.0f%%"), row.stop or "-", row.throttled and " throttled" or ""))
        end
        io.flush()
      end
    end
    db:finish_run(run_id, "finished")
    db:close()
    local wall = kreach.now() - t_start
    if args.json then
      local json = require "kreach.json"
      io.write(json.encode({ run_id = run_id, rows = json.array(rows), wall_s = wall }), "\n")
    else
      io.write(("\n%d problems at %s in %.1f s (run %d in %s)\n"):format(#files, args.dtype, wall, run_id, args.db))
    end
    return 0
  end,
}
