-- The model-scale sweep's pure parts (issue 36, item 8), apart from profiling them (run.lua):
-- the run list (every model size in each mode at one batch and one sequence length), a
-- failed run's reason read from its output, and a run's row of the summary JSON.
local M = {}

-- The sizes each family's program takes (experiments/workloads/gpt2.py --size, llama.py --size),
-- in order of parameters.
M.FAMILIES = {
  gpt2 = { program = "experiments/workloads/gpt2.py", sizes = { "small", "medium", "large", "xl" } },
  llama = { program = "experiments/workloads/llama.py", sizes = { "1b", "3b" } },
}
M.MODES = { "infer", "train" }
-- The precision of each mode, as list.json's runs: inference with the model in bf16, training
-- under autocast bf16 (fp32 weights, AdamW).
M.PRECISION = { infer = "bf16", train = "autocast-bf16" }
M.DEFAULTS = { batch = 4, seq = 1024, warmup = 2, steps = 3,
               gpt2 = { "small", "medium", "large", "xl" }, llama = { "1b", "3b" }, modes = { "infer", "train" } }

local function index(list) local t = {}; for i, v in ipairs(list) do t[v] = i end; return t end

-- runs(opts) -> the run list: { name, family, size, mode, precision, argv (the program's words
-- after python: the script, a path from the repository root, and its options) }, GPT-2 sizes
-- first, each size in every mode. opts: batch, seq, warmup, steps (numbers), gpt2, llama, modes
-- (lists; an empty list leaves that family out). Raises on an unknown size or mode.
function M.runs(opts)
  opts = opts or {}
  local o = {}
  for k, v in pairs(M.DEFAULTS) do o[k] = opts[k] == nil and v or opts[k] end
  for _, k in ipairs({ "batch", "seq", "warmup", "steps" }) do
    if math.type(o[k]) ~= "integer" or o[k] < (k == "warmup" and 0 or 1) then
      error(("%s must be an integer >= %d, not %s"):format(k, k == "warmup" and 0 or 1, tostring(o[k])), 2)
    end
  end
  local modes = index(M.MODES)
  for _, m in ipairs(o.modes) do
    if not modes[m] then error(("unknown mode '%s' (modes: %s)"):format(m, table.concat(M.MODES, ", ")), 2) end
  end
  local out = {}
  for _, fam in ipairs({ "gpt2", "llama" }) do
    local known = index(M.FAMILIES[fam].sizes)
    for _, size in ipairs(o[fam]) do
      if not known[size] then
        error(("unknown %s size '%s' (sizes: %s)"):format(fam, size, table.concat(M.FAMILIES[fam].sizes, ", ")), 2)
      end
      for _, mode in ipairs(o.modes) do
        out[#out + 1] = {
          name = ("scale-%s-%s-%s"):format(fam, size, mode), family = fam, size = size, mode = mode,
          precision = M.PRECISION[mode], batch = o.batch, seq = o.seq, warmup = o.warmup, steps = o.steps,
          argv = { M.FAMILIES[fam].program, "--size", size, "--mode", mode, "--precision", M.PRECISION[mode],
                   "--batch", tostring(o.batch), "--seq", tostring(o.seq),
                   "--warmup", tostring(o.warmup), "--steps", tostring(o.steps) },
        }
      end
    end
  end
  return out
end

-- failure_reason(output) -> one line saying why a run failed, from the program's output
-- (standard output, then standard error): "out of memory: <PyTorch's line>" where CUDA ran out
-- of memory, else the last line that names a Python exception, else the output's last line.
function M.failure_reason(out)
  out = out or ""
  local oom, exc, last
  for l in out:gmatch("[^\n]+") do
    if l:find("%S") then last = l end
    if l:find("OutOfMemoryError", 1, true) or l:find("out of memory", 1, true) then oom = oom or l end
    if l:match("^[%w_%.]*Error[:%s]") or l:match("^[%w_%.]*Exception[:%s]") then exc = l end
  end
  local function trim(s) s = s:gsub("^%s+", ""):gsub("%s+$", ""); return #s > 300 and s:sub(1, 297) .. "..." or s end
  if oom then return "out of memory: " .. trim(oom) end
  if exc then return trim(exc) end
  return last and trim(last) or "no output"
end

local function gib(bytes) return bytes and math.floor(bytes / 2 ^ 30 * 100 + 0.5) / 100 or nil end

-- row(run, figures, summary, knobs) -> the run's row of the summary JSON. figures: the profile's
-- (runs.figures), nil for a failed run; summary and knobs: the program's `summary` and `knobs`
-- lines (runs.program_line), nil where it printed none.
function M.row(run, figures, summary, knobs)
  knobs = knobs or (figures and figures.knobs) or {}
  local r = {
    name = run.name, family = run.family, size = run.size, mode = run.mode, precision = run.precision,
    batch = run.batch, seq = run.seq, warmup = run.warmup, steps = run.steps,
    model = knobs.model, params = knobs.param_count,
    n_layer = knobs.n_layer, width = knobs.n_embd or knobs.hidden,
    torch = knobs.torch_version,
  }
  if summary then
    r.median_step_ms = summary.median_step_ms
    r.peak_mem_allocated_gib = gib(summary.peak_mem_allocated_bytes)
  end
  if figures then
    r.status = "ok"
    for _, k in ipairs({ "kernels", "dropped", "busy", "addr_gpu", "addr_wall", "vendor_gpu", "unclassified_gpu",
                         "families", "top", "gpu_s" }) do r[k] = figures[k] end
  end
  return r
end

return M
