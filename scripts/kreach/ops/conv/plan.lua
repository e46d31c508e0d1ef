-- kreach.ops.conv.plan: the launches of one convolution: which kernel computes it (direct,
-- the SIMT GEMM or the tensor-core one), the compiled tile configurations and the ones the
-- sizes pick, every kernel instantiation at a dtype, and the grids and arguments.
local pool = require "kreach.ops.pool"
local shapes = require "kreach.ops.conv.shapes"

local M = {}

local shape_str, LIMIT = shapes.shape_str, shapes.LIMIT

local THREADS = 256
-- The GEMMs' tile configurations that are compiled: conv_gemm { BM, BN, TN, MINB } (threads
-- (BM/8) x (BN/TN)), conv_mma { BM, BN, WM, WN, MINB } (threads 2 BM).
M.CONFIGS = {
  gemm = { { 256, 64, 8, 2 }, { 128, 32, 4, 1 }, { 128, 16, 2, 1 }, { 128, 128, 8, 1 } },
  mma = { { 128, 128, 64, 32, 2 }, { 64, 64, 32, 32, 1 }, { 64, 32, 32, 16, 1 },
          { 128, 16, 16, 16, 1 }, { 128, 128, 64, 32, 1 } },
}
-- Which configuration runs, by output channels a group: the first row whose minimum is at most
-- Cout_g. A table, so that experiments can try others (experiments/conv/time.lua --sweep).
-- Chosen on the H200 (2026-12-04) from a sweep of 10 SIMT and 8 tensor-core configurations
-- over problems 55, 63, 87 (128 output channels), 62 (64) and 71 (32): two blocks a
-- multiprocessor (a register budget of 128, a few spilled bytes) beat one block of larger
-- tiles, 256 x 64 by 1.1 to 1.3 times at f32 and 128 x 128 by 1.5 to 1.7 times at bf16.
M.TILES = {
  gemm = { { 33, { 256, 64, 8, 2 } }, { 17, { 128, 32, 4, 1 } }, { 1, { 128, 16, 2, 1 } } },
  mma = { { 65, { 128, 128, 64, 32, 2 } }, { 33, { 64, 64, 32, 32, 1 } },
          { 17, { 64, 32, 32, 16, 1 } }, { 1, { 128, 16, 16, 16, 1 } } },
}
local function kernel_name(algo, T, cfg)
  local fmt = algo == "gemm" and "conv_gemm<%s, %d, %d, %d, %d>" or "conv_mma<%s, %d, %d, %d, %d, %d>"
  return fmt:format(T, table.unpack(cfg))
end
local function threads_of(algo, cfg)
  if algo == "gemm" then return (cfg[1] // 8) * (cfg[2] // cfg[3]) end
  return 32 * (cfg[1] // cfg[3]) * (cfg[2] // cfg[4])
end
-- the caps a test may lower (kreach.ops.with_limits): conv_pack's blocks, and the grid's z
-- (a block loops over the (group, phase) pairs beyond it)
local LIMITS = { pack_grid_max = 8192, z_max = 65535 }
M.limits = LIMITS
local DIRECT_MAX_COUT = 4 -- output channels a group up to which the direct kernel runs
M.DIRECT_MAX_COUT = DIRECT_MAX_COUT
local VS, COS = { 1, 2, 4 }, { 1, 2, 4 }
local MMA_DTYPES = { f16 = true, bf16 = true }

-- Every kernel instantiation at a dtype (the C type T): f64 has the direct kernel only (the
-- oracle), f16 and bf16 also the tensor-core GEMM.
local function instantiate(T, dtype)
  local inst = {}
  for _, tr in ipairs({ "false", "true" }) do
    for _, v in ipairs(VS) do
      for _, co in ipairs(COS) do inst[#inst + 1] = ("conv_direct<%s, %s, %d, %d>"):format(T, tr, v, co) end
    end
  end
  if dtype == "f64" then return inst end
  inst[#inst + 1] = ("conv_pack<%s, true>"):format(T)
  for _, c in ipairs(M.CONFIGS.gemm) do inst[#inst + 1] = kernel_name("gemm", T, c) end
  if MMA_DTYPES[dtype] then
    inst[#inst + 1] = ("conv_pack<%s, false>"):format(T)
    for _, c in ipairs(M.CONFIGS.mma) do inst[#inst + 1] = kernel_name("mma", T, c) end
  end
  return inst
end
M.instantiate = instantiate
M.DTYPE_CTYPE = { f64 = "double", f32 = "float", f16 = "__half", bf16 = "__nv_bfloat16" }

-- The direct kernel's block width TX and outputs per thread V for rows of OW: as
-- kreach.ops.pool tiles its rows.
local direct_tile = pool.direct_tile

local function pad3(t, fill, n)
  local r = {}
  for i = 1, 3 - n do r[i] = fill end
  for i = 1, n do r[#r + 1] = t[i] end
  return r
end

-- Which kernel computes a call: "direct", "gemm" or "mma"; nil and a message when the asked-for
-- one cannot.
function M.algorithm(g, dtype)
  local a = g.algo
  if dtype == "f64" then
    if a ~= "auto" and a ~= "direct" then
      return nil, ("algo '%s' has no f64 kernel: f64 is the oracle, a direct convolution"):format(a)
    end
    return "direct"
  end
  if a == "mma" and not MMA_DTYPES[dtype] then
    return nil, ("algo 'mma' (tensor cores) is for f16 and bf16, not %s"):format(dtype)
  end
  if a ~= "auto" then return a end
  if g.Cout_g <= DIRECT_MAX_COUT then return "direct" end
  return MMA_DTYPES[dtype] and "mma" or "gemm"
end

-- The launches of one call: { algo =, scratch = elements of repacked weights or nil,
-- launches = { { kernel =, grid =, block =, args = {...} } } }. A string among the args names a
-- tensor: "x", "w", "bias", "y", "wp" (the scratch). Raises nothing; returns nil and a message
-- when a launch would exceed a grid.
function M.plan(g, dtype, has_bias)
  local algo, err = M.algorithm(g, dtype)
  if not algo then return nil, err end
  local T = M.DTYPE_CTYPE[dtype]
  local n = g.n
  local I, O = pad3(g.spatial, 1, n), pad3(g.out, 1, n)
  local k3, s3, p3, d3 = pad3(g.k, 1, n), pad3(g.stride, 1, n), pad3(g.pad, 0, n), pad3(g.dilation, 1, n)
  local geo = { k3[1], k3[2], k3[3], s3[1], s3[2], s3[3], p3[1], p3[2], p3[3], d3[1], d3[2], d3[3] }
  local bias_arg = has_bias and "bias" or "y"
  local launches = {}
  -- variants: the paths the launches take (M.variants; run() names them)
  local variants = {}
  local plan = { algo = algo, launches = launches, variants = variants }
  if algo == "direct" then
    local CO = g.Cout_g >= 4 and 4 or (g.Cout_g >= 2 and 2 or 1)
    local cob = (g.Cout_g + CO - 1) // CO
    local tx, v = direct_tile(O[3])
    variants[1] = "direct.co" .. CO
    variants[2] = (g.transposed and "direct.transposed.v" or "direct.v") .. v
    if g.Cout_g % CO ~= 0 then variants[3] = "direct.co_partial" end
    local ty = THREADS // tx
    local rows = g.N * g.groups * cob * O[1] * O[2]
    local w_tiles = (O[3] + tx * v - 1) // (tx * v)
    local grid = w_tiles * ((rows + ty - 1) // ty)
    if grid > LIMIT then
      return nil, ("y is %s: %d blocks are more than one launch takes"):format(shape_str(g.yshape), grid)
    end
    local args = { "x", "w", bias_arg, "y", rows, w_tiles, g.C, I[1], I[2], I[3], g.Co, O[1], O[2],
                   O[3], g.Cin_g, g.Cout_g, cob, has_bias }
    for _, a in ipairs(geo) do args[#args + 1] = a end
    launches[1] = { kernel = ("conv_direct<%s, %s, %d, %d>"):format(T, g.transposed and "true" or "false", v, CO),
                    grid = grid, block = { tx, ty, 1 }, args = args }
    return plan
  end
  -- the GEMM: phases, the padded reduction length, and the repacked weights
  local nph, ntmax, qmax = 1, 1, 1
  for d = 1, 3 do
    if g.transposed then
      local a, b = s3[d], d3[d]
      while b ~= 0 do a, b = b, a % b end
      local kstep = s3[d] // a
      nph = nph * s3[d]
      ntmax = ntmax * ((k3[d] + kstep - 1) // kstep)
      qmax = qmax * ((O[d] + s3[d] - 1) // s3[d])
    else
      ntmax = ntmax * k3[d]
      qmax = qmax * O[d]
    end
  end
  local Kmax = (g.Cin_g * ntmax + 31) // 32 * 32
  local nz = g.groups * nph
  local total = nz * Kmax * g.Cout_g
  plan.scratch = total
  local pk = { "w", "wp", total, g.Cin_g, g.Cout_g, Kmax, nph, g.transposed }
  for _, a in ipairs(geo) do pk[#pk + 1] = a end
  local pgrid = math.max(1, math.min((total + THREADS - 1) // THREADS, LIMITS.pack_grid_max))
  if pgrid * THREADS < total then variants[#variants + 1] = "pack.loop" end
  launches[1] = { kernel = ("conv_pack<%s, %s>"):format(T, algo == "gemm" and "true" or "false"),
                  grid = pgrid, block = THREADS, args = pk }
  local cfg
  for _, row in ipairs(M.TILES[algo]) do
    if g.Cout_g >= row[1] then cfg = row[2]; break end
  end
  local name = cfg and kernel_name(algo, T, cfg)
  local known = false
  for _, c in ipairs(M.CONFIGS[algo]) do
    if cfg and kernel_name(algo, T, c) == name then known = true end
  end
  if not known then
    return nil, ("no compiled %s tile configuration for %d output channels a group"):format(algo, g.Cout_g)
  end
  local BM, BN = cfg[1], cfg[2]
  local mt = (g.N * qmax + BM - 1) // BM
  local nt = (g.Cout_g + BN - 1) // BN
  if mt > LIMIT or nt > 65535 then
    return nil, ("y is %s: %d x %d blocks are more than one launch takes"):format(shape_str(g.yshape), mt, nt)
  end
  if mt == 0 then return plan end
  local args = { "x", "wp", bias_arg, "y", g.N, g.C, I[1], I[2], I[3], g.Co, O[1], O[2], O[3],
                 g.Cin_g, g.Cout_g, Kmax, nph, nz, g.transposed, has_bias }
  for _, a in ipairs(geo) do args[#args + 1] = a end
  variants[#variants + 1] = algo .. "." .. table.concat(cfg, "x")
  if g.transposed then variants[#variants + 1] = algo .. ".transposed" end
  if mt > 1 then variants[#variants + 1] = algo .. ".mtiles" end
  if nt > 1 then variants[#variants + 1] = algo .. ".ntiles" end
  if nz > LIMITS.z_max then variants[#variants + 1] = algo .. ".z_loop" end
  if g.N * qmax > 0xffffffff then variants[#variants + 1] = algo .. ".wide" end -- the kernel's t.Mp
  launches[2] = { kernel = name, grid = { mt, nt, math.min(nz, LIMITS.z_max) }, block = threads_of(algo, cfg),
                  args = args }
  return plan
end

return M
