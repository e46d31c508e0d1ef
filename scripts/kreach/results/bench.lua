-- kreach.results.bench: what `kreach bench` prints of a run's baseline records (kreach.run.evaluate.bench):
-- the table, one line per problem as it finishes (the median with its 95% CI, the IQR, the
-- achieved bandwidth, FLOP rate and fraction of the speed-of-light bound, PyTorch's median and
-- the baseline's ratio to it where PyTorch was timed, the stop reason), the run's closing lines
-- with the parity of the baselines with PyTorch eager, and the --json object. Part of the
-- results stage (kreach.results.store's header says what it may require).
local evaluation = require "kreach.results.evaluation"
local json = require "kreach.json"
local stats = require "kreach.stats"

local M = {}

local function fmt(x, f) return x and (f or "%.4g"):format(x) or "-" end

-- The table's header; with PyTorch timed, its median and the baseline's time over it (below 1:
-- kreach's baseline is faster than PyTorch eager).
function M.header(with_torch)
  return ("%-4s %-36s %10s %19s %7s %5s %9s %9s %6s%s  %s\n"):format("id", "problem", "median ms", "95% CI",
    "IQR %", "n", "GB/s", "TFLOP/s", "%SOL", with_torch and ("%10s %19s"):format("torch ms", "base/torch [95% CI]") or "", "stop")
end

-- The PyTorch columns of one record.
local function torch_cells(t)
  local p = t.pytorch and t.pytorch.summary
  local r = t.ratios and t.ratios.baseline_vs_pytorch
  return (" %10s %19s"):format(p and ("%.4f"):format(p.median) or "-",
    r and ("%.3f [%.3f, %.3f]"):format(r.ratio, r.lo, r.hi) or (t.pytorch_note and "not timed" or "-"))
end

-- The table's line of one record.
function M.line(rec, with_torch)
  local name = (rec.problem_name or "?"):sub(1, 36)
  local b = type(rec.timing) == "table" and rec.timing.baseline or nil
  if rec.verdict ~= "baseline" or not b then
    local why = ("%s: %s"):format(rec.verdict, tostring(rec.reason)):gsub("\n", " | "):sub(1, 200)
    return ("%-4d %-36s FAILED %s\n"):format(rec.problem_id or 0, name, why)
  end
  local s, sol = b.summary, b.sol or {}
  local be = rec.timing.baseline_backend
  local ran = be and ("  [%s%s]"):format(be.backend, be.version and (" " .. be.version) or "") or ""
  return ("%-4d %-36s %10.4f %19s %7.2f %5d %9s %9s %6s%s  %s%s%s\n"):format(rec.problem_id or 0, name, s.median,
    s.ci_lo and ("[%.4f, %.4f]"):format(s.ci_lo, s.ci_hi) or "-", 100 * s.iqr / s.median, s.n,
    fmt(sol.achieved_bytes_per_s and sol.achieved_bytes_per_s / 1e9, "%.1f"),
    fmt(sol.achieved_flops_per_s and sol.achieved_flops_per_s / 1e12, "%.2f"),
    fmt(sol.fraction and 100 * sol.fraction, "%.0f%%"), with_torch and torch_cells(rec.timing) or "", rec.timing.timing and rec.timing.timing.stop_reason or "-",
    rec.throttled and " throttled" or "", ran)
end

-- The JSON row of one record: the brief record, and the baseline's summary and bounds.
function M.json_row(rec)
  local row = evaluation.brief(rec)
  local t = type(rec.timing) == "table" and rec.timing or {}
  if t.baseline then row.summary, row.sol = t.baseline.summary, t.baseline.sol end
  row.stop = t.timing and t.timing.stop_reason or nil
  row.baseline_backend = t.baseline_backend
  row.pytorch = t.pytorch and { summary = t.pytorch.summary } or nil
  row.pytorch_compiled = t.pytorch_compiled and { summary = t.pytorch_compiled.summary } or nil
  row.ratios, row.pytorch_env, row.pytorch_note = t.ratios, t.pytorch_env, t.pytorch_note
  row.warnings = t.warnings
  return row
end

-- The parity of the baselines with PyTorch eager over a run's records (nil without PyTorch
-- times): the geometric mean and median of baseline / eager, and the problems far from 1.
function M.parity(records)
  local rs, far, below, above, env = {}, {}, 0, 0, nil
  for _, rec in ipairs(records) do
    local t = type(rec.timing) == "table" and rec.timing or {}
    local r = t.ratios and t.ratios.baseline_vs_pytorch
    if r then
      rs[#rs + 1] = r.ratio
      if r.ratio < 0.9 then below = below + 1 end
      if r.ratio > 1.1 then above = above + 1 end
      if r.ratio > 1.5 then far[#far + 1] = ("%d: %.2f"):format(rec.problem_id or 0, r.ratio) end
      local e = t.pytorch_env or {}
      env = env or ("PyTorch %s, cuDNN TF32 %s"):format(tostring(e.torch), e.cudnn_tf32 and "on" or "off")
    end
  end
  if #rs == 0 then return nil end
  return { n = #rs, geomean = stats.geomean(rs), median = stats.median(rs), below = below, above = above, far = far, env = env }
end

-- The --json output of a run (kreach.run.evaluate.bench's result) that took wall_s seconds.
function M.json(res, wall_s)
  local rows = {}
  for i, r in ipairs(res.records) do rows[i] = M.json_row(r) end
  return json.encode({ run_id = res.run_id, db = res.db, rows = json.array(rows), wall_s = wall_s }) .. "\n"
end

-- The lines after the table: how many problems, in what time, stored where, and the parity with
-- PyTorch eager where it was timed.
function M.footer(res, dtype, wall_s)
  local out = ("\n%d %s at %s in %.1f s (run %d in %s)\n"):format(res.planned, res.planned == 1 and "problem" or "problems",
    dtype, wall_s, res.run_id, res.db)
  local p = M.parity(res.records)
  if p then
    out = out .. ("kreach baseline / PyTorch eager (%s): geometric mean %.3f over %d problems, median %.3f; below 0.9 on %d, above 1.1 on %d, above 1.5 on %d%s\n"):format(
      p.env, p.geomean, p.n, p.median, p.below, p.above, #p.far, #p.far > 0 and (" (" .. table.concat(p.far, ", ") .. ")") or "")
  end
  return out
end

return M
