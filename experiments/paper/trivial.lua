-- experiments/paper/trivial.lua: the paper pipeline's table of trivial outputs, from what
-- `kreach scan-trivial <suite> --dtype D --json` prints (stored in experiments/paper/data as
-- <machine>-<date>-trivial-<dtype>.json; the newest name of each dtype is used). Required by
-- experiments/paper/run.lua, with the same ctx as experiments/paper/dlrm.lua.
local M = {}

-- the scan's candidates, in the order docs/correctness.md gives them
M.CANDIDATES = { { "zeros", "zeros" }, { "constant", "constant" }, { "copy", "copy of the first input" },
                 { "partial", "0.3% written" }, { "first_row", "first row only" } }

-- files(ctx) -> { dtype = path } of the newest trivial scan of each dtype, and the dtypes in order
function M.files(ctx)
  local by = {}
  for _, f in ipairs(ctx.json_files(ctx.data, ".json")) do -- sorted: the last of a dtype is the newest
    local dt = f:match("%-trivial%-(%w+)%.json$")
    if dt then by[dt] = ctx.data .. "/" .. f end
  end
  local dtypes = {}
  for dt in pairs(by) do dtypes[#dtypes + 1] = dt end
  table.sort(dtypes, function(a, b) return a > b end) -- f32, f16, bf16
  return by, dtypes
end

-- the problem ids of a list (an empty object when there are none), as text
local function id_texts(l)
  local t = {}
  for i, v in ipairs(type(l) == "table" and l or {}) do t[i] = ("%d"):format(v) end
  return t
end

local function ids(l)
  local t = id_texts(l)
  if #t == 0 then return "0" end
  return ("%d: %s"):format(#t, table.concat(t, ", "))
end

function M.tables(ctx)
  local w = ctx.output("trivial-scan.md")
  local c = ctx.output("trivial-scan.csv")
  w("# Trivial outputs that pass: KernelBench's rule against kreach's\n\n")
  local by, dtypes = M.files(ctx)
  if #dtypes == 0 then
    return ctx.no_data("trivial-scan", "the scan of trivial outputs",
      "needs `kreach scan-trivial kernelbench-l1 --dtype D --json > experiments/paper/data/<machine>-<date>-trivial-D.json` on a GPU", w, c)
  end
  local docs, header, sources = {}, { "candidate" }, {}
  for _, dt in ipairs(dtypes) do
    local d = ctx.read_json(by[dt], "passes", "kreach scan-trivial --json")
    if type(d.problems) ~= "table" or type(d.kernelbench_tol) ~= "number" then
      ctx.fail(("%s: not kreach scan-trivial --json (no \"problems\" list or \"kernelbench_tol\")"):format(by[dt]))
    end
    for name, p in pairs(d.passes) do
      if type(p) ~= "table" then ctx.fail(("%s: passes.%s is not an object"):format(by[dt], tostring(name))) end
      for _, rule in ipairs({ "kb", "kb01", "kr" }) do
        for i, v in ipairs(type(p[rule]) == "table" and p[rule] or {}) do
          if math.type(v) == nil then ctx.fail(("%s: passes.%s.%s[%d] is not a problem id"):format(by[dt], name, rule, i)) end
        end
      end
    end
    docs[dt] = d
    header[#header + 1] = ("KernelBench, %s (tol %g)"):format(dt, d.kernelbench_tol)
    header[#header + 1] = ("KernelBench v0.1, %s (tol 1e-2)"):format(dt)
    header[#header + 1] = ("kreach, %s"):format(dt)
    sources[#sources + 1] = ctx.shown(by[dt])
  end
  local rows, crows = {}, {}
  for _, cand in ipairs(M.CANDIDATES) do
    local row = { cand[2] }
    for _, dt in ipairs(dtypes) do
      local p = docs[dt].passes[cand[1]] or {}
      row[#row + 1] = ids(p.kb)
      row[#row + 1] = ids(p.kb01)
      row[#row + 1] = ids(p.kr)
      local kb, kb01, kr = id_texts(p.kb), id_texts(p.kb01), id_texts(p.kr)
      crows[#crows + 1] = { cand[1], dt, #docs[dt].problems, #kb, table.concat(kb, " "), #kb01, table.concat(kb01, " "),
                            #kr, table.concat(kr, " ") }
    end
    rows[#rows + 1] = row
  end
  local counts = {}
  for _, dt in ipairs(dtypes) do counts[#counts + 1] = ("%d problems at %s"):format(#docs[dt].problems, dt) end
  w(("The five built-in trivial candidates (kreach.judge.trivial) on %s; each cell: the number of problems passed, and their ids.\n\n")
    :format(table.concat(counts, " and ")))
  ctx.md_table(w, header, rows)
  w("\nKernelBench's rule: torch.allclose at its tolerance for the dtype, on its inputs; v0.1's: 1e-2 at every dtype. ",
    "kreach's: its policy over every trial, with unwritten elements poisoned (docs/correctness.md, \"kreach scan-trivial\").\n")
  w("\n", ctx.sources_line(sources), "\n")
  ctx.csv_table(c, { "candidate", "dtype", "problems", "kernelbench", "kernelbench_ids", "kernelbench_v01", "kernelbench_v01_ids",
                     "kreach", "kreach_ids" }, crows)
  c("# ", ctx.sources_line(sources), "\n")
  ctx.index[#ctx.index + 1] = { "trivial-scan.md, trivial-scan.csv", "the scan of trivial outputs", table.concat(sources, ", ") }
end

return M
