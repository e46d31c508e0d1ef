-- Every problem of every suite against an implementation that is not kreach's: the baseline
-- (f32, and bf16) and the fp64 oracle come from the same Lua reference, so a wrong formula
-- would be in both; here both are compared with the problem's PyTorch model run in float64 on
-- the same inputs and parameters (kreach.judge.oracle.torch_check, one Python worker for all), at
-- small sizes, three seeds with the check's three input distributions (tests/lua/values.lua).
-- Thresholds: the baseline within the correctness policy's of its dtype (kreach.judge.check.DEFAULTS.tol: f32 relative L2 1e-4 and worst 1e-3 of max |y|; bf16 1e-2
-- and 6e-2; values.LOOSE where stated), the oracle within relative L2 1e-9 and worst 1e-7
-- (oracle.TORCH_F64_TOL; where PyTorch's CUDA kernel is itself inexact in float64, its error:
-- oracle.TORCH_F64_KNOWN, problem 28), integer outputs exact. The full-size run is `kreach oracle <suite> --torch` (docs/correctness.md).
-- KREACH_TORCH_VALUES=<lua pattern> limits it to the problems whose name matches.
local problem = require "kreach.problem"
local oracle = require "kreach.judge.oracle"
local pytorch = require "kreach.pytorch"
local values = require "values"

local ONLY = os.getenv("KREACH_TORCH_VALUES")

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

  for _, sname in ipairs(values.SUITES) do
    local suite = problem.load_suite(sname)
    for _, f in ipairs(suite.files) do
      local p = problem.load(f)
      if not ONLY or p.name:match(ONLY) then
        for _, dtype in ipairs({ "f32", "bf16" }) do
          it(("%s/%s at %s"):format(sname, p.name, dtype), function()
            local inst, cap = values.small(p, dtype, { 16, 32, 64, 128, 256 }, 4)
            for _, run in ipairs(values.RUNS) do
              if session.dead then
                session:close()
                session = assert(pytorch.start{ python = py.python })
              end
              values.judge(inst, cap, run, oracle.torch_check(inst, session, { seed = run.seed, variant = run.variant }))
            end
          end)
        end
      end
    end
  end
end)
