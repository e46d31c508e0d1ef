-- Cross-check with PyTorch (Debian's python3-torch, on the CPU): each problem, exported at
-- small sizes, runs under its own torch Model, and the outputs PyTorch returns have the shapes
-- and dtypes the problem declares. This ties each port's declared outputs to its PyTorch code.
-- CI runs a sample: KREACH_TORCH_SAMPLE problems (default 15) drawn with a seed it prints
-- (KREACH_TORCH_SEED repeats a draw; default: the day, so two weeks of CI cover every problem);
-- KREACH_TORCH_SAMPLE=all runs all of them (the full sweep, a few minutes on 2 cores). Every
-- problem's export also runs under PyTorch in host_values_spec (the oracle's CPU runner runs the
-- export's Model on kreach's inputs and compares the values); this spec runs the export as a
-- standalone file would, through its own get_inputs and get_init_inputs.
local support = require "support"
local kreach = require "kreach"
local problem = require "kreach.problem"
local export = require "kreach.problem.export"
local oracle = require "kreach.judge.oracle"
local lfs = require "lfs"

-- Debian's, where python3-torch installs; KREACH_PYTHON names another (the GPU machine's torch
-- lives in a virtual environment)
local PYTHON = os.getenv("KREACH_PYTHON") or "/usr/bin/python3"
local DIR = "problems/kernelbench/level1"

-- Small sizes (kreach.judge.oracle.small): a convolution at 64 channels and 64^3 points is minutes of
-- CPU in PyTorch, so every extent and channel count is cut to 16 (then 32, 64, where a window or
-- a stride needs room) and the batch to 2; another problem's extents to 64, its batch kept.
local function small_instance(p)
  local conv = p.category == "convolution"
  local ok, inst = pcall(oracle.small, p, nil, conv and { caps = { 16, 32, 64 }, batch = 2 }
    or { caps = { 64 }, batch = math.maxinteger })
  return ok and inst or nil
end

local TORCH_DTYPE = { f32 = "torch.float32", bf16 = "torch.bfloat16", f64 = "torch.float64",
  i64 = "torch.int64", bool = "torch.bool", f16 = "torch.float16" }

local have = os.execute(PYTHON .. " -c 'import torch' >/dev/null 2>&1")

describe("the problems against their PyTorch models", function()
  if not have then
    it("needs python3-torch (tools/install-deps installs it)", function()
      error(PYTHON .. " cannot import torch: run tools/install-deps")
    end)
    return
  end
  local ver = io.popen(PYTHON .. " -c 'import torch; print(torch.__version__)'"):read("l")
  local dir = support.tmpdir()
  local files = {}
  for f in lfs.dir(DIR) do if f:match("^%d+_.*%.lua$") then files[#files + 1] = DIR .. "/" .. f end end
  table.sort(files)
  local want = os.getenv("KREACH_TORCH_SAMPLE") or "15"
  if want ~= "all" then
    local n = math.tointeger(tonumber(want)) or error("KREACH_TORCH_SAMPLE must be a count or 'all', got " .. want)
    local seed = math.tointeger(tonumber(os.getenv("KREACH_TORCH_SEED") or "")) or (os.time() // 86400)
    print(("torch cross-check: %d of %d problems, KREACH_TORCH_SEED=%d (KREACH_TORCH_SAMPLE=all for every one)"):format(
      math.min(n, #files), #files, seed))
    math.randomseed(seed)
    for i = #files, 2, -1 do
      local j = math.random(i)
      files[i], files[j] = files[j], files[i]
    end
    for i = #files, n + 1, -1 do files[i] = nil end
    table.sort(files)
  end
  for _, f in ipairs(files) do
    it(f:match("[^/]+$"), function()
      local p = problem.load(f)
      -- scaled_dot_product_attention arrived in PyTorch 2.0: under an older torch this problem
      -- is reported pending (busted's pending raises, so nothing below runs), never passed
      if p.id == 97 and ver:match("^1%.") then
        pending(("%s needs torch >= 2.0 for F.scaled_dot_product_attention; %s has torch %s")
          :format(p.name, PYTHON, ver))
      end
      local inst = small_instance(p)
      if not inst then -- a window larger than the shrunk extent: keep the shipped sizes but the batch
        inst = p:instantiate{ sizes = { batch_size = math.min(p.sizes.batch_size or 1, 2) } }
      end
      assert.is_true(inst:validate())
      local py = dir .. "/" .. p.name .. ".py"
      local out = assert(io.open(py, "w"))
      out:write(export.kernelbench(inst))
      out:write([[

if __name__ == "__main__":
    import json
    torch.manual_seed(0)
    model = Model(*get_init_inputs())
    with torch.no_grad():
        y = model(*get_inputs())
    ys = y if isinstance(y, (tuple, list)) else [y]
    print(json.dumps([{"shape": list(t.shape), "dtype": str(t.dtype)} for t in ys]))
]])
      out:close()
      local h = io.popen(("cd %q && %s %q 2>&1"):format(dir, PYTHON, py))
      local text = h:read("a")
      h:close()
      local got = require("cjson.safe").decode(text:match("(%[.*%])%s*$") or "")
      assert(got, "PyTorch did not run the export:\n" .. text)
      local want = {}
      for _, a in ipairs(inst.args) do
        if a.kind == "output" then want[#want + 1] = { shape = a.shape, dtype = TORCH_DTYPE[a.dtype] } end
      end
      assert.equals(#want, #got)
      for i = 1, #want do
        local gs = got[i].shape
        -- PyTorch returns 0-d tensors for scalar losses; kreach declares shape {}
        assert.same(want[i].shape, gs, ("output %d shape"):format(i))
        assert.equals(want[i].dtype, got[i].dtype, ("output %d dtype"):format(i))
      end
    end)
  end
end)

describe("kreach.judge.oracle's thresholds against PyTorch's f64", function()
  -- an oracle 2.98e-8 from PyTorch's f64 (problem 28 on CUDA: PyTorch's float 1/6)
  local function result(tol)
    return { outputs = { { name = "y",
      baseline = { rel_l2 = 1e-7, max_scaled = 1e-7, nonfinite = 0, special_mismatch = 0 },
      oracle = { rel_l2 = 2.98e-8, max_scaled = 2.98e-8, nonfinite = 0, special_mismatch = 0 } } },
      oracle_tolerance = tol }
  end
  it("holds the oracle to TORCH_F64_TOL unless PyTorch's kernel is known inexact on that device", function()
    local ok, why = oracle.torch_within(result(nil), "f32")
    assert.is_false(ok)
    assert.matches("y, the oracle: relative L2 2.98e%-08 %(threshold 1e%-09%)", why)
    local tol, reason = oracle.oracle_tolerance("28_HardSigmoid", "cuda")
    assert.matches("1.0f / 6.0f", reason, 1, true)
    assert.is_true(oracle.torch_within(result(tol), "f32"))
    -- on the CPU PyTorch's hardsigmoid is exact: the usual thresholds, no reason
    local cpu, none = oracle.oracle_tolerance("28_HardSigmoid", "cpu")
    assert.equals(oracle.TORCH_F64_TOL, cpu)
    assert.is_nil(none)
    assert.equals(oracle.TORCH_F64_TOL, (oracle.oracle_tolerance("19_ReLU", "cuda")))
    -- the allowance is PyTorch's error, not more: twice it is still outside
    local r = result(tol)
    r.outputs[1].oracle.rel_l2 = 6e-8
    assert.is_false((oracle.torch_within(r, "f32")))
  end)
end)
