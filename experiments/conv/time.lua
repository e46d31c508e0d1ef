-- experiments/conv/time.lua: times kreach.ops.conv's baseline on KernelBench level 1's
-- convolutions at full size and measures its error against the f64 oracle.
--
--   kreach experiments/conv/time.lua [--dtypes f32,bf16] [--reps 10] [--no-oracle] [--algo A]
--                                    [--sweep] ID...|all
--
-- --sweep times every compiled tile configuration of the GEMM the dtype runs (conv.CONFIGS:
-- the SIMT one at f32, the tensor-core one at f16 and bf16) instead of the one conv.TILES picks,
-- each against the same oracle output.
--
-- Inputs as KernelBench draws them (x from U[0,1), weights from PyTorch's default
-- U(-1/sqrt(fan_in), 1/sqrt(fan_in))). Each call is timed alone between two events after two
-- warm-up calls (the first compiles); no L2 flush (the tensors are gigabytes). Prints one line
-- per problem and dtype: the median and the fastest call, the rate in TFLOP/s (2 per
-- multiply-add of the convolution's definition), the kernel that ran, and the relative L2 and
-- largest absolute error against the oracle. torch_time.py times PyTorch on the same shapes.
local kreach = require "kreach"
local ops = require "kreach.ops"
local conv = require "kreach.ops.conv"

local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local SHAPES = dofile(here .. "/shapes.lua")

local dtypes, reps, oracle, algo, sweep = { "f32", "bf16" }, 10, true, nil, false
local ids = {}
local argv = { ... }
local i = 1
while i <= #argv do
  local a = argv[i]
  if a == "--dtypes" then
    dtypes = {}
    for d in argv[i + 1]:gmatch("[^,]+") do dtypes[#dtypes + 1] = d end
    i = i + 2
  elseif a == "--reps" then reps = tonumber(argv[i + 1]); i = i + 2
  elseif a == "--algo" then algo = argv[i + 1]; i = i + 2
  elseif a == "--no-oracle" then oracle = false; i = i + 1
  elseif a == "--sweep" then sweep = true; i = i + 1
  elseif a == "all" then
    for id in pairs(SHAPES) do ids[#ids + 1] = id end
    table.sort(ids)
    i = i + 1
  else ids[#ids + 1] = assert(math.tointeger(tonumber(a)), "not a problem id: " .. a); i = i + 1 end
end
if #ids == 0 then ids = { 55, 63, 87 } end

kreach.skip_without_device()
local lib = ops.get()

local function numel(s) local n = 1 for _, v in ipairs(s) do n = n * v end return n end
local function median(t)
  local s = {}
  for k, v in ipairs(t) do s[k] = v end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
end

print("id\tdtype\talgo\tmedian_ms\tmin_ms\ttflops\trel_l2\tmax_abs\tkernel")
for _, id in ipairs(ids) do
  local p = assert(SHAPES[id], "no shapes for problem " .. id)
  local tr, xs, ws, o = p[1], p[2], p[3], p[4]
  local opts = {}
  for k, v in pairs(o) do if k ~= "bias" then opts[k] = v end end
  local g = assert(conv.resolve(xs, ws, opts, tr))
  local fan_in = 1
  for d = 2, #ws do fan_in = fan_in * ws[d] end
  local bound = 1 / math.sqrt(fan_in)
  local macs = tr and numel(xs) * g.Cout_g * numel(g.k) or numel(g.yshape) * g.Cin_g * numel(g.k)
  for _, dt in ipairs(dtypes) do
    local x = kreach.empty(xs, dt):uniform(0, 1, id)
    local w = kreach.empty(ws, dt):uniform(-bound, bound, id + 1)
    local b = o.bias and kreach.empty({ g.Co }, dt):uniform(-bound, bound, id + 2) or nil
    local y = kreach.empty(g.yshape, dt)
    local ref
    if oracle then
      local x64, w64 = x:to("f64"), w:to("f64")
      local b64 = b and b:to("f64") or nil
      ref = kreach.empty(g.yshape, "f64")
      local ro = {}
      for k, v in pairs(opts) do ro[k] = v end
      ro.bias = b64
      local t0 = kreach.now()
      if tr then lib.conv_transpose(x64, w64, ref, ro) else lib.conv(x64, w64, ref, ro) end
      kreach.synchronize()
      io.stderr:write(("# %d %s: the oracle took %.2f s\n"):format(id, dt, kreach.now() - t0))
      x64:free(); w64:free()
      if b64 then b64:free() end
    end
    -- the configurations to time: the one conv.TILES picks, or every compiled one
    local ga = algo or (dt == "f32" and "gemm" or "mma")
    local cfgs = { false }
    if sweep and conv.CONFIGS[ga] then cfgs = conv.CONFIGS[ga] end
    for _, cfg in ipairs(cfgs) do
      local saved = conv.TILES[ga]
      if cfg then conv.TILES[ga] = { { 1, cfg } } end
      local call_opts = {}
      for k, v in pairs(opts) do call_opts[k] = v end
      call_opts.bias, call_opts.algo = b, algo or (cfg and ga) or nil
      local function call()
        if tr then lib.conv_transpose(x, w, y, call_opts) else lib.conv(x, w, y, call_opts) end
      end
      call(); call()
      kreach.synchronize()
      local times = {}
      for r = 1, reps do times[r] = kreach.time_ms(call) end
      local po = {}
      for k, v in pairs(opts) do po[k] = v end
      po.algo = call_opts.algo
      local plan = conv.plan(assert(conv.resolve(xs, ws, po, tr)), dt, b ~= nil)
      conv.TILES[ga] = saved
      local rel, mx = 0 / 0, 0 / 0
      if ref then
        local r = lib.compare(y, ref)
        rel, mx = r.rel_l2, r.max_abs
      end
      local med = median(times)
      local mn = math.huge
      for _, t in ipairs(times) do mn = math.min(mn, t) end
      print(("%d\t%s\t%s\t%.3f\t%.3f\t%.2f\t%.3g\t%.3g\t%s"):format(id, dt, plan.algo, med, mn,
        2 * macs / (med * 1e-3) / 1e12, rel, mx, plan.launches[#plan.launches].kernel))
      io.stdout:flush()
    end
    x:free(); w:free(); y:free()
    if b then b:free() end
    if ref then ref:free() end
  end
end
