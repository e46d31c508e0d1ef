-- kreach.generate.prompt: the prompt `kreach generate` sends for a problem (issue 19), built from
-- the problem alone and stored verbatim with each request. Two formats:
--   lua     kreach's candidate (docs/candidates.md): a Lua file with CUDA C++ source and forward;
--   python  KernelBench's: a Python file defining ModelNew, as KernelBench's own prompts ask.
-- Its parts: the task; the problem's description and PyTorch reference (the KernelBench export:
-- Model, get_inputs, get_init_inputs); the arguments with names, shapes, dtypes and
-- distributions, then the outputs; the contract, condensed; one worked example from another
-- problem; the device's facts; the answer's form.
local export = require "kreach.problem.export"
local kinds = require "kreach.kinds"
local problem = require "kreach.problem"

local M = {}

M.SYSTEM = "You are an expert CUDA performance engineer. You write correct, fast GPU kernels."

-- the candidate contract, condensed from docs/candidates.md
local CONTRACT = [[
A candidate is a Lua file that returns a table:

    return {
      source = [==[ CUDA C++: extern "C" __global__ kernels (or non-template C++ kernels) ]==],
      options = { "--use_fast_math" },  -- optional NVRTC options
      forward = function(k, <inputs...>, <parameters...>, <scalars...>, <outputs...>)
        k.<kernel>{ grid = G, block = B, shared = S }(<arguments...>)
      end,
    }

- forward receives the problem's arguments in the order listed below, then its outputs, which
  are allocated for you. It launches your kernels through k (k.name{grid =, block =, shared =}(...),
  grid and block numbers or {x, y, z}); k:scratch(shape, dtype) gives temporary device memory.
  It returns nothing and must write every element of every output.
- Tensors reach forward as handles: t.shape, t.dtype, t:numel(), t:size(i), t:dim(). Pass them
  to kernels as pointers (float * for f32, __nv_bfloat16 * for bf16, __half * for f16, long long *
  for i64); integers as long long or int, numbers as float or double.
- forward runs in a sandbox: no io, os, require, print; only math, string, table and the
  arguments. The source is compiled by NVRTC (no host code, no #include outside the CUDA
  toolkit's headers).
- Correctness is judged against an fp64 reference on several input distributions, with
  unwritten outputs detected; speed against kreach's own baseline and PyTorch eager.]]

-- worked examples, each for another problem than the one asked
local EXAMPLES = {
  { id = 19, name = "19_ReLU (y = max(x, 0), x: f32 [batch_size, dim], y: f32 [batch_size, dim])", code = [[
return {
  source = [==[
extern "C" __global__ void relu4(const float4 *__restrict__ x, float4 *__restrict__ y, long long n4) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v = x[i];
    v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f);
    y[i] = v;
  }
}
extern "C" __global__ void relu_tail(const float *x, float *y, long long from, long long n) {
  long long i = from + blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}
]==],
  forward = function(k, x, y)
    local n = x:numel()
    local n4 = n // 4
    if n4 > 0 then k.relu4{ grid = 132 * 16, block = 256 }(x, y, n4) end
    if n % 4 ~= 0 then k.relu_tail{ grid = 1, block = 32 }(x, y, n4 * 4, n) end
  end,
}
]] },
  { id = 5, name = "5_Matrix_scalar_multiplication (C = A * s, A: f32 [M, N], s: a number, C: f32 [M, N])", code = [[
return {
  source = [==[
extern "C" __global__ void scale(const float *__restrict__ a, float s, float *__restrict__ c, long long n) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] * s;
}
]==],
  forward = function(k, a, s, c)
    k.scale{ grid = 132 * 8, block = 256 }(a, s, c, a:numel())
  end,
}
]] },
}

local PY_EXAMPLE = [[
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="relu_ext", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                  cuda_sources=source, functions=["relu"])

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu(x)
]]

local function dist_text(a)
  if a.kind ~= "input" then return nil end
  local d = a.dist
  if not d then return nil end
  if d.text then return d.text end
  local parts = { d.gen and (("%s(%s)"):format(d.gen, table.concat((function()
    local t = {}
    for i, v in ipairs(d.args or {}) do t[i] = tostring(v) end
    return t
  end)(), ", "))) or "?" }
  for _, t in ipairs(d.transforms or {}) do parts[#parts + 1] = t end
  return table.concat(parts, " | ")
end

local function shape_text(a)
  if a.kind == "scalar" then return ("= %s"):format(tostring(a.value)) end
  return "[" .. table.concat(a.shape, ", ") .. "]"
end

-- args_text(inst) -> the arguments, one a line, then the outputs
function M.args_text(inst)
  local lines = {}
  for _, a in ipairs(inst.args) do
    if a.kind ~= "output" then
      local d = dist_text(a)
      local init = a.kind == "param" and (", initialised " .. problem.init_rule(a)) or ""
      local dom = a.kind == "input" and a.domain and (" (domain: %s)"):format(a.domain) or ""
      if a.kind == "scalar" then
        lines[#lines + 1] = ("- scalar %s: %s %s"):format(a.name, a.type or "number", shape_text(a))
      else
        lines[#lines + 1] = ("- %s %s: %s %s%s%s%s"):format(a.kind, a.name, a.dtype or "", shape_text(a),
          d and (", values " .. d) or "", dom, init)
      end
    end
  end
  lines[#lines + 1] = "Outputs (write every element):"
  for _, a in ipairs(inst.args) do
    if a.kind == "output" then lines[#lines + 1] = ("- output %s: %s %s"):format(a.name, a.dtype, shape_text(a)) end
  end
  return table.concat(lines, "\n")
end

-- device_text(dev) -> the device's facts (kreach info's), or a note that none was known
function M.device_text(dev)
  if not dev then return "The target GPU was not known when this prompt was built: write for a recent NVIDIA GPU (sm_90)." end
  local bw = dev.memory_clock_khz and dev.memory_bus_bits
    and (2 * dev.memory_clock_khz * 1e3 * dev.memory_bus_bits / 8 / 1e12) or nil
  return ("The target GPU: %s, %s, %d SMs, %d KiB shared memory per block (opt-in), %d KiB per SM, %.0f MiB L2, %.0f GiB memory%s."):format(
    tostring(dev.name), tostring(dev.arch), dev.sm_count or 0, (dev.shared_per_block_optin_bytes or 0) // 1024,
    (dev.shared_per_sm_bytes or 0) // 1024, (dev.l2_bytes or 0) / 2 ^ 20, (dev.memory_bytes or 0) / 2 ^ 30,
    bw and (", about %.1f TB/s of memory bandwidth (from the clock and the bus)"):format(bw) or "")
end

-- What stands for the device's facts in the prompt's portable form (build's `portable`): the
-- text a generation's cache key is made over, the same on every machine.
M.DEVICE_PLACEHOLDER = "<the device's facts: this machine's, left out of the cache key>"

-- build(inst, {format = "lua" | "python", device = kreach.device()'s table or nil}) -> { system
-- =, user =, device =, portable = }: the prompt for a problem instance; `device` is the "## The
-- device" section's text (the one machine-specific part), `portable` the user message with
-- DEVICE_PLACEHOLDER in its place (what kreach.generate.session keys the stored reply by, so
-- that a rerun on another machine, or one without a GPU, answers from the database)
function M.build(inst, o)
  o = o or {}
  local format = o.format or "lua"
  if not kinds.set(kinds.CANDIDATE_KINDS)[format] then
    error(("prompt: unknown format '%s' (%s)"):format(tostring(format), table.concat(kinds.CANDIDATE_KINDS, ", ")), 2)
  end
  local p = inst.problem
  local parts = {}
  local function add(s) parts[#parts + 1] = s end
  if format == "lua" then
    add(("Write a fast, correct GPU implementation of the problem %s as a kreach candidate."):format(p.name))
  else
    add(("Write a fast, correct GPU implementation of the problem %s as a KernelBench candidate: a Python file defining ModelNew, a drop-in replacement for Model with custom CUDA kernels (torch.utils.cpp_extension.load_inline) or Triton."):format(p.name))
  end
  add("")
  add("## The problem")
  add(p.def.description or p.name)
  add(("The dtype is %s. The PyTorch reference (KernelBench's format):"):format(inst.dtype))
  add("```python")
  add((export.kernelbench(inst):gsub("\n+$", "")))
  add("```")
  add("")
  add("## Its arguments, in order")
  add(M.args_text(inst))
  add("")
  if format == "lua" then
    add("## The candidate contract")
    add(CONTRACT)
    add("")
    local ex = EXAMPLES[1].id ~= p.id and EXAMPLES[1] or EXAMPLES[2]
    add(("## A worked example, for another problem: %s"):format(ex.name))
    add("```lua")
    add((ex.code:gsub("\n+$", "")))
    add("```")
  else
    add("## A worked example, for another problem (ReLU)")
    add("```python")
    add((PY_EXAMPLE:gsub("\n+$", "")))
    add("```")
  end
  add("")
  add("## The device")
  local dev_text = M.device_text(o.device)
  add(dev_text)
  local dev_at = #parts
  add("")
  add("## Your answer")
  if format == "lua" then
    add("Reply with the whole candidate file in one ```lua fenced block. The last Lua block of your reply that loads as a candidate is taken.")
  else
    add("Reply with the whole Python file in one ```python fenced block, defining ModelNew. The last Python block defining ModelNew is taken.")
  end
  local user = table.concat(parts, "\n") .. "\n"
  parts[dev_at] = M.DEVICE_PLACEHOLDER
  return { system = M.SYSTEM, user = user, device = dev_text, portable = table.concat(parts, "\n") .. "\n" }
end

-- feedback(verdict, o) -> the next turn's message (issue 19's turns), from the last candidate's
-- outcome: { verdict =, reason =, detail =, log = (a compile log), speedup =, sol_fraction = }
function M.feedback(r)
  local lines = {}
  if r.verdict == "correct" then
    lines[#lines + 1] = ("Your candidate is correct. Its speedup over the baseline is %s%s. Make it faster; keep it correct."):format(
      r.speedup and ("%.3fx"):format(r.speedup) or "not measured",
      r.sol_fraction and (", at %.0f%% of the speed-of-light bound"):format(100 * r.sol_fraction) or "")
  else
    lines[#lines + 1] = ("Your candidate was judged %s%s."):format(tostring(r.verdict), r.reason and (" (" .. r.reason .. ")") or "")
    if r.detail then lines[#lines + 1] = tostring(r.detail) end
    if r.log then lines[#lines + 1] = "The compiler said:\n```\n" .. tostring(r.log) .. "\n```" end
    lines[#lines + 1] = "Fix it and reply with the whole corrected file."
  end
  return table.concat(lines, "\n")
end

return M
