-- cudnn_spec.lua: kreach.cudnn's convolutions (cuDNN, where it is found) against a direct fp64
-- reference computed here, on the host, from the tensors' own contents (so f16 and bf16 inputs
-- are the rounded values the GPU saw): forward and transposed, 1-D, 2-D and 3-D, with stride,
-- padding, dilation, groups, output padding and bias, at f32, f16 and bf16; TF32 off at f32;
-- the plan cache; a sealed worker running a convolution. Pending where cuDNN is not found.
local kreach = require "kreach"
local cudnn = require "kreach.cudnn"
local seal = require "kreach.run.seal"
local worker = require "kreach.run.worker"
local support = require "support"

local gpu = kreach.has_device()
local have, why_not = cudnn.available()
local it_dnn = (gpu and have) and it or pending
if gpu and not have then print("cuDNN unavailable: " .. tostring(why_not)) end

local seed = tonumber(os.getenv("KREACH_SEED")) or 1717
print(("seed %d; cuDNN %s"):format(seed, have and (cudnn.info().version .. " at " .. cudnn.info().path
  .. " (" .. cudnn.info().found_by .. ")") or "unavailable"))

-- Relative L2 error against the fp64 reference.
--   f32: 1e-5 (the brief's bound). fp32 FMA sums of at most a few hundred products stay near
--        1e-7; TF32 (inputs rounded to 10 mantissa bits) gives about 3e-4 (shown below).
--   f16, bf16: exact products, fp32 sums, then y rounded to the dtype (half an ulp: 2^-11 and
--        2^-8 relative) and rounded again after the bias: 4 times one rounding's worst case.
local TOL = { f32 = 1e-5, f16 = 4 * 2 ^ -11, bf16 = 4 * 2 ^ -8 }

local rel_l2, reference, out_shape = support.rel_l2, support.conv_reference, support.conv_out_shape

-- The cases: forward and transposed, 1-D to 3-D, with every parameter off its default somewhere.
local CASES = {
  { name = "conv1d, stride 2, padding 1, dilation 2, 2 groups, bias", x = { 2, 4, 17 }, w = { 6, 2, 3 },
    stride = { 2 }, padding = { 1 }, dilation = { 2 }, groups = 2, bias = true },
  { name = "conv2d, asymmetric kernel, stride, padding, dilation, 2 groups, bias", x = { 2, 6, 9, 11 },
    w = { 4, 3, 3, 2 }, stride = { 2, 1 }, padding = { 1, 0 }, dilation = { 1, 2 }, groups = 2, bias = true },
  { name = "conv2d depthwise (groups = channels)", x = { 1, 4, 8, 8 }, w = { 4, 1, 3, 3 },
    stride = { 1, 1 }, padding = { 1, 1 }, dilation = { 1, 1 }, groups = 4 },
  { name = "conv3d, stride (1,2,1), padding 1, bias", x = { 1, 3, 5, 6, 7 }, w = { 4, 3, 3, 3, 3 },
    stride = { 1, 2, 1 }, padding = { 1, 1, 1 }, dilation = { 1, 1, 1 }, groups = 1, bias = true },
  { name = "conv3d, dilation 2, 2 groups", x = { 2, 4, 6, 5, 7 }, w = { 2, 2, 2, 2, 3 },
    stride = { 1, 1, 2 }, padding = { 0, 1, 1 }, dilation = { 2, 1, 2 }, groups = 2 },
  { name = "conv_transpose1d, stride 2, padding 1, output padding 1, 2 groups, bias", transposed = true,
    x = { 2, 4, 7 }, w = { 4, 3, 3 }, stride = { 2 }, padding = { 1 }, dilation = { 1 }, output_padding = { 1 },
    groups = 2, bias = true },
  { name = "conv_transpose1d, dilation 3, stride 2", transposed = true, x = { 1, 3, 6 }, w = { 3, 2, 4 },
    stride = { 2 }, padding = { 2 }, dilation = { 3 }, output_padding = { 0 }, groups = 1 },
  { name = "conv_transpose2d, stride (2,3), dilation (1,2), output padding (1,2), 2 groups, bias",
    transposed = true, x = { 2, 4, 5, 4 }, w = { 4, 2, 3, 2 }, stride = { 2, 3 }, padding = { 1, 0 },
    dilation = { 1, 2 }, output_padding = { 1, 2 }, groups = 2, bias = true },
  { name = "conv_transpose3d, stride 2, padding 1, output padding 1", transposed = true, x = { 1, 3, 3, 4, 3 },
    w = { 3, 4, 3, 3, 3 }, stride = { 2, 2, 2 }, padding = { 1, 1, 1 }, dilation = { 1, 1, 1 },
    output_padding = { 1, 1, 1 }, groups = 1 },
  { name = "conv_transpose3d, asymmetric kernel, 3 groups, bias", transposed = true, x = { 1, 6, 3, 3, 4 },
    w = { 6, 1, 2, 3, 1 }, stride = { 1, 2, 2 }, padding = { 0, 1, 0 }, dilation = { 1, 1, 2 },
    output_padding = { 0, 1, 0 }, groups = 3, bias = true },
}

local function run_case(c, dtype, s)
  c.y = out_shape(c)
  local x = kreach.empty(c.x, dtype):uniform(-1, 1, s)
  local w = kreach.empty(c.w, dtype):uniform(-1, 1, s + 1)
  local b = c.bias and kreach.empty({ c.y[2] }, dtype):uniform(-1, 1, s + 2) or nil
  local y = kreach.empty(c.y, dtype):poison()
  local algo, ws, num, math_type, cached = cudnn.conv(x, w, y, { transposed = c.transposed, stride = c.stride,
    padding = c.padding, dilation = c.dilation, groups = c.groups, output_padding = c.output_padding, bias = b })
  local ref = reference(c, x:to_table(), w:to_table(), b and b:to_table())
  local got = y:to_table()
  assert.equals(0, y:count_poisoned())
  return rel_l2(got, ref), algo, ws, num, math_type, cached
end

describe("kreach.cudnn.conv", function()
  for ci, c in ipairs(CASES) do
    for di, dtype in ipairs({ "f32", "f16", "bf16" }) do
      it_dnn(("%s at %s matches the fp64 reference"):format(c.name, dtype), function()
        local s = seed + 10 * ci + di
        local err, algo, ws, num, math_type = run_case(c, dtype, s)
        print(("  %-90s %-4s rel L2 %.2e  %s (%d) %s, workspace %d bytes"):format(c.name, dtype, err, algo, num,
          math_type, ws))
        assert.is_true(err <= TOL[dtype], ("rel L2 %.3e > %.1e (seed %d)"):format(err, TOL[dtype], s))
        assert.matches("^engine %d+ %(", algo)
        if dtype == "f32" then assert.equals("FMA", math_type) end
      end)
    end
  end

  -- TF32 off: a reduction of 32 * 3 * 3 = 288 products. Rounding the inputs to TF32's 10
  -- mantissa bits moves the result by about 3e-4 relative (computed here); f32 must stay
  -- within 1e-5.
  it_dnn("runs f32 without TF32 (a case where TF32 would exceed 1e-5)", function()
    local c = { name = "tf32", x = { 1, 32, 12, 12 }, w = { 8, 32, 3, 3 }, stride = { 1, 1 }, padding = { 0, 0 },
      dilation = { 1, 1 }, groups = 1 }
    c.y = out_shape(c)
    local x = kreach.empty(c.x, "f32"):uniform(-1, 1, seed)
    local w = kreach.empty(c.w, "f32"):uniform(-1, 1, seed + 1)
    local y = kreach.empty(c.y, "f32")
    cudnn.conv(x, w, y, { stride = c.stride })
    local X, W = x:to_table(), w:to_table()
    local ref = reference(c, X, W)
    local function tf32(v)
      if v == 0 then return 0.0 end
      local e = math.floor(math.log(math.abs(v), 2))
      local q = 2.0 ^ (e - 10)
      return math.floor(v / q + 0.5) * q
    end
    local Xt, Wt = {}, {}
    for i, v in ipairs(X) do Xt[i] = tf32(v) end
    for i, v in ipairs(W) do Wt[i] = tf32(v) end
    local tf32_err = rel_l2(reference(c, Xt, Wt), ref)
    local err = rel_l2(y:to_table(), ref)
    print(("  TF32 inputs would give rel L2 %.2e; cuDNN f32 gives %.2e"):format(tf32_err, err))
    assert.is_true(tf32_err > 1e-5 * 10, "the case does not tell TF32 apart")
    assert.is_true(err <= 1e-5, ("rel L2 %.3e > 1e-5 (seed %d)"):format(err, seed))
  end)

  it_dnn("caches the plan: a repeated call queries no heuristics and allocates nothing", function()
    local x = kreach.empty({ 2, 8, 16, 16 }, "f16"):uniform(-1, 1, seed)
    local w = kreach.empty({ 16, 8, 3, 3 }, "f16"):uniform(-1, 1, seed + 1)
    local y = kreach.empty({ 2, 16, 14, 14 }, "f16")
    local before = cudnn.stats()
    local algo1, ws1, _, _, cached1 = cudnn.conv(x, w, y)
    local mid = cudnn.stats()
    assert.is_false(cached1)
    assert.equals(before.heuristic_queries + 1, mid.heuristic_queries)
    assert.equals(before.plans + 1, mid.plans)
    for _ = 1, 5 do
      local algo2, ws2, _, _, cached2 = cudnn.conv(x, w, y)
      assert.is_true(cached2)
      assert.equals(algo1, algo2)
      assert.equals(ws1, ws2)
    end
    local after = cudnn.stats()
    assert.equals(mid.heuristic_queries, after.heuristic_queries)
    assert.equals(mid.plan_hits + 5, after.plan_hits)
    assert.equals(mid.workspace_bytes, after.workspace_bytes)
    assert.is_true(after.workspace_bytes >= ws1)
    -- another key (a bias) is another plan
    local b = kreach.zeros({ 16 }, "f16")
    local _, _, _, _, cached3 = cudnn.conv(x, w, y, { bias = b })
    assert.is_false(cached3)
    assert.equals(after.heuristic_queries + 1, cudnn.stats().heuristic_queries)
  end)

  -- select: PyTorch's engine (the first that runs, in the heuristics' order; the default) or the
  -- fastest of every allowed engine, timed. Both are plans of their own and agree with the
  -- reference; the timed one is never slower than the first by more than noise.
  it_dnn("chooses PyTorch's engine by default and the fastest when asked", function()
    local c = { name = "select", transposed = true, x = { 4, 16, 12, 12 }, w = { 16, 8, 3, 3 }, stride = { 2, 2 },
      padding = { 1, 1 }, dilation = { 1, 1 }, groups = 2, output_padding = { 1, 1 } }
    c.y = out_shape(c)
    local x = kreach.empty(c.x, "f32"):uniform(-1, 1, seed)
    local w = kreach.empty(c.w, "f32"):uniform(-1, 1, seed + 1)
    local ref = reference(c, x:to_table(), w:to_table())
    local o = { transposed = true, stride = 2, padding = 1, groups = 2, output_padding = 1 }
    local names = {}
    for _, sel in ipairs({ "default", "pytorch", "fastest" }) do
      local y = kreach.empty(c.y, "f32"):poison()
      o.select = sel ~= "default" and sel or nil
      local q0 = cudnn.stats().heuristic_queries
      local algo, _, _, _, cached = cudnn.conv(x, w, y, o)
      names[sel] = algo
      print(("  select %-8s %s%s"):format(sel, algo, cached and " (cached)" or ""))
      assert.equals(0, y:count_poisoned())
      assert.is_true(rel_l2(y:to_table(), ref) <= TOL.f32)
      -- the default is "pytorch": the same plan, found in the cache
      assert.equals(sel == "pytorch", cached)
      assert.equals(sel == "pytorch" and q0 or q0 + 1, cudnn.stats().heuristic_queries)
    end
    assert.matches("^engine %d+ %(%a[%a ]*%)", names.pytorch)
    assert.is_nil(names.pytorch:find("fastest", 1, true))
    assert.matches(", fastest of %d+ timed$", names.fastest)
    local ok, err = pcall(cudnn.conv, x, w, kreach.empty(c.y, "f32"), { transposed = true, stride = 2, padding = 1,
      groups = 2, output_padding = 1, select = "quickest" })
    assert.is_false(ok)
    assert.matches("bad option 'select' %('pytorch' or 'fastest' expected, got quickest%)", err)
  end)

  it_dnn("checks shapes, dtypes and parameters before any device work", function()
    local x = kreach.empty({ 1, 4, 8, 8 }, "f32"):uniform(-1, 1, seed)
    local w = kreach.empty({ 6, 4, 3, 3 }, "f32"):uniform(-1, 1, seed)
    local q0 = cudnn.stats().heuristic_queries
    local ok, err = pcall(cudnn.conv, x, w, kreach.empty({ 1, 6, 8, 8 }, "f32"))
    assert.is_false(ok)
    assert.matches("conv: y is 1x6x8x8 but x 1x4x8x8 and w 6x4x3x3 give 1x6x6x6", err)
    ok, err = pcall(cudnn.conv, x, w, kreach.empty({ 1, 6, 6, 6 }, "f32"), { output_padding = 1 })
    assert.matches("output padding applies to transposed convolutions only", err)
    ok, err = pcall(cudnn.conv, x, kreach.empty({ 4, 3, 3, 3 }, "f32"), kreach.empty({ 1, 3, 17, 17 }, "f32"),
      { transposed = true, stride = 2, output_padding = 2 })
    assert.matches("output padding 2 of dimension 1 must be smaller than its stride %(2%) or its dilation %(1%)", err)
    ok, err = pcall(cudnn.conv, x, w, kreach.empty({ 1, 6, 6, 6 }, "f16"))
    assert.matches("must have one dtype", err)
    local x64 = kreach.empty({ 1, 4, 8, 8 }, "f64")
    ok, err = pcall(cudnn.conv, x64, kreach.empty({ 6, 4, 3, 3 }, "f64"), kreach.empty({ 1, 6, 6, 6 }, "f64"))
    assert.matches("dtype f64 is not supported %(f32, f16, bf16%)", err)
    ok, err = pcall(cudnn.conv, x, w, kreach.empty({ 1, 6, 6, 6 }, "f32"), { strides = 2 })
    assert.matches("unknown option 'strides'", err)
    ok, err = pcall(cudnn.conv, x, w, kreach.empty({ 1, 6, 6, 6 }, "f32"), { stride = { 1, 1, 1 } })
    assert.matches("bad option 'stride' %(2 integers expected", err)
    ok, err = pcall(cudnn.conv, x, w, kreach.empty({ 1, 6, 6, 6 }, "f32"), { groups = 3 })
    assert.matches("with 3 groups: w must be", err)
    assert.equals(q0, cudnn.stats().heuristic_queries)
  end)

  it_dnn("runs in a sealed worker that found cuDNN during its setup", function()
    local code = [[
      local kreach = require "kreach"
      local cudnn = require "kreach.cudnn"
      local seal = require "kreach.run.seal"
      assert(seal.enter_worker())
      assert(cudnn.available())
      local rec = assert(seal.apply{ device = true })
      local x = kreach.empty({ 2, 8, 10, 10 }, "f32"):uniform(-1, 1, SEED)
      local w = kreach.empty({ 4, 8, 3, 3 }, "f32"):uniform(-1, 1, SEED + 1)
      local y = kreach.empty({ 2, 4, 8, 8 }, "f32")
      local algo = cudnn.conv(x, w, y)
      local yt = kreach.empty({ 2, 8, 21, 21 }, "bf16")
      local algo_t = cudnn.conv(kreach.empty({ 2, 4, 10, 10 }, "bf16"):uniform(-1, 1, SEED), kreach.empty({ 4, 4, 3, 3 }, "bf16"):uniform(-1, 1, SEED), yt, { transposed = true, stride = 2, groups = 2 })
      kreach.synchronize()
      local f = io.open("/etc/hostname")
      require("kreach.run.worker").result({ filesystem = rec.filesystem, cudnn = rec.cudnn, algo = algo, algo_t = algo_t,
        y = y:to_table(), etc_readable = f ~= nil, path = cudnn.info().path })]]
    local r, v = worker.run({ kreach.executable(), "-e", (code:gsub("SEED", tostring(seed))) })
    assert.is_table(r, v and v.reason)
    print(("  sealed worker: filesystem %s, cuDNN read from %s, %s"):format(r.filesystem, tostring(r.cudnn), r.algo))
    if seal.landlock() >= 1 and not seal.unsealed() then
      assert.equals("landlock", r.filesystem)
      assert.is_false(r.etc_readable)
    end
    assert.equals(cudnn.info().path, r.path)
    -- the same convolution here, unsealed: the same numbers
    local x = kreach.empty({ 2, 8, 10, 10 }, "f32"):uniform(-1, 1, seed)
    local w = kreach.empty({ 4, 8, 3, 3 }, "f32"):uniform(-1, 1, seed + 1)
    local y = kreach.empty({ 2, 4, 8, 8 }, "f32")
    local algo = cudnn.conv(x, w, y)
    assert.matches("^engine %d+", r.algo)
    print(("  engines: sealed %s, here %s"):format(r.algo, algo))
    assert.is_true(rel_l2(r.y, y:to_table()) <= 1e-6)
  end)
end)
