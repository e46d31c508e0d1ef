-- Every size-selected variant of the operators checked against PyTorch (issue 34): the host
-- values check (tests/lua/host_values_spec.lua) runs each problem at small sizes, where a kernel
-- chosen by size (a split reduction, a block path, an unrolled loop, a vectorised body's tail, a
-- grid-stride loop past a cap) is never run, and a bug there would make the baseline and the
-- oracle wrong together at the shipped size. Here each case of tests/lua/values.lua's
-- VARIANT_CASES runs a problem at sizes chosen to reach some variants, on the host device
-- (KREACH_DEVICE=host), its baseline and oracle against its PyTorch model in float64 on the CPU
-- (kreach.judge.oracle.torch_check, values.judge); the variants its calls take are recorded
-- (kreach.ops.record), and
--   - a case fails when it does not take the variants it names (`reaches`);
--   - the last test fails when a variant that a family declares (kreach.ops.variants) is
--     taken by no case at f32 or f64 (where the baseline's thresholds are tight and the f64
--     oracle's are 1e-9; bf16's are loose enough to pass an element off), unless it is
--     declared as selected by alignment alone or unreachable (conv's tensor-core kernels run
--     at 16-bit dtypes only, so bf16 counts for them);
--   - a call that takes a variant its family does not declare raises (K.variant).
-- KREACH_VARIANTS_ONLY=<lua pattern> runs the cases whose id or one of whose variants matches
-- (then the last test is pending). Needs python3-torch (/usr/bin/python3; KREACH_PYTHON).
local problem = require "kreach.problem"
local oracle = require "kreach.judge.oracle"
local ops = require "kreach.ops"
local support = require "support"
local values = require "values"

-- PyTorch 1.13 (Debian's) has no F.scaled_dot_product_attention: a python3 that defines it as
-- PyTorch's math path does (softmax(Q K^T scale) V) before it runs the worker's `-c` source
local SDPA_SHIM = [[
import math, sys
import torch
import torch.nn.functional as F
if not hasattr(F, "scaled_dot_product_attention"):
    def _sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        assert attn_mask is None and dropout_p == 0.0 and not is_causal
        s = scale if scale is not None else 1.0 / math.sqrt(q.size(-1))
        return torch.softmax(q @ k.transpose(-2, -1) * s, dim=-1) @ v
    F.scaled_dot_product_attention = _sdpa
args = sys.argv[1:]
while args and args[0] != "-c":
    args.pop(0)
src = args[1]
sys.argv = ["-c"] + args[2:]
exec(compile(src, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
]]

local function show(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = ("%s = %s"):format(k, tostring(t[k])) end
  return table.concat(parts, ", ")
end

describe("every size-selected variant of the operators against PyTorch on the CPU", function()
  local PYTHON = support.host_python_or_fail(it)
  if not PYTHON then return end
  local tmpdir, cleanup = support.tmpdirs()
  teardown(cleanup)

  local only = os.getenv("KREACH_VARIANTS_ONLY")
  local seen = {}   -- "family/name" -> the first case that took it at f32 or f64
  local loose = {}  -- "family/name" -> a case that took it at bf16 alone
  local SIXTEEN_ONLY = "^conv/mma%."
  local shim

  for _, c in ipairs(values.VARIANT_CASES) do
    local wanted = not only or c.id:match(only)
    for _, v in ipairs(c.reaches) do wanted = wanted or v:match(only) end
    if wanted then
      local limits = c.limits and (" with " .. show((function()
        local flat = {}
        for fam, t in pairs(c.limits) do for k, v in pairs(t) do flat[fam .. "." .. k] = v end end
        return flat
      end)())) or ""
      it(("%s: %s at %s%s"):format(c.id, c.problem, show(c.sizes), limits), function()
        local p = problem.load(problem.resolve(c.problem))
        local python = PYTHON
        if c.python == "sdpa" then
          if not shim then
            shim = tmpdir() .. "/python3-sdpa"
            support.spit(shim, ("#!%s\n%s"):format(PYTHON, SDPA_SHIM))
            assert(os.execute("chmod +x " .. shim))
          end
          python = shim
        end
        local rec = {}
        local run = values.RUNS[1]
        local prev = ops.record(rec)
        local ok, err = pcall(function()
          for _, dtype in ipairs(c.dtypes or { "f32" }) do
            local inst = values.at(p, dtype, c.sizes)
            local r = ops.with_limits(c.limits or {}, oracle.torch_check, inst, nil,
              { seed = run.seed, variant = run.variant, python = python })
            values.judge(inst, 0, run, r)
          end
        end)
        ops.record(prev)
        if not ok then error(err, 0) end
        local took = {}
        for id, by in pairs(rec) do
          -- (integer operators, sparse's, are exact at any dtype)
          if by.f32 or by.f64 or by.i64 or id:match(SIXTEEN_ONLY) then seen[id] = seen[id] or c.id
          else loose[id] = loose[id] or c.id end
          local dts = {}
          for dt in pairs(by) do dts[#dts + 1] = dt end
          table.sort(dts)
          took[#took + 1] = ("%s (%s)"):format(id, table.concat(dts, " "))
        end
        table.sort(took)
        io.stderr:write("  took " .. table.concat(took, ", ") .. "\n")
        for _, v in ipairs(c.reaches) do
          assert(rec[v], ("%s does not take %s (it took %s)"):format(c.id, v, table.concat(took, ", ")))
        end
      end)
    end
  end

  it("reaches every declared variant", function()
    if only then pending("KREACH_VARIANTS_ONLY runs some of the cases") end
    local missing, left = {}, {}
    for _, v in ipairs(ops.variants()) do
      if v.alignment or v.unreachable then
        left[#left + 1] = ("%s (%s)"):format(v.id, v.alignment and "selected by alignment alone" or v.unreachable)
      elseif not seen[v.id] then
        missing[#missing + 1] = ("%s: %s%s"):format(v.id, v.when,
          loose[v.id] and (" (case %s takes it at bf16 alone)"):format(loose[v.id]) or "")
      end
    end
    if #left > 0 then io.stderr:write("  not checked: " .. table.concat(left, "; ") .. "\n") end
    assert(#missing == 0, "declared variants that no case of values.VARIANT_CASES takes at f32 or f64:\n  "
      .. table.concat(missing, "\n  "))
  end)
end)
