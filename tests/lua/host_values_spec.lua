-- The baselines and oracles against PyTorch without a GPU: on the host device
-- (KREACH_DEVICE=host: kreach's kernels compiled by g++ under kreach.emulate, run on the CPU),
-- each problem's baseline (f32, and bf16) and fp64 oracle are compared with its PyTorch model
-- run in float64 on the CPU (Debian's python3-torch) on the same inputs and parameters, at small
-- sizes, three seeds with the three distributions of the check's trials (tests/lua/values.lua;
-- kreach.judge.oracle.torch_check, torch_within: the baseline within its dtype's thresholds, the
-- oracle within relative L2 1e-9 and worst 1e-7, integers exact). This is the check that catches a wrong formula, which the baseline and the oracle, one Lua reference at
-- two dtypes, would share. The GPU runs every problem (tests/lua/gpu/torch_values_spec.lua).
--
-- CI runs every problem (KREACH_HOST_SAMPLE=ci, the default), the convolutions on the problem's
-- own inputs only: a convolution is linear in its input, so the other two distributions take no
-- other branch of its formula, and they are where the emulation spends its time (35 convolutions
-- at 3 runs took 52 s of the full sweep's 112 s on the 2-core CPU machine). KREACH_HOST_SAMPLE=all
-- runs every problem at every run; =N a sample of N problems, one of them a 1-D or 2-D
-- convolution, drawn with a seed it prints (KREACH_HOST_SEED repeats a draw; default: the day).
-- KREACH_HOST_ONLY=<lua pattern> runs the problems whose name matches, at every run. Needs
-- KREACH_DEVICE=host (ctest sets it).
local problem = require "kreach.problem"
local oracle = require "kreach.judge.oracle"
local support = require "support"
local values = require "values"

local TORCH_VERSION

describe("the baselines and oracles against PyTorch on the CPU (the host device)", function()
  local PYTHON = support.host_python_or_fail(it)
  if not PYTHON then return end

  local vp = io.popen(PYTHON .. " -c 'import torch; print(torch.__version__)'")
  TORCH_VERSION = vp:read("l") or "?"
  vp:close()
  local all = {}
  for _, sname in ipairs(values.SUITES) do
    for _, f in ipairs(problem.load_suite(sname).files) do all[#all + 1] = { suite = sname, file = f } end
  end
  local only = os.getenv("KREACH_HOST_ONLY")
  local want = os.getenv("KREACH_HOST_SAMPLE") or "ci"
  local pick = {}
  if only then
    for _, e in ipairs(all) do
      local p = problem.load(e.file)
      if p.name:match(only) then pick[#pick + 1] = e end
    end
  elseif want == "all" or want == "ci" then
    pick = all
  else
    -- a sample takes one 1-D or 2-D convolution (the emulation's slowest) and the rest from the
    -- other problems
    local seed = tonumber(os.getenv("KREACH_HOST_SEED")) or os.time() // 86400
    local convs, others = {}, {}
    for _, e in ipairs(all) do
      local f = e.file:match("[^/]*$")
      if f:match("[Cc]onv") then
        if not f:match("3D") then convs[#convs + 1] = e end
      else
        others[#others + 1] = e
      end
    end
    print(("host_values: seed %d (KREACH_HOST_SEED=%d repeats the draw), %s of %d problems: one of %d 1-D and 2-D convolutions, the rest of %d others"):format(
      seed, seed, want, #all, #convs, #others))
    math.randomseed(seed)
    local function draw(list, k)
      local idx = {}
      for i = 1, #list do idx[i] = i end
      for i = #idx, 2, -1 do local j = math.random(i); idx[i], idx[j] = idx[j], idx[i] end
      for i = 1, math.min(k, #idx) do pick[#pick + 1] = list[idx[i]] end
    end
    local n = tonumber(want)
    if not n or n < 1 then error("KREACH_HOST_SAMPLE: a positive number or 'all', got " .. want) end
    draw(convs, 1)
    draw(others, n - 1)
    table.sort(pick, function(x, y) return x.file < y.file end)
  end

  for _, e in ipairs(pick) do
    local p = problem.load(e.file)
    for _, dtype in ipairs({ "f32", "bf16" }) do
      it(("%s/%s at %s"):format(e.suite, p.name, dtype), function()
        local inst, cap = values.small(p, dtype, { 8, 16, 32, 64 }, 2)
        local runs = values.RUNS
        if want == "ci" and not only and e.file:match("[^/]*$"):match("[Cc]onv") then runs = { values.RUNS[1] } end
        for _, run in ipairs(runs) do
          local seed = run.seed
          local okc, r = pcall(oracle.torch_check, inst, nil, { seed = seed, variant = run.variant, python = PYTHON })
          if not okc then
            -- Debian's PyTorch may lack what a model calls (problem 97 needs torch >= 2.0 for
            -- scaled_dot_product_attention): reported as pending with PyTorch's words
            local msg = tostring(r)
            if TORCH_VERSION:match("^1%.") and msg:find("has no attribute", 1, true) then
              pending(("PyTorch %s lacks what the model calls: %s"):format(TORCH_VERSION, msg:match("[^\n]*has no attribute[^\n]*")))
            end
            error(r, 0)
          end
          values.judge(inst, cap, run, r)
        end
      end)
    end
  end
end)
