-- kreach.problem.export: writes a problem as a KernelBench-format Python file (class Model,
-- get_inputs, get_init_inputs) with kreach's semantics: the sizes and scalars as module-level
-- constants, each input drawn from its distribution exactly as kreach draws it (in float32,
-- then cast to the problem's dtype), the problem's Model, and its init arguments.
local M = {}

local TORCH_DTYPE = { f32 = "torch.float32", bf16 = "torch.bfloat16", f16 = "torch.float16",
  f64 = "torch.float64", i64 = "torch.int64", i32 = "torch.int32", i16 = "torch.int16",
  i8 = "torch.int8", u8 = "torch.uint8", bool = "torch.bool" }

local function py_num(v)
  if math.type(v) == "integer" then return tostring(v) end
  if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return ("%.1f"):format(v) end
  return ("%.17g"):format(v)
end

-- The Python expression of a shape: size names where the problem used names.
local function py_shape(spec_shape, resolved)
  local parts = {}
  if type(spec_shape) == "table" then
    for i, s in ipairs(spec_shape) do parts[i] = type(s) == "string" and s or tostring(resolved[i]) end
  else
    for i, s in ipairs(resolved) do parts[i] = tostring(s) end
  end
  if #parts == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end

local function draw_expr(a, shape, problem_dtype)
  local d = a.dist
  local e
  if d.gen == "uniform" then
    e = ("torch.rand(%s)"):format(shape)
    if d.args[1] ~= 0 or d.args[2] ~= 1 then
      e = ("(%s * %s + %s)"):format(e, py_num(d.args[2] - d.args[1]), py_num(d.args[1]))
    end
  elseif d.gen == "normal" then
    e = ("(torch.randn(%s) * %s + %s)"):format(shape, py_num(d.args[2]), py_num(d.args[1]))
  elseif d.gen == "randint" then
    e = ("torch.randint(%s, %s, %s)"):format(py_num(d.args[1]), py_num(d.args[2]), shape)
  elseif d.gen == "bool" then
    e = ("torch.randint(0, 2, %s).bool()"):format(shape)
  elseif d.gen == "sign" then
    e = ("(torch.randint(0, 2, %s).float() * 2 - 1)"):format(shape)
  elseif d.gen == "bags" then
    -- kreach.problem.bag_offsets: the lengths lo..hi in turn, shuffled, as CSR offsets from 0
    local lo, hi = math.tointeger(d.args[1]), math.tointeger(d.args[2])
    e = ("(lambda L: torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(L[torch.randperm(L.numel())], 0)]))(torch.arange(%d) %% %d + %d)"):format(
      a.shape[1] - 1, hi - lo + 1, lo)
  elseif d.gen == "host" then
    if not d.python then
      error(("input '%s': its host distribution '%s' has no Python expression to export"):format(a.name, d.text), 0)
    end
    e = d.python
  elseif d.gen == "jagged" then
    -- kreach.problem.jagged_lengths: row t the lengths 0..2 h_t in turn, shuffled
    local rows = {}
    for _, h in ipairs(d.args) do
      rows[#rows + 1] = ("(torch.arange(%d) %% %d)[torch.randperm(%d)]"):format(a.shape[2], 2 * math.tointeger(h) + 1, a.shape[2])
    end
    e = ("torch.stack([%s])"):format(table.concat(rows, ", "))
  elseif d.gen == "unique" then
    -- kreach.ops.embedding's unique_rows: a run of (start + j) * 2654435761 mod n, no row twice
    local n = math.tointeger(d.args[1])
    e = ("(((torch.arange(%d) + torch.randint(0, %d, ())) %% %d * 2654435761) %% %d)"):format(a.numel, n, n, n)
  elseif d.gen == "zipf" then
    -- kreach.ops.embedding's zipf_rows (experiments/workloads/dlrm.py's make_indices)
    local n, alpha = math.tointeger(d.args[1]), d.args[2]
    local x = math.abs(alpha - 1) < 1e-9 and ("torch.exp(u * math.log(%d + 1.0))"):format(n)
      or ("(1.0 + u * ((%d + 1.0) ** %s - 1.0)) ** (1.0 / %s)"):format(n, py_num(1 - alpha), py_num(1 - alpha))
    e = ("(lambda u: ((%s).floor().long() - 1).clamp(0, %d) * 2654435761 %% %d)(torch.rand(%s, dtype=torch.float64))"):format(
      x, n - 1, n, shape)
  end
  for _, t in ipairs(d.transforms) do
    if t == "symmetric" then e = ("((lambda m: (m + m.T) / 2)(%s))"):format(e)
    elseif t == "triu" then e = ("torch.triu(%s)"):format(e)
    elseif t == "tril" then e = ("torch.tril(%s)"):format(e)
    elseif t == "scale_rand" then e = ("(%s * torch.rand(()))"):format(e)
    elseif t == "softmax" then e = ("%s.softmax(dim=-1)"):format(e)
    end
  end
  local dt = a.dtype
  if (d.gen == "randint" and dt ~= "i64") or (d.gen ~= "randint" and d.gen ~= "bool" and d.gen ~= "zipf" and d.gen ~= "bags" and d.gen ~= "unique" and d.gen ~= "jagged" and d.gen ~= "host" and dt ~= "f32") then
    e = ("%s.to(%s)"):format(e, TORCH_DTYPE[dt])
  end
  return e
end

-- Returns the Python source for an instance of a problem.
function M.kernelbench(inst)
  local p = inst.problem
  local def = p.def
  local out = {}
  local function w(s) out[#out + 1] = s end
  w(("# %s: exported by kreach from %s\n"):format(p.name, p.path or "?"))
  w(("# %s\n"):format(p.description))
  w(("# dtype %s. Inputs are drawn as kreach draws them: in float32, then cast.\n"):format(inst.dtype))
  w("import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n")
  local names = {}
  for k in pairs(inst.sizes) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do w(("%s = %d\n"):format(k, inst.sizes[k])) end
  for _, a in ipairs(inst.args) do
    if a.kind == "scalar" then w(("%s = %s\n"):format(a.name, py_num(a.value))) end
  end
  w("\n\n")
  w(def.torch.model)
  if not def.torch.model:match("\n$") then w("\n") end
  w("\n\ndef get_inputs():\n")
  local ins = {}
  for i, a in ipairs(inst.args) do
    if a.kind == "input" then
      w(("    %s = %s\n"):format(a.name, draw_expr(a, py_shape(def.args[i].shape, a.shape), inst.dtype)))
      ins[#ins + 1] = a.name
    end
  end
  w(("    return %s\n"):format(def.torch.inputs or ("[" .. table.concat(ins, ", ") .. "]")))
  w("\n\ndef get_init_inputs():\n")
  w(("    return %s\n"):format(def.torch.init or "[]"))
  return table.concat(out)
end

return M
