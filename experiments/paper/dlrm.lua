-- experiments/paper/dlrm.lua: the paper pipeline's DLRM-Bench tables, from the JSON that
-- experiments/dlrm/project.lua --json and experiments/dlrm/measure.lua --json write (stored in
-- experiments/paper/data as <machine>-<date>-dlrm-project.json and -dlrm-measure.json; the newest
-- name of each kind is used). Required by experiments/paper/run.lua, which passes its helpers:
--   ctx = { data = dir, output = fn(name) -> writer, md_table = fn, csv_table = fn,
--           sources_line = fn, shown = fn(path), index = list, json_files = fn(dir, suffix),
--           read_json = fn(path, field, what), fail = fn(msg), no_data = fn(name, what, why, w, c) }
local M = {}

-- newest(ctx, suffix) -> the path of the data folder's last file (by name) ending in suffix, or nil
function M.newest(ctx, suffix)
  local list = ctx.json_files(ctx.data, suffix)
  return list[#list] and (ctx.data .. "/" .. list[#list])
end

-- numbers(ctx, path, where, t, names): each of names a number in t, else the pipeline stops naming
-- the file and the entry
local function numbers(ctx, path, where, t, names)
  if type(t) ~= "table" then ctx.fail(("%s: %s is not an object"):format(path, where)) end
  for _, k in ipairs(names) do
    if type(t[k]) ~= "number" then ctx.fail(("%s: %s: no number for %s"):format(path, where, k)) end
  end
end

local function x3(v) return v and ("%.4fx"):format(v) or "-" end
local function pct(v) return v and ("%.2f%%"):format(100 * v) or "-" end
local function ms(v) return v and ("%.4f"):format(v) or "-" end

-- the projection: per workload its step's GPU and wall time, the problems' share and the
-- projected gains; per problem its kernels' share and the speedup it was given
local function projection(ctx, path)
  local w = ctx.output("dlrm-projection.md")
  local c = ctx.output("dlrm-projection.csv")
  w("# DLRM-Bench: the examples' speedups projected onto the DLRM training steps\n\n")
  if not path then
    return ctx.no_data("dlrm-projection", "DLRM-Bench's projected end-to-end gains",
      "needs `kreach experiments/dlrm/project.lua --db prof.db --results dl.db --json experiments/paper/data/<machine>-<date>-dlrm-project.json` on a GPU, with DLRM-Bench's evaluations in dl.db (experiments/paper/README.md)", w, c)
  end
  local doc = ctx.read_json(path, "projections", "experiments/dlrm/project.lua's --json")
  local rows, crows, prows = {}, {}, {}
  for i, p in ipairs(doc.projections) do
    local where = ("projections[%d]"):format(i)
    numbers(ctx, path, where, p, { "steps", "gpu_ms_per_step", "wall_ms_per_step" })
    numbers(ctx, path, where .. ".gpu", p.gpu, { "claimed", "share", "S", "gain" })
    numbers(ctx, path, where .. ".wall", p.wall, { "S", "gain" })
    if type(p.problems) ~= "table" then ctx.fail(("%s: %s: no problems list"):format(path, where)) end
    rows[#rows + 1] = { p.workload, ("%d"):format(p.steps), ms(p.gpu_ms_per_step), ("%.3f"):format(p.wall_ms_per_step), pct(p.gpu.claimed),
                        pct(p.gpu.share), ("%s (%s saved)"):format(x3(p.gpu.S), pct(p.gpu.gain)),
                        ("%s (%s saved)"):format(x3(p.wall.S), pct(p.wall.gain)) }
    crows[#crows + 1] = { p.workload, math.tointeger(p.steps) or p.steps, p.gpu_ms_per_step, p.wall_ms_per_step, p.gpu.claimed, p.gpu.share,
                          p.gpu.S, p.gpu.gain, p.wall.S, p.wall.gain }
    for j, pr in ipairs(p.problems) do
      numbers(ctx, path, ("%s.problems[%d]"):format(where, j), pr, { "kernels", "ms_per_step", "frac_gpu", "frac_wall" })
      local from = pr.speedup_source or "no correct candidate: 1.0x"
      prows[#prows + 1] = { p.workload, pr.name, ("%g"):format(pr.kernels), ms(pr.ms_per_step), pct(pr.frac_gpu), pct(pr.frac_wall),
                            pr.speedup and ("%.3fx"):format(pr.speedup) or "-", from }
    end
  end
  ctx.md_table(w, { "workload", "measured steps", "GPU ms/step", "wall ms/step", "problems' kernels, share of GPU time",
                    "those with a speedup", "projected GPU time", "projected wall time" }, rows,
               { nil, true, true, true, true, true, true, true })
  w("\nPer problem: its kernels' share of a step (by position, experiments/dlrm/project.lua's map) and the speedup given to them ",
    "(the problem's fastest correct f32 example against PyTorch eager, with its evaluation and 95% interval):\n\n")
  ctx.md_table(w, { "workload", "problem", "kernels/step", "ms/step", "GPU %", "wall %", "speedup", "speedup from" }, prows,
               { nil, nil, true, true, true, true, true })
  w("\nAmdahl's law, S = 1 / ((1 - sum f) + sum f / s), over GPU time and over the untraced steps' wall time ",
    "(docs/dlrm-bench.md, \"The projection\"). A problem without a correct candidate is given 1.0x.\n")
  w("\n", ctx.sources_line{ ctx.shown(path) }, "\n")
  ctx.csv_table(c, { "workload", "measured_steps", "gpu_ms_per_step", "wall_ms_per_step", "problems_share_gpu",
                     "share_with_speedup_gpu", "projected_gpu_speedup", "gpu_saved", "projected_wall_speedup", "wall_saved" }, crows)
  c("# ", ctx.sources_line{ ctx.shown(path) }, "\n")
  ctx.index[#ctx.index + 1] = { "dlrm-projection.md, dlrm-projection.csv", "DLRM-Bench's projected end-to-end gains", ctx.shown(path) }
end

-- the measurement: the Lua step with and without each candidate, against the projection
local function measured(ctx, path)
  local w = ctx.output("dlrm-measured.md")
  local c = ctx.output("dlrm-measured.csv")
  w("# DLRM-Bench: end-to-end gains measured in kreach's DLRM step, against the projection\n\n")
  if not path then
    return ctx.no_data("dlrm-measured", "DLRM-Bench's measured end-to-end gains",
      "needs `kreach experiments/dlrm/measure.lua --results dl.db --json experiments/paper/data/<machine>-<date>-dlrm-measure.json` on a GPU (experiments/paper/README.md)", w, c)
  end
  local doc = ctx.read_json(path, "results", "experiments/dlrm/measure.lua's --json")
  local srows, rows, crows = {}, {}, {}
  for i, r in ipairs(doc.results) do
    local where = ("results[%d]"):format(i)
    numbers(ctx, path, where, r, { "step_ms" })
    numbers(ctx, path, where .. ".step_ci", r.step_ci, { 1, 2 })
    if type(r.subs) ~= "table" then ctx.fail(("%s: %s: no subs list"):format(path, where)) end
    local cc = r.cross_check or {}
    srows[#srows + 1] = { r.config, ("%.4f [%.4f, %.4f]"):format(r.step_ms, r.step_ci[1], r.step_ci[2]),
                          r.step_graph_ms and ("%.4f"):format(r.step_graph_ms) or "-",
                          cc.torch_step_ms and ("%.4f"):format(cc.torch_step_ms) or "-",
                          cc.max_rel_diff and ("%.1e"):format(cc.max_rel_diff) or "-" }
    for j, s in ipairs(r.subs) do
      local at = ("%s.subs[%d]"):format(where, j)
      numbers(ctx, path, at, s, { "problem" })
      if s.measured ~= nil then
        numbers(ctx, path, at, s, { "measured", "op_speedup", "share", "projected", "measured_lo", "measured_hi" })
        if type(s.candidate) ~= "string" then ctx.fail(("%s: %s: no candidate"):format(path, at)) end
        local inside = s.projected >= s.measured_lo and s.projected <= s.measured_hi
        rows[#rows + 1] = { r.config, ("%d"):format(s.problem), s.candidate:match("[^/]*$"), ("%.3fx"):format(s.op_speedup), pct(s.share),
                            ("%.4f"):format(s.projected), ("%.4f [%.4f, %.4f]"):format(s.measured, s.measured_lo, s.measured_hi),
                            inside and "yes" or "no" }
        crows[#crows + 1] = { r.config, math.tointeger(s.problem) or s.problem, s.candidate, s.op_speedup, s.share, s.projected, s.measured,
                              s.measured_lo, s.measured_hi }
      else
        if type(s.skip) ~= "string" then ctx.fail(("%s: %s: neither measured nor a skip reason"):format(path, at)) end
        rows[#rows + 1] = { r.config, ("%d"):format(s.problem), "-", "-", "-", "-", "not measured: " .. (s.skip:gsub("in /tmp/%S+", "in the database")), "-" }
      end
    end
  end
  ctx.md_table(w, { "config", "Lua step ms [95% CI]", "as a CUDA graph", "PyTorch step ms", "losses: worst relative difference" },
               srows, { nil, true, true, true, true })
  w("\n")
  ctx.md_table(w, { "config", "problem", "candidate", "operator speedup at the step's shapes", "share of the step",
                    "projected", "measured [95% CI]", "projection inside the interval" }, rows, { nil, true, nil, true, true, true, true })
  w("\nThe step is experiments/dlrm/step.lua (kreach's operators), cross-checked against PyTorch's over 10 steps; ",
    "a candidate stands in only where its problem's shapes are the step's and `kreach check` finds it correct there ",
    "(docs/dlrm-bench.md, \"The measurement\").\n")
  w("\n", ctx.sources_line{ ctx.shown(path) }, "\n")
  ctx.csv_table(c, { "config", "problem", "candidate", "op_speedup", "share", "projected", "measured", "measured_lo", "measured_hi" }, crows)
  c("# ", ctx.sources_line{ ctx.shown(path) }, "\n")
  ctx.index[#ctx.index + 1] = { "dlrm-measured.md, dlrm-measured.csv", "DLRM-Bench's measured end-to-end gains", ctx.shown(path) }
end

function M.tables(ctx)
  projection(ctx, M.newest(ctx, "-dlrm-project.json"))
  measured(ctx, M.newest(ctx, "-dlrm-measure.json"))
end

return M
