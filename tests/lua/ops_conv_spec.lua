-- kreach.ops.conv without a GPU: PyTorch's output shapes (hand-computed from PyTorch's formulas,
-- among them the 35 convolutions of KernelBench level 1), PyTorch's refusals as clear errors,
-- shape-only calls that record their writes, every kernel instantiation compiling for sm_90,
-- and every launch the 35 problems plan at full size passing the launch checks of sm_90 (grid,
-- block, shared memory, registers, argument types and ranges).
local kreach = require "kreach"
local ops = require "kreach.ops"
local conv = require "kreach.ops.conv"
local meta = require "kreach.meta"

local DTYPES = { "f64", "f32", "bf16", "f16" }

-- KernelBench level 1's convolutions (/work/shared/data/kernelbench_level1.tsv): x, w, the
-- options, and PyTorch's output shape, computed by hand from
--   conv:      o = floor((d + 2p - dil (k - 1) - 1) / s) + 1
--   transpose: o = (d - 1) s - 2p + dil (k - 1) + output_padding + 1
local PROBLEMS = {
  { 50, false, { 256, 3, 224, 224 }, { 96, 3, 11, 11 }, { stride = 4, padding = 2, bias = true }, { 256, 96, 55, 55 } },
  { 54, false, { 16, 3, 64, 64, 64 }, { 64, 3, 3, 3, 3 }, {}, { 16, 64, 62, 62, 62 } },
  { 55, false, { 8, 64, 512, 1024 }, { 128, 64, 3, 3 }, {}, { 8, 128, 510, 1022 } },
  { 56, false, { 8, 64, 512, 256 }, { 128, 64, 5, 7 }, {}, { 8, 128, 508, 250 } },
  { 57, true, { 8, 64, 1024, 1024 }, { 64, 64, 3, 3 }, {}, { 8, 64, 1026, 1026 } },
  { 58, true, { 16, 32, 16, 32, 64 }, { 32, 16, 3, 5, 7 }, {}, { 16, 16, 18, 36, 70 } },
  { 59, false, { 16, 3, 256, 256, 10 }, { 64, 3, 3, 3, 1 }, {}, { 16, 64, 254, 254, 10 } },
  { 60, false, { 16, 3, 64, 64, 64 }, { 64, 3, 3, 5, 7 }, {}, { 16, 64, 62, 60, 58 } },
  { 61, true, { 8, 48, 64, 64, 64 }, { 48, 48, 3, 3, 3 }, {}, { 8, 48, 66, 66, 66 } },
  { 62, false, { 8, 32, 512, 512 }, { 64, 32, 5, 9 }, {}, { 8, 64, 508, 504 } },
  { 63, false, { 16, 16, 1024, 1024 }, { 128, 16, 3, 3 }, {}, { 16, 128, 1022, 1022 } },
  { 64, true, { 64, 128, 65536 }, { 128, 128, 3 }, {}, { 64, 128, 65538 } },
  { 65, true, { 8, 64, 512, 512 }, { 64, 64, 3, 7 }, {}, { 8, 64, 514, 518 } },
  { 66, false, { 8, 3, 16, 128, 128 }, { 64, 3, 3, 5, 7 }, {}, { 8, 64, 14, 124, 122 } },
  { 67, false, { 32, 64, 131072 }, { 128, 64, 3 }, {}, { 32, 128, 131070 } },
  { 68, true, { 16, 32, 64, 64, 64 }, { 32, 64, 3, 5, 5 }, {}, { 16, 64, 66, 68, 68 } },
  { 69, true, { 64, 64, 128, 256 }, { 64, 128, 3, 5 }, {}, { 64, 128, 130, 260 } },
  { 70, true, { 8, 48, 96, 96, 96 }, { 48, 24, 3, 3, 3 }, {}, { 8, 24, 98, 98, 98 } },
  { 71, true, { 8, 32, 512, 1024 }, { 32, 32, 3, 3 }, {}, { 8, 32, 514, 1026 } },
  { 72, true, { 8, 32, 12, 24, 48 }, { 32, 8, 3, 5, 7 },
    { stride = { 2, 2, 2 }, padding = { 1, 2, 3 }, output_padding = { 1, 1, 1 }, groups = 4 }, { 8, 32, 24, 48, 96 } },
  { 73, true, { 4, 32, 32, 64, 128 }, { 32, 32, 3, 3, 3 }, { stride = 2, padding = 1 }, { 4, 32, 63, 127, 255 } },
  { 74, true, { 32, 32, 131072 }, { 32, 64, 5 }, { dilation = 3 }, { 32, 64, 131084 } },
  { 75, true, { 16, 32, 128, 256 }, { 32, 16, 3, 5 },
    { stride = { 2, 3 }, padding = { 1, 2 }, dilation = { 2, 1 }, groups = 4 }, { 16, 64, 257, 766 } },
  { 76, false, { 64, 64, 524280 }, { 128, 64, 3 }, { stride = 3, dilation = 4 }, { 64, 128, 174758 } },
  { 77, true, { 16, 32, 16, 32, 32 }, { 32, 64, 3, 3, 3 }, { stride = 2, padding = 1, dilation = 2 }, { 16, 64, 33, 65, 65 } },
  { 78, true, { 8, 32, 512, 1024 }, { 32, 32, 3, 7 }, { padding = { 1, 3 } }, { 8, 32, 512, 1024 } },
  { 79, true, { 16, 32, 131072 }, { 32, 64, 3 }, { stride = 2, padding = 1, dilation = 2 }, { 16, 64, 262145 } },
  { 80, false, { 8, 32, 512, 512 }, { 64, 32, 5, 9 }, { padding = { 2, 4 }, dilation = { 2, 3 } }, { 8, 64, 508, 496 } },
  { 81, true, { 16, 32, 64, 128 }, { 32, 64, 3, 3 }, { stride = 5, padding = 1, dilation = 2 }, { 16, 64, 318, 638 } },
  { 82, false, { 16, 64, 512, 512 }, { 64, 1, 3, 3 }, { groups = 64 }, { 16, 64, 510, 510 } },
  { 83, false, { 64, 8, 512, 512 }, { 8, 1, 3, 1 }, { groups = 8 }, { 64, 8, 510, 512 } },
  { 84, false, { 64, 128, 256, 512 }, { 128, 1, 3, 3 }, { groups = 128 }, { 64, 128, 254, 510 } },
  { 85, false, { 32, 128, 128, 256 }, { 128, 1, 3, 7 }, { groups = 128 }, { 32, 128, 126, 250 } },
  { 86, false, { 16, 64, 512, 512 }, { 64, 1, 3, 3 }, { padding = 1, groups = 64 }, { 16, 64, 512, 512 } },
  { 86, false, { 16, 64, 512, 512 }, { 128, 64, 1, 1 }, {}, { 16, 128, 512, 512 } },
  { 87, false, { 16, 64, 1024, 1024 }, { 128, 64, 1, 1 }, {}, { 16, 128, 1024, 1024 } },
}

-- options without bias (a presence flag in the table above), and the bias's shape
local function split(p)
  local o = {}
  for k, v in pairs(p[5]) do if k ~= "bias" then o[k] = v end end
  return o, p[5].bias and { p[6][2] } or nil
end

local function call(lib, transposed, x, w, y, opts)
  if transposed then return lib.conv_transpose(x, w, y, opts) end
  return lib.conv(x, w, y, opts)
end

local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(err)
end

describe("kreach.ops.conv", function()
  it("is the family 'conv' of kreach.ops", function()
    assert.equal(conv, ops.family("conv"))
    assert.is_function(ops.get(true).conv)
    assert.is_function(ops.get(true).conv_transpose)
    assert.is_function(require("kreach.ops.conv").output_shape)
  end)

  it("says which backend computes each dtype", function()
    local lib = ops.get(true)
    assert.equal("oracle", lib.conv_backend("f64"))
    -- cuDNN where kreach.cudnn finds it (this machine's toolkit may carry it), else nvrtc
    local want = require("kreach.cudnn").available() and "cudnn" or "nvrtc"
    for _, dt in ipairs({ "f32", "bf16", "f16" }) do
      assert.equal(want, lib.conv_backend(dt))
      assert.equal(want, conv.choose_backend(dt))
    end
    -- KREACH_CONV_BACKEND=nvrtc keeps kreach's own kernels
    local f = io.popen(("KREACH_CONV_BACKEND=nvrtc %q -e 'print(require(\"kreach.ops.conv\").choose_backend(\"f32\"))'"):format(
      require("kreach").executable()))
    assert.equal("nvrtc", f:read("l"))
    f:close()
  end)

  describe("output_shape", function()
    it("matches PyTorch for every kind of convolution", function()
      local os_ = conv.output_shape
      -- 1-D: (10 + 2*1 - 2*(3-1) - 1) // 2 + 1 = 4
      assert.same({ 2, 8, 4 }, os_({ 2, 4, 10 }, { 8, 4, 3 }, { stride = 2, padding = 1, dilation = 2 }))
      -- 2-D, per-dimension options: H (7 + 0 - 2 - 1)//1 + 1 = 5, W (9 + 4 - 4 - 1)//3 + 1 = 3
      assert.same({ 1, 6, 5, 3 }, os_({ 1, 3, 7, 9 }, { 6, 3, 3, 5 }, { stride = { 1, 3 }, padding = { 0, 2 } }))
      -- 3-D, grouped (6 input channels in 3 groups of 2, weights (9, 2, ...))
      assert.same({ 2, 9, 3, 2, 1 }, os_({ 2, 6, 5, 4, 3 }, { 9, 2, 3, 3, 3 }, { groups = 3 }))
      -- depthwise, 'same' (an even kernel pads 0 before and 1 after; the size is kept) and 'valid'
      assert.same({ 4, 8, 8 }, os_({ 4, 8, 8 }, { 4, 1, 2, 2 }, { groups = 4, padding = "same" }))
      assert.same({ 4, 7, 7 }, os_({ 4, 8, 8 }, { 4, 1, 2, 2 }, { groups = 4, padding = "valid" }))
      assert.same({ 1, 3, 10 }, os_({ 1, 3, 10 }, { 3, 3, 4 }, { padding = "same", dilation = 3 }))
      -- unbatched input: (C, L)
      assert.same({ 5, 8 }, os_({ 3, 10 }, { 5, 3, 3 }, {}))
      -- transposed: (4 - 1)*2 - 2*1 + 1*(3 - 1) + 1 + 1 = 8; out channels = w[2] * groups
      assert.same({ 2, 6, 8 }, os_({ 2, 4, 4 }, { 4, 3, 3 }, { stride = 2, padding = 1, output_padding = 1, groups = 2 }, true))
      -- transposed 2-D with dilation: H (5-1)*1 + 3*(2) + 1 = 11, W (6-1)*3 - 2 + 1*(4) + 2 + 1 = 20
      assert.same({ 1, 2, 11, 20 }, os_({ 1, 3, 5, 6 }, { 3, 2, 3, 5 },
        { stride = { 1, 3 }, padding = { 0, 1 }, dilation = { 3, 1 }, output_padding = { 0, 2 } }, true))
      -- transposed 3-D unbatched; an output_padding below the dilation but not the stride (PyTorch
      -- allows either): D (3-1)*1 + 2*(3-1) + 1 + 1 = 8, H (2-1)*2 + 0 + 1 + 1 = 4, W (3-1)*2 + 2 = 6
      assert.same({ 4, 8, 4, 6 }, os_({ 2, 3, 2, 3 }, { 2, 4, 3, 1, 1 },
        { dilation = { 2, 1, 1 }, output_padding = { 1, 1, 1 }, stride = { 1, 2, 2 } }, true))
    end)

    it("matches PyTorch for KernelBench level 1's 35 convolutions", function()
      local ids = {}
      for _, p in ipairs(PROBLEMS) do
        local opts = split(p)
        assert.same(p[6], conv.output_shape(p[3], p[4], opts, p[2]), "problem " .. p[1])
        ids[p[1]] = true
      end
      local n = 0
      for _ in pairs(ids) do n = n + 1 end
      assert.equal(35, n)
    end)
  end)

  describe("refuses what PyTorch refuses, clearly", function()
    local lib = ops.get(true)
    local function M(shape, dt) return meta.new(shape, dt or "f32") end
    local x, w, y = M({ 2, 4, 10, 10 }), M({ 8, 4, 3, 3 }), M({ 2, 8, 8, 8 })
    local cases = {
      { "y's shape, naming both", function() lib.conv(x, w, M({ 2, 8, 9, 8 })) end,
        "conv: y is {2, 8, 9, 8} but PyTorch's output for x {2, 4, 10, 10} and w {8, 4, 3, 3} is {2, 8, 8, 8}" },
      { "channels", function() lib.conv(M({ 2, 5, 10, 10 }), w, y) end,
        "Given groups=1, weight of size {8, 4, 3, 3}, expected input {2, 5, 10, 10} to have 4 channels, but got 5 channels instead" },
      { "groups dividing out_channels", function() lib.conv(M({ 2, 6, 10, 10 }), M({ 8, 2, 3, 3 }), y, { groups = 3 }) end,
        "out_channels (8) must be divisible by groups (3)" },
      { "groups dividing in_channels (transposed)", function()
          lib.conv_transpose(M({ 2, 5, 4, 4 }), M({ 5, 2, 3, 3 }), M({ 2, 4, 6, 6 }), { groups = 2 }) end,
        "in_channels (5) must be divisible by groups (2)" },
      { "transposed channels", function()
          lib.conv_transpose(M({ 2, 5, 4, 4 }), M({ 4, 2, 3, 3 }), M({ 2, 2, 6, 6 })) end,
        "Given transposed=1, weight of size {4, 2, 3, 3}, expected input {2, 5, 4, 4} to have 4 channels, but got 5 channels instead" },
      { "groups", function() lib.conv(x, w, y, { groups = 0 }) end, "groups is 0, expected a positive integer" },
      { "stride", function() lib.conv(x, w, y, { stride = 0 }) end, "stride should be greater than zero" },
      { "dilation", function() lib.conv(x, w, y, { dilation = { 1, 0 } }) end, "dilation should be greater than zero" },
      { "negative padding", function() lib.conv(x, w, y, { padding = -1 }) end, "negative padding is not supported" },
      { "a list of the wrong length", function() lib.conv(x, w, y, { stride = { 1, 1, 1 } }) end,
        "stride is {1, 1, 1}, expected an integer or a list of 2 integers" },
      { "a non-integer", function() lib.conv(x, w, y, { padding = 1.5 }) end,
        "padding is 1.5, expected an integer or a list of 2 integers" },
      { "an unknown option", function() lib.conv(x, w, y, { strides = 2 }) end, "unknown option 'strides'" },
      { "output_padding on conv", function() lib.conv(x, w, y, { output_padding = 1 }) end,
        "output_padding is an option of conv_transpose, not of conv" },
      { "output_padding too large", function()
          lib.conv_transpose(M({ 1, 4, 5 }), M({ 4, 2, 3 }), M({ 1, 2, 11 }), { stride = 2, output_padding = 2 }) end,
        "output padding must be smaller than either stride or dilation, but got output_padding 2, stride 2, dilation 1" },
      { "'same' with a stride", function() lib.conv(x, w, y, { padding = "same", stride = 2 }) end,
        "padding='same' is not supported for strided convolutions" },
      { "string padding on conv_transpose", function()
          lib.conv_transpose(M({ 1, 4, 5 }), M({ 4, 2, 3 }), M({ 1, 2, 7 }), { padding = "same" }) end,
        "a transposed convolution takes integers" },
      { "a kernel larger than the padded input", function() lib.conv(M({ 1, 4, 2, 10 }), w, y) end,
        "along spatial dimension 1 the padded input (2) is smaller than the dilated kernel (3)" },
      { "a transposed output too small", function()
          lib.conv_transpose(M({ 1, 4, 1 }), M({ 4, 2, 1 }), M({ 1, 2, 1 }), { padding = 1 }) end,
        "the output size along spatial dimension 1 would be -1 (too small)" },
      { "x's rank", function() lib.conv(M({ 2, 4, 10, 10, 10 }), w, y) end,
        "x is {2, 4, 10, 10, 10}: expected 3 (unbatched) or 4 (batched) dimensions for the 2-D weight {8, 4, 3, 3}" },
      { "w's rank", function() lib.conv(x, M({ 8, 4 }), y) end, "w is {8, 4}: expected (out_channels, in_channels/groups, k1[, k2[, k3]])" },
      { "dtypes", function() lib.conv(x, M({ 8, 4, 3, 3 }, "bf16"), y) end, "conv: w is bf16, expected f32" },
      { "an integer x", function() lib.conv(M({ 2, 4, 10, 10 }, "i32"), w, y) end, "a floating dtype is needed" },
      { "bias's shape", function() lib.conv(x, w, y, { bias = M({ 4 }) }) end, "bias is {4}, expected {8} (out_channels)" },
      { "bias's dtype", function() lib.conv(x, w, y, { bias = M({ 8 }, "f64") }) end, "bias is f64, expected f32" },
      { "the algorithm", function() lib.conv(x, w, y, { algo = "fft" }) end,
        "algo is 'fft', expected 'auto', 'gemm', 'mma' or 'direct'" },
      { "mma at f32", function() lib.conv(x, w, y, { algo = "mma" }) end, "algo 'mma' (tensor cores) is for f16 and bf16, not f32" },
      { "a GEMM at f64", function() lib.conv(M({ 2, 4, 10, 10 }, "f64"), M({ 8, 4, 3, 3 }, "f64"), M({ 2, 8, 8, 8 }, "f64"), { algo = "gemm" }) end,
        "algo 'gemm' has no f64 kernel" },
      { "options that are no table", function() lib.conv(x, w, y, 3) end, "options are number, not a table" },
    }
    for _, c in ipairs(cases) do
      it(c[1], function()
        local err = err_of(c[2])
        assert.matches(c[3], err, 1, true)
        assert.is_false(y:written())
      end)
    end

    it("output_shape raises the same messages", function()
      local err = err_of(conv.output_shape, { 2, 5, 10, 10 }, { 8, 4, 3, 3 }, {})
      assert.matches("conv: Given groups=1, weight of size {8, 4, 3, 3}", err, 1, true)
      err = err_of(conv.output_shape, { 1, 4, 5 }, { 4, 2, 3 }, { stride = 2, output_padding = 3 }, true)
      assert.matches("conv_transpose: output padding must be smaller", err, 1, true)
    end)
  end)

  describe("on shape-only tensors", function()
    it("checks and records the writes of the 35 problems at every dtype, launching nothing", function()
      local lib = ops.get(true)
      for _, p in ipairs(PROBLEMS) do
        for _, dt in ipairs(DTYPES) do
          local opts, bshape = split(p)
          if bshape then opts.bias = meta.new(bshape, dt, "bias") end
          local x, w, y = meta.new(p[3], dt, "x"), meta.new(p[4], dt, "w"), meta.new(p[6], dt, "y")
          assert.equal(y, call(lib, p[2], x, w, y, opts))
          assert.is_true(y:written(), "problem " .. p[1])
          assert.is_false(x:written())
          assert.is_false(w:written())
        end
      end
    end)

    it("accepts unbatched inputs, a bias, 'same' padding and integral floats", function()
      local lib = ops.get(true)
      local y = meta.new({ 5, 10 }, "bf16")
      lib.conv(meta.new({ 3, 10 }, "bf16"), meta.new({ 5, 3, 3 }, "bf16"), y,
        { padding = "same", bias = meta.new({ 5 }, "bf16"), stride = 1.0 })
      assert.is_true(y:written())
    end)
  end)

  -- PyTorch eager runs its own depthwise kernels, not cuDNN, at f32 and bf16: of KernelBench's
  -- convolutions exactly 82 to 85 and 86's first (depthwise) half; there kreach's cuDNN
  -- baseline takes the fastest engine instead of the heuristics' first (docs/scripting.md)
  it("knows where PyTorch does not call cuDNN (depthwise at f32 and bf16)", function()
    local native = {}
    for _, p in ipairs(PROBLEMS) do
      local opts = split(p)
      local g = assert(conv.resolve(p[3], p[4], opts, p[2]))
      for _, dt in ipairs({ "f32", "bf16", "f16" }) do
        local n = conv.pytorch_depthwise_native(g, p[2], dt)
        assert.equal(dt ~= "f16" and n, n)
        if dt == "f32" and n then native[#native + 1] = p[1] end
      end
    end
    assert.same({ 82, 83, 84, 85, 86 }, native)
    -- a 1-D depthwise convolution too (PyTorch views it as 2-D); a channel multiplier of 2; not
    -- a grouped one with groups < channels, nor a transposed one
    local function native_of(x, w, o, tr) return conv.pytorch_depthwise_native(assert(conv.resolve(x, w, o, tr)), tr, "f32") end
    assert.is_true(native_of({ 2, 4, 9 }, { 4, 1, 3 }, { groups = 4 }, false))
    assert.is_true(native_of({ 2, 4, 9, 9 }, { 8, 1, 3, 3 }, { groups = 4 }, false))
    assert.is_false(native_of({ 2, 4, 9, 9 }, { 4, 2, 3, 3 }, { groups = 2 }, false))
    assert.is_false(native_of({ 2, 4, 9, 9 }, { 4, 1, 3, 3 }, { groups = 4 }, true))
    assert.is_true(native_of({ 4, 9, 9 }, { 4, 1, 3, 3 }, { groups = 4 }, false)) -- unbatched, as PyTorch batches it
    assert.equal("fastest", conv.cudnn_select(assert(conv.resolve({ 2, 4, 9, 9 }, { 4, 1, 3, 3 }, { groups = 4 })), false, "f32"))
  end)

  describe("plans", function()
    local function plan_of(p, dt)
      local opts, bshape = split(p)
      local g = assert(conv.resolve(p[3], p[4], opts, p[2]))
      return assert(conv.plan(g, dt, bshape ~= nil)), g
    end

    it("use the oracle at f64, tensor cores at 16 bits, SIMT FMA at f32, the direct kernel for depthwise", function()
      for _, p in ipairs(PROBLEMS) do
        local depthwise = (p[5].groups or 1) > 1 and p[4][2] == 1
        assert.equal("direct", plan_of(p, "f64").algo)
        assert.equal(depthwise and "direct" or "gemm", plan_of(p, "f32").algo, "problem " .. p[1])
        assert.equal(depthwise and "direct" or "mma", plan_of(p, "bf16").algo)
        assert.equal(depthwise and "direct" or "mma", plan_of(p, "f16").algo)
      end
    end)

    it("split a strided transposed convolution into its phases", function()
      -- problem 81: stride 5 in two dimensions, 25 phases, 32 input channels a group
      local plan = plan_of(PROBLEMS[29], "f32")
      assert.equal(81, PROBLEMS[29][1])
      local gemm = plan.launches[2]
      assert.equal(25, gemm.grid[3])
      -- problem 79: stride 2, dilation 2: half the outputs meet no tap (they are written zero)
      plan = plan_of(PROBLEMS[27], "f32")
      assert.equal(79, PROBLEMS[27][1])
      assert.equal(2, plan.launches[2].grid[3])
    end)
  end)

  describe("kernels", function()
    local progs = {}
    local function prog_at(dt)
      if not progs[dt] then
        local src = conv.sources[1]
        local prog, err = kreach.build{ source = ops.compile_source("conv", src.source), arch = "sm_90",
          name = "kreach_ops_conv.cu", options = ops.OPTIONS, instantiate = src.instantiate(ops.CTYPE[dt], dt) }
        assert(prog, ("conv at %s:\n%s"):format(dt, tostring(err)))
        progs[dt] = prog
      end
      return progs[dt]
    end

    it("every instantiation compiles with NVRTC for sm_90 at every float dtype", function()
      local want = { f64 = 18, f32 = 23, bf16 = 29, f16 = 29 }
      for _, dt in ipairs(DTYPES) do
        local prog = prog_at(dt)
        assert.equal(want[dt], #prog.kernels, dt)
        for _, name in ipairs(conv.sources[1].instantiate(ops.CTYPE[dt], dt)) do
          assert.is_not_nil(prog:kernel(name), name)
        end
      end
    end)

    -- experiments/conv/emulate.lua compiles the kernels as C++ with a small emulation of CUDA
    -- (threads, barriers, mma.sync from the PTX ISA's fragment layout) and runs the launches
    -- kreach.ops.conv plans, against a reference written from the definition
    it("run on the CPU by experiments/conv/emulate.lua, match the definition", function()
      if not os.execute("command -v g++ >/dev/null 2>&1") then
        pending("no g++")
        return
      end
      local p = assert(io.popen(("'%s' experiments/conv/emulate.lua --cases 2 2>&1"):format(kreach.executable())))
      local out = p:read("a")
      local ok = p:close()
      assert(ok and out:match("runs, 0 off"), out)
    end)

    it("every launch of the 35 problems at full size passes sm_90's launch checks", function()
      for _, p in ipairs(PROBLEMS) do
        for _, dt in ipairs(DTYPES) do
          local opts, bshape = split(p)
          local g = assert(conv.resolve(p[3], p[4], opts, p[2]))
          local plan = assert(conv.plan(g, dt, bshape ~= nil))
          local t = { x = meta.new(p[3], dt), w = meta.new(p[4], dt), y = meta.new(p[6], dt),
                      bias = bshape and meta.new(bshape, dt) or nil,
                      wp = plan.scratch and meta.new({ plan.scratch }, dt) or nil }
          local prog = prog_at(dt)
          for _, l in ipairs(plan.launches) do
            local args = {}
            for i, a in ipairs(l.args) do args[i] = type(a) == "string" and t[a] or a end
            local ok, err = pcall(function()
              return prog[l.kernel]{ grid = l.grid, block = l.block }:check(table.unpack(args, 1, #l.args))
            end)
            assert(ok, ("problem %d at %s, %s: %s"):format(p[1], dt, l.kernel, tostring(err)))
          end
        end
      end
    end)
  end)
end)

-- The GPU specs' host reference (tests/lua/support.lua), against convolutions small enough to
-- work out by hand: it is what the cuDNN and NVRTC convolutions are held to.
describe("the host reference convolution of the GPU specs", function()
  local support = require "support"
  local function conv(c, X, W, B)
    c.stride = c.stride or { 1 }
    c.padding = c.padding or { 0 }
    c.dilation = c.dilation or { 1 }
    c.groups = c.groups or 1
    c.y = support.conv_out_shape(c)
    return support.conv_reference(c, X, W, B), c.y
  end

  it("gathers for a convolution: stride, padding, dilation, groups and bias", function()
    assert.same({ 3, 5 }, (conv({ x = { 1, 1, 3 }, w = { 1, 1, 2 } }, { 1, 2, 3 }, { 1, 1 })))
    local y, shape = conv({ x = { 1, 1, 4 }, w = { 1, 1, 3 }, stride = { 2 }, padding = { 1 } }, { 1, 2, 3, 4 }, { 1, 1, 1 })
    assert.same({ 1, 1, 2 }, shape)
    assert.same({ 3, 9 }, y)
    -- two groups of one channel each
    assert.same({ 10, 20, 300, 400 }, (conv({ x = { 1, 2, 2 }, w = { 2, 1, 1 }, groups = 2 }, { 1, 2, 3, 4 }, { 10, 100 })))
    assert.same({ 11, 21, 302, 402 }, (conv({ x = { 1, 2, 2 }, w = { 2, 1, 1 }, groups = 2 }, { 1, 2, 3, 4 }, { 10, 100 }, { 1, 2 })))
    -- 2-D, dilation 2: the corners of a 3 x 3 input
    local X = {}
    for i = 1, 9 do X[i] = i end
    local y2, s2 = conv({ x = { 1, 1, 3, 3 }, w = { 1, 1, 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 2, 2 } },
      X, { 1, 0, 0, 1 })
    assert.same({ 1, 1, 1, 1 }, s2)
    assert.same({ 10 }, y2)
  end)

  it("scatters for a transposed convolution, with the weight laid out (C_in, C_out / groups, k)", function()
    local y, shape = conv({ transposed = true, x = { 1, 1, 2 }, w = { 1, 1, 2 } }, { 1, 2 }, { 1, 10 })
    assert.same({ 1, 1, 3 }, shape)
    assert.same({ 1, 12, 20 }, y)
    assert.same({ 1, 10, 2, 20 }, (conv({ transposed = true, x = { 1, 1, 2 }, w = { 1, 1, 2 }, stride = { 2 } }, { 1, 2 }, { 1, 10 })))
    -- output padding lengthens the output; the extra element only gets the bias
    local yp, sp = conv({ transposed = true, x = { 1, 1, 2 }, w = { 1, 1, 2 }, stride = { 2 }, output_padding = { 1 } },
      { 1, 2 }, { 1, 10 }, { 5 })
    assert.same({ 1, 1, 5 }, sp)
    assert.same({ 6, 15, 7, 25, 5 }, yp)
  end)

  it("measures a relative L2 error", function()
    assert.equals(0, support.rel_l2({ 1, 2 }, { 1, 2 }))
    assert.near(0.25, support.rel_l2({ 0, 1.5 }, { 0, 2 }), 1e-15)
  end)
end)
