-- Every problem of every suite against an implementation that is not kreach's: the baseline
-- (f32, and bf16) and the fp64 oracle come from the same Lua reference, so a wrong formula
-- would be in both; here both are compared with the problem's PyTorch model run in float64 on
-- the same inputs and parameters (kreach.oracle.torch_check, one Python worker for all), at
-- small sizes and three seeds. Thresholds: the baseline within the correctness policy's of its
-- dtype (kreach.check.DEFAULTS.tol: f32 relative L2 1e-4 and worst 1e-3 of max |y|; bf16 1e-2
-- and 6e-2), the oracle within relative L2 1e-9 and worst 1e-7 (oracle.TORCH_F64_TOL), integer
-- outputs exact. The full-size run is `kreach oracle <suite> --torch` (docs/correctness.md).
-- KREACH_TORCH_VALUES=<lua pattern> limits it to the problems whose name matches.
local kreach = require "kreach"
local problem = require "kreach.problem"
local oracle = require "kreach.oracle"
local pytorch = require "kreach.pytorch"

local SUITES = { "kernelbench-l1", "dlrm-bench", "dlrm-bench-variants" }
-- a seed and a distribution of the inputs each: the problem's own, then the check's other two
-- trials' (KernelBench's torch.rand alone never reaches a hinge's clamp or softsign's |x|)
local RUNS = { { seed = 1, variant = "default" }, { seed = 2, variant = "centred" }, { seed = 3, variant = "shifted" } }
local ONLY = os.getenv("KREACH_TORCH_VALUES")

-- sizes that are not extents of a tensor, or whose value the inputs depend on
local KEEP = { kernel_size = true, stride = true, padding = true, dilation = true, reduce_dim = true,
  dim = true, num_groups = true, num_classes = true, groups = true, output_padding = true }

-- The problem at small sizes: every extent above the cap cut to it, the cap the smallest of
-- 16, 32, 64, 128, 256 at which the problem validates; the batch at most 4.
local function small(p, dtype)
  for _, cap in ipairs({ 16, 32, 64, 128, 256 }) do
    local s = {}
    for k, v in pairs(p.sizes) do
      -- a window, a stride or a dimension's index stays; `dim` as an extent does not
      if v > cap and not (KEEP[k] and v <= 64) then s[k] = cap end
    end
    if p.sizes.batch_size and p.sizes.batch_size > 4 then s.batch_size = 4 end
    local ok, inst = pcall(p.instantiate, p, { dtype = dtype, sizes = s })
    if ok and pcall(inst.validate, inst) then return inst, cap end
  end
  error(("%s: no small sizes (caps 16 to 256) validate"):format(p.name), 0)
end

describe("the baselines and oracles against PyTorch in float64", function()
  local py, why = pytorch.find()
  if not py then
    it("needs a python3 with CUDA PyTorch", function() pending(why) end)
    return
  end
  local session
  setup(function()
    local serr
    session, serr = pytorch.start{ python = py.python }
    assert(session, serr)
  end)
  teardown(function() if session then session:close() end end)

  for _, sname in ipairs(SUITES) do
    local suite = problem.load_suite(sname)
    for _, f in ipairs(suite.files) do
      local p = problem.load(f)
      if not ONLY or p.name:match(ONLY) then
        for _, dtype in ipairs({ "f32", "bf16" }) do
          it(("%s/%s at %s"):format(sname, p.name, dtype), function()
            local inst, cap = small(p, dtype)
            for _, run in ipairs(RUNS) do
              local seed = run.seed
              if session.dead then
                session:close()
                session = assert(pytorch.start{ python = py.python })
              end
              local r = oracle.torch_check(inst, session, { seed = seed, variant = run.variant })
              local worst_b, worst_o = 0, 0
              for _, o in ipairs(r.outputs) do
                if o.baseline.rel_l2 then
                  worst_b = math.max(worst_b, o.baseline.rel_l2)
                  worst_o = math.max(worst_o, o.oracle.rel_l2)
                end
              end
              io.stderr:write(("  %s %s cap %d seed %d %s: baseline %.3g, oracle %.3g\n"):format(
                p.name, dtype, cap, seed, run.variant, worst_b, worst_o))
              local ok, bad = oracle.torch_within(r, dtype)
              assert(ok, ("seed %d, %s inputs: %s"):format(seed, run.variant, tostring(bad)))
            end
          end)
        end
      end
    end
  end
end)
