-- kreach.ops.conv: convolutions with PyTorch's semantics: conv(x, w, y, opts) is
-- nn.ConvNd's forward, conv_transpose(x, w, y, opts) nn.ConvTransposeNd's, in 1, 2 or 3
-- spatial dimensions, with stride, padding, dilation, groups, bias and output_padding.
--
-- f64 is the oracle: a direct convolution (conv_direct; the transposed one gathers: each
-- output sums the taps whose input position is whole), accumulating in fp64.
-- f32, bf16 and f16 are the baseline, an implicit GEMM per (group, phase) accumulating in fp32
-- (no TF32, no fast math): rows are output positions, columns output channels, and the
-- reduction runs over (kernel tap, input channel) pairs, gathered from x into shared memory
-- (zero where the window leaves the input). f32 multiplies with SIMT FMA (conv_gemm); bf16 and
-- f16 with tensor-core mma.sync m16n8k16 (conv_mma: products exact, sums in fp32).
-- A transposed convolution is computed as the gradient of the input, without atomics: the
-- outputs o = ph + q*s of one phase ph (per dimension) meet the kernel taps kk with
-- kk*dil = ph + p (mod s), an arithmetic progression, at input q + c0 - j*dstep, so each phase
-- is an ordinary strided-by-one convolution over its taps (phases without taps write the bias).
-- The weights are repacked per call into the GEMM's (group, phase, k, co) order (conv_pack).
-- Convolutions with at most 4 output channels per group (depthwise ones) run the direct kernel
-- at every dtype: the GEMM's column tile would be mostly idle, and they are memory-bound.
--
-- Which implementation runs is decided in one place, choose_backend(dtype): cuDNN where
-- kreach.cudnn finds it (the baseline PyTorch itself runs), else the kernels here, planned by
-- plan() (kreach.ops.conv.plan); lib.conv_last says which ran.
--
-- The parts: shapes (options and shapes, resolve), plan (which kernel, the launches), backend
-- (cuDNN), and the CUDA: gemm (the implicit GEMMs and their helpers) and direct. This file puts
-- the source together and installs the operators; it re-exports what the others require.
local backends = require "kreach.ops.conv.backend"
local direct = require "kreach.ops.conv.direct"
local gemm = require "kreach.ops.conv.gemm"
local plans = require "kreach.ops.conv.plan"
local shapes = require "kreach.ops.conv.shapes"

local MMA = gemm.MMA
local BODY = gemm.COMMON .. gemm.PACK .. gemm.SIMT .. gemm.TENSOR .. direct.SOURCE
local SRC = MMA .. BODY

local M = {}

local shape_str, DIRECT_MAX_COUT = shapes.shape_str, plans.DIRECT_MAX_COUT

-- the geometry and the output sizes (kreach.ops.conv.shapes)
M.resolve = shapes.resolve
M.out_len = shapes.out_len
M.transposed_out_len = shapes.transposed_out_len
M.output_shape = shapes.output_shape
-- the backend (kreach.ops.conv.backend)
M.choose_backend = backends.choose_backend
M.pytorch_depthwise_native = backends.pytorch_depthwise_native
M.cudnn_select = backends.cudnn_select
-- the plans (kreach.ops.conv.plan): the tables are the plan's own, so that a change to
-- conv.TILES[algo] (experiments/conv) holds for the plans
M.CONFIGS = plans.CONFIGS
M.TILES = plans.TILES
M.limits = plans.limits
M.instantiate = plans.instantiate
M.DTYPE_CTYPE = plans.DTYPE_CTYPE
M.algorithm = plans.algorithm
M.plan = plans.plan

-- ---- the operators ----

local function install(lib, K)
  local function run(op, transposed, x, w, y, opts)
    K.check_float(op, x, "x")
    K.check_tensor(op, w, "w")
    K.check_tensor(op, y, "y")
    K.check_dtype(op, w, x.dtype, "w")
    K.check_dtype(op, y, x.dtype, "y")
    if opts ~= nil and type(opts) ~= "table" then
      K.fail(op, "options are %s, not a table", type(opts))
    end
    opts = opts or {}
    local bias = opts.bias
    if bias == false then bias = nil end
    local g, err = M.resolve(x.shape, w.shape, opts, transposed)
    if not g then K.fail(op, "%s", err) end
    if bias ~= nil then
      K.check_tensor(op, bias, "bias")
      K.check_dtype(op, bias, x.dtype, "bias")
      if bias:dim() ~= 1 or bias:size(1) ~= g.Co then
        K.fail(op, "bias is %s, expected {%d} (out_channels)", shape_str(bias.shape), g.Co)
      end
    end
    if not K.same_shape(y.shape, g.yshape) then
      K.fail(op, "y is %s but PyTorch's output for x %s and w %s is %s", shape_str(y.shape),
        shape_str(x.shape), shape_str(w.shape), shape_str(g.yshape))
    end
    local dtype = x.dtype
    local plan
    plan, err = M.plan(g, dtype, bias ~= nil)
    if not plan then K.fail(op, "%s", err) end
    if not K.writes(y) then return y end
    if y:numel() == 0 then return y end
    local backend = dtype == "f64" and "oracle" or M.choose_backend(dtype)
    local why_not
    if backend == "cudnn" and backends.takes(g) then
      local ok, r = backends.run(g, transposed, x, w, y, bias)
      if ok then
        lib.conv_last = { backend = "cudnn", algo = r, version = backends.version() }
        return y
      end
      why_not = r
    end
    if backend == "cudnn" then backend = "nvrtc" end
    lib.conv_last = { backend = backend, why_not_cudnn = why_not }
    K.variant("conv", dtype, table.unpack(plan.variants))
    local tensors = { x = x, w = w, y = y, bias = bias }
    if plan.scratch then tensors.wp = K.empty({ plan.scratch }, dtype) end
    for _, l in ipairs(plan.launches) do
      local prog = K.program("conv", SRC, dtype, function() return { l.kernel } end, l.kernel)
      local args = {}
      for i, a in ipairs(l.args) do
        if type(a) == "string" then args[i] = tensors[a] else args[i] = a end
      end
      prog[l.kernel]{ grid = l.grid, block = l.block }(table.unpack(args, 1, #l.args))
    end
    return y
  end

  -- y = convNd(x, w) (nn.ConvNd's forward): x (N, C, d1..dk) or (C, d1..dk), w (Co, C/groups,
  -- k1..kk), y PyTorch's output shape. opts: stride, padding (integers, lists, 'valid' or
  -- 'same'), dilation, groups, bias (a tensor of Co), algo ('auto', 'gemm', 'mma', 'direct').
  function lib.conv(x, w, y, opts) return run("conv", false, x, w, y, opts) end
  -- y = conv_transposeNd(x, w) (nn.ConvTransposeNd's forward): w (C, Co/groups, k1..kk); opts
  -- as conv's (no string padding) and output_padding.
  function lib.conv_transpose(x, w, y, opts) return run("conv_transpose", true, x, w, y, opts) end
  -- which implementation computes a call at this dtype: "oracle" (f64) or the baseline's backend
  -- ("cudnn" or "nvrtc"); lib.conv_last says what the last call ran ({backend =, algo =, version =})
  function lib.conv_backend(dtype)
    if dtype == "f64" or dtype == "float64" then return "oracle" end
    return M.choose_backend(dtype)
  end
end

-- the size-selected paths (kreach.ops' header), the GEMMs' from their compiled configurations
-- (a configuration that M.TILES does not pick is reached only by experiments that change it)
local function tile_variants(algo, what)
  local out = {}
  for _, c in ipairs(M.CONFIGS[algo]) do
    local lo, hi
    for i, row in ipairs(M.TILES[algo]) do
      if row[2] == c or table.concat(row[2], "x") == table.concat(c, "x") then
        lo = math.max(row[1], DIRECT_MAX_COUT + 1)
        hi = i > 1 and M.TILES[algo][i - 1][1] - 1 or nil
      end
    end
    local name = algo .. "." .. table.concat(c, "x")
    if lo then
      out[#out + 1] = { name = name, when = ("%s with %s output channels a group: tiles of %d x %d"):format(
        what, hi and ("%d to %d"):format(lo, hi) or ("%d or more"):format(lo), c[1], c[2]) }
    else
      out[#out + 1] = { name = name, when = ("%s with tiles of %d x %d"):format(what, c[1], c[2]),
                        unreachable = "no size selects it (conv.TILES does not list it): only experiments that change conv.TILES" }
    end
  end
  return out
end
local VARIANTS = {
  { name = "direct.co1", when = "the direct kernel (f64, the oracle, and at most 4 output channels a group) with 1 output channel a group" },
  { name = "direct.co2", when = "the direct kernel with 2 or 3 output channels a group: 2 a thread" },
  { name = "direct.co4", when = "the direct kernel with 4 or more output channels a group: 4 a thread" },
  { name = "direct.co_partial", when = "the direct kernel with output channels a group not a multiple of its 2 or 4 a thread" },
  { name = "direct.v1", when = "the direct kernel, one output a thread (short output rows)" },
  { name = "direct.v2", when = "the direct kernel, two outputs a thread (as an output row of 64)" },
  { name = "direct.v4", when = "the direct kernel, four outputs a thread (as an output row of 128)" },
  { name = "direct.transposed.v1", when = "the transposed direct kernel (gathering), one output a thread" },
  { name = "direct.transposed.v2", when = "the transposed direct kernel, two outputs a thread" },
  { name = "direct.transposed.v4", when = "the transposed direct kernel, four outputs a thread" },
  { name = "pack.loop", when = "more repacked weights than conv_pack's blocks cover (limit pack_grid_max): several a thread" },
}
for _, v in ipairs(tile_variants("gemm", "conv_gemm (f32)")) do VARIANTS[#VARIANTS + 1] = v end
for _, v in ipairs(tile_variants("mma", "conv_mma (bf16, f16)")) do VARIANTS[#VARIANTS + 1] = v end
for _, algo in ipairs({ "gemm", "mma" }) do
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".transposed", when = algo .. " over the phases of a transposed convolution" }
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".mtiles", when = algo .. " with more output positions than one tile's rows" }
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".ntiles", when = algo .. " with more output channels a group than one tile's columns" }
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".z_loop", when = algo .. " with more (group, phase) pairs than the grid's z (limit z_max)" }
  VARIANTS[#VARIANTS + 1] = { name = algo .. ".wide", when = algo .. " with 2^32 GEMM rows or more: 64-bit row decoding",
    unreachable = "decided inside the kernel (t.Mp > 0xffffffff), which no limit lowers, at sizes far beyond the host device" }
end

M.variants = VARIANTS
M.install = install
M.sources = { { name = "conv", source = SRC, instantiate = plans.instantiate } }
-- for the CPU emulation of the kernels (experiments/conv): the source without the
-- tensor-core instructions, and those
M.body_source = BODY
M.mma_source = MMA


return M
