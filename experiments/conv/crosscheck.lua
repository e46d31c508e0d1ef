-- experiments/conv/crosscheck.lua: writes small convolutions computed by kreach.ops.conv (the
-- f64 oracle and the f32, bf16 and f16 baselines) for crosscheck.py to compare with PyTorch.
--
--   kreach experiments/conv/crosscheck.lua DIR [N_RANDOM] && python3 experiments/conv/crosscheck.py DIR
--
-- Inputs are drawn in bf16 (so that every dtype, and PyTorch, sees the same values) and written
-- as f64 bytes: DIR/manifest.json lists the cases (transposed, shapes, options), DIR/<i>_x.bin,
-- _w.bin, _b.bin the inputs, _f64.bin, _f32.bin, _bf16.bin, _f16.bin the outputs (as f64).
local kreach = require "kreach"
local ops = require "kreach.ops"
local json = require "kreach.json"
local conv = require "kreach.ops.conv"

local dir, n_random = ...
assert(dir, "usage: kreach crosscheck.lua DIR [N_RANDOM]")
n_random = tonumber(n_random) or 30
kreach.skip_without_device()
os.execute("mkdir -p '" .. dir .. "'")
local lib = ops.get()

local FIXED = {
  { false, { 2, 6, 37 }, { 20, 6, 3 }, { stride = 2, padding = 1, dilation = 2 }, true },
  { false, { 2, 4, 9, 11 }, { 140, 2, 3, 5 }, { stride = { 2, 1 }, padding = { 1, 2 }, groups = 2 }, false },
  { false, { 1, 3, 6, 7, 8 }, { 40, 3, 3, 2, 3 }, { dilation = { 1, 2, 1 }, padding = { 0, 1, 1 } }, false },
  { false, { 2, 8, 12, 13 }, { 8, 1, 3, 3 }, { groups = 8, padding = 1 }, true },
  { false, { 2, 5, 10, 9 }, { 7, 5, 2, 4 }, { padding = "same", dilation = { 2, 1 } }, false },
  { true, { 2, 32, 19 }, { 32, 24, 3 }, { stride = 2, padding = 1, dilation = 2 }, false },
  { true, { 2, 8, 6, 7 }, { 8, 16, 3, 5 }, { stride = { 2, 3 }, padding = { 1, 2 }, dilation = { 2, 1 }, groups = 4 }, true },
  { true, { 1, 8, 3, 4, 5 }, { 8, 8, 3, 5, 7 }, { stride = 2, padding = { 1, 2, 3 }, output_padding = 1, groups = 4 }, false },
  { true, { 2, 6, 5, 6 }, { 6, 20, 3, 3 }, { stride = 5, padding = 1, dilation = 2 }, false },
  { true, { 2, 3, 11 }, { 3, 70, 4 }, { dilation = 2, output_padding = 1 }, true },
  { true, { 2, 6, 8, 9 }, { 6, 1, 3, 3 }, { groups = 6, stride = 2, padding = 1, output_padding = 1 }, false },
}

local state = 99
local function rnd(m)
  state = (state * 1103515245 + 12345) % 2147483648
  return state % m + 1
end
local function pick(t) return t[rnd(#t)] end
local cases = {}
for _, c in ipairs(FIXED) do cases[#cases + 1] = c end
for _ = 1, n_random do
  local nd, tr, groups = rnd(3), rnd(2) == 2, pick({ 1, 1, 2, 3 })
  local cin_g, cout_g = pick({ 1, 2, 3, 8 }), pick({ 1, 3, 8, 33, 70 })
  local xs = { rnd(2), cin_g * groups }
  local ws = tr and { cin_g * groups, cout_g } or { cout_g * groups, cin_g }
  local o = { stride = {}, padding = {}, dilation = {}, groups = groups }
  if tr then o.output_padding = {} end
  for d = 1, nd do
    local k, s, dl, p = pick({ 1, 2, 3, 5 }), pick({ 1, 2, 3 }), pick({ 1, 2, 3 }), rnd(3) - 1
    local sp = rnd(({ 30, 10, 5 })[nd])
    if not tr and sp + 2 * p < dl * (k - 1) + 1 then sp = dl * (k - 1) + 1 - 2 * p + rnd(2) end
    xs[#xs + 1], ws[#ws + 1] = sp, k
    o.stride[d], o.padding[d], o.dilation[d] = s, p, dl
    if tr then
      o.output_padding[d] = rnd(math.max(s, dl)) - 1
      if (sp - 1) * s - 2 * p + dl * (k - 1) + o.output_padding[d] + 1 < 1 then o.padding[d] = 0 end
    end
  end
  cases[#cases + 1] = { tr, xs, ws, o, rnd(2) == 1 }
end

local function write(path, t)
  local f = assert(io.open(path, "wb"))
  f:write(t:to("f64"):to_bytes())
  f:close()
end

local manifest = {}
for i, c in ipairs(cases) do
  local tr, xs, ws, o, has_bias = c[1], c[2], c[3], c[4], c[5]
  local yshape = conv.output_shape(xs, ws, o, tr)
  local co = yshape[2]
  local x = kreach.empty(xs, "bf16"):uniform(-1, 1, 10 * i)
  local w = kreach.empty(ws, "bf16"):uniform(-1, 1, 10 * i + 1)
  local b = kreach.empty({ co }, "bf16"):uniform(-1, 1, 10 * i + 2)
  write(("%s/%d_x.bin"):format(dir, i), x)
  write(("%s/%d_w.bin"):format(dir, i), w)
  write(("%s/%d_b.bin"):format(dir, i), b)
  for _, dt in ipairs({ "f64", "f32", "bf16", "f16" }) do
    local y = kreach.empty(yshape, dt)
    local opts = {}
    for k, v in pairs(o) do opts[k] = v end
    opts.bias = has_bias and b:to(dt) or nil
    if tr then lib.conv_transpose(x:to(dt), w:to(dt), y, opts) else lib.conv(x:to(dt), w:to(dt), y, opts) end
    write(("%s/%d_%s.bin"):format(dir, i, dt), y)
  end
  manifest[#manifest + 1] = { id = i, transposed = tr, x = xs, w = ws, y = yshape, bias = has_bias,
    stride = o.stride or 1, padding = o.padding or 0, dilation = o.dilation or 1,
    groups = o.groups or 1, output_padding = o.output_padding or 0 }
end
local f = assert(io.open(dir .. "/manifest.json", "w"))
f:write(json.encode(manifest), "\n")
f:close()
print(("crosscheck: %d cases written to %s"):format(#cases, dir))
