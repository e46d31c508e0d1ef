-- DLRM-Bench on the GPU. Every problem's baseline (the twelve and dlrm-bench-variants') against
-- its fp64 oracle (kreach.judge.oracle) at f32 and bf16, at reduced sizes, on the inputs of each trial
-- distribution (uniform rows in the default one, Zipf-like in the centred and shifted ones),
-- within the correctness policy's thresholds and the integer outputs exact; and the example
-- candidates of examples/dlrm-bench under `kreach check` at the shipped sizes (the full
-- protocol, in a worker): correct. KREACH_SEED changes the inputs' seed (printed).
local kreach = require "kreach"
local oracle = require "kreach.judge.oracle"
local problem = require "kreach.problem"
local support = require "support"

local seed = tonumber(os.getenv("KREACH_SEED")) or 7
print(("dlrm_spec: seed %d (KREACH_SEED=%d repeats it)"):format(seed, seed))

-- reduced sizes, each applied where the problem has it (the feature counts stay the shipped ones)
local SMALL = { batch_size = 384, rows = 50000, cap = 60000, touched = 20000, rank = 64 }

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local examples = here .. "/../../../examples/dlrm-bench"

-- the twelve, then the variants (dlrm-bench-variants)
local function files()
  local suite = problem.load_suite("dlrm-bench")
  assert.are.equal(12, #suite.files)
  local all = {}
  for _, f in ipairs(suite.files) do all[#all + 1] = f end
  for _, f in ipairs(problem.load_suite("dlrm-bench-variants").files) do all[#all + 1] = f end
  return all
end

describe("DLRM-Bench baselines against the fp64 oracle", function()
  for _, f in ipairs(files()) do
    local p = problem.load(f)
    local own = {}
    for k, v in pairs(SMALL) do if p.def.sizes[k] ~= nil then own[k] = v end end
    for _, dtype in ipairs({ "f32", "bf16" }) do
      it(("%s at %s"):format(p.name, dtype), function()
        local inst = p:instantiate{ dtype = dtype, sizes = own }
        inst:validate()
        for _, variant in ipairs({ "default", "centred", "shifted" }) do
          local r = oracle.check(inst, { seed = seed, variant = variant })
          assert.is_true(#r.outputs > 0)
          local ok, why = oracle.within(r, dtype)
          for _, o in ipairs(r.outputs) do
            print(("  %s %s %s %s: %s"):format(p.name, dtype, variant, o.name, o.mismatches
              and ("%d of %d differ"):format(o.mismatches, o.n) or ("rel L2 %.3g"):format(o.rel_l2)))
          end
          assert.is_true(ok, ("%s at %s (%s inputs): %s"):format(p.name, dtype, variant, tostring(why)))
        end
      end)
    end
  end
end)

describe("DLRM-Bench example candidates under kreach check", function()
  for _, e in ipairs({ { 1, "01_embedding_onehot_fused.lua" }, { 5, "05_backward_counting_sort.lua" },
                       { 7, "07_dot_interaction_warp.lua" }, { 12, "12_preprocess_per_feature.lua" } }) do
    it(("%s on dlrm-bench/%d: correct"):format(e[2], e[1]), function()
      local res, out = support.json_result(("%q check dlrm-bench/%d %q --json --seed %d --timeout 60"):format(
        kreach.executable(), e[1], examples .. "/" .. e[2], seed))
      assert.are.equal("correct", res.verdict.verdict, out)
    end)
  end
end)
