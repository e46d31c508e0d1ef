-- kreach.ops.conv on the GPU: the baseline (f32, bf16, f16: the implicit GEMMs and the direct
-- kernel) against the f64 oracle on small random shapes covering 1-D, 2-D and 3-D, stride,
-- padding, dilation, groups, output_padding and bias, transposed and not; the oracle against a
-- double-precision reference computed here in Lua; outputs fully written, nothing written
-- outside them, deterministic; and indices past 2^31 on tensors of more than 2^31 elements.
-- Inputs are drawn in f64, rounded to the dtype, and the oracle sees the rounded values, so the
-- errors measured are the kernels' own. KREACH_SEED changes the random cases (printed).
local kreach = require "kreach"
local ops = require "kreach.ops"
local conv = require "kreach.ops.conv"
local support = require "support"

local seed = tonumber(os.getenv("KREACH_SEED")) or 20261204
print(("conv_spec: seed %d"):format(seed))

-- Relative L2 error against the oracle. f32: the fp32 sums of up to ~1000 products of this
-- size have relative errors of a few 1e-7 (TF32 would give ~1e-4); bf16 and f16: the final
-- rounding to the dtype alone is 2^-9 and 2^-12 relative, about 1e-3 and 1.4e-4 rms.
local TOL = { f32 = 1e-6, bf16 = 1e-2, f16 = 2e-3 }
-- the kernels each dtype is checked with ("auto" is what a problem's baseline runs)
local ALGOS = { f32 = { "auto", "gemm", "direct" }, bf16 = { "auto", "mma", "gemm", "direct" },
                f16 = { "auto", "mma", "gemm", "direct" } }

-- { transposed, x shape, w shape, opts (bias = true for one) }
local FIXED = {
  { false, { 2, 6, 37 }, { 20, 6, 3 }, { stride = 2, padding = 1, dilation = 2, bias = true } },
  { false, { 2, 4, 9, 11 }, { 140, 2, 3, 5 }, { stride = { 2, 1 }, padding = { 1, 2 }, groups = 2 } },
  { false, { 1, 3, 6, 7, 8 }, { 40, 3, 3, 2, 3 }, { dilation = { 1, 2, 1 }, padding = { 0, 1, 1 } } },
  { false, { 2, 8, 12, 13 }, { 8, 1, 3, 3 }, { groups = 8, padding = 1, bias = true } },
  { false, { 2, 4, 12, 13 }, { 12, 1, 3, 2 }, { groups = 4, stride = 2 } },
  { false, { 3, 16, 7, 9 }, { 72, 16, 1, 1 }, {} },
  { false, { 2, 3, 35, 37 }, { 130, 3, 11, 11 }, { stride = 4, padding = 2, bias = true } },
  { false, { 2, 5, 10, 9 }, { 7, 5, 2, 4 }, { padding = "same", dilation = { 2, 1 } } },
  { false, { 5, 10, 9 }, { 33, 5, 3, 3 }, { padding = 1 } },
  { true, { 2, 32, 19 }, { 32, 24, 3 }, { stride = 2, padding = 1, dilation = 2 } },
  { true, { 2, 8, 6, 7 }, { 8, 16, 3, 5 }, { stride = { 2, 3 }, padding = { 1, 2 }, dilation = { 2, 1 }, groups = 4, bias = true } },
  { true, { 1, 8, 3, 4, 5 }, { 8, 8, 3, 5, 7 }, { stride = 2, padding = { 1, 2, 3 }, output_padding = 1, groups = 4 } },
  { true, { 2, 6, 5, 6 }, { 6, 20, 3, 3 }, { stride = 5, padding = 1, dilation = 2 } },
  { true, { 1, 5, 4, 5, 6 }, { 5, 17, 3, 3, 3 }, { bias = true } },
  { true, { 2, 3, 11 }, { 3, 70, 4 }, { dilation = 2, output_padding = 1 } },
  { true, { 2, 6, 8, 9 }, { 6, 1, 3, 3 }, { groups = 6, stride = 2, padding = 1, output_padding = 1 } },
  { true, { 4, 7, 6 }, { 4, 36, 2, 3 }, { stride = { 3, 1 }, padding = { 0, 1 } } },
}

-- random cases like the fixed ones, from the seed
local function random_cases(n)
  local state = seed
  local function rnd(m)
    state = (state * 1103515245 + 12345) % 2147483648
    return state % m + 1
  end
  local function pick(t) return t[rnd(#t)] end
  local cases = {}
  for _ = 1, n do
    local nd = rnd(3)
    local tr = rnd(2) == 2
    local groups = pick({ 1, 1, 2, 3, 4 })
    local cin_g = pick({ 1, 2, 3, 5, 8, 16 })
    local cout_g = pick({ 1, 2, 3, 5, 8, 17, 33, 70, 130 })
    local xs = { rnd(2), cin_g * groups }
    local ws = tr and { cin_g * groups, cout_g } or { cout_g * groups, cin_g }
    local o = { stride = {}, padding = {}, dilation = {}, groups = groups, bias = rnd(2) == 1 }
    if tr then o.output_padding = {} end
    for d = 1, nd do
      local k, s, dl, p = pick({ 1, 2, 3, 4, 5 }), pick({ 1, 1, 2, 3 }), pick({ 1, 1, 2, 3 }), rnd(3) - 1
      local sp = rnd(({ 40, 12, 6 })[nd])
      if not tr and sp + 2 * p < dl * (k - 1) + 1 then sp = dl * (k - 1) + 1 - 2 * p + rnd(3) end
      xs[#xs + 1], ws[#ws + 1] = sp, k
      o.stride[d], o.padding[d], o.dilation[d] = s, p, dl
      if tr then
        o.output_padding[d] = rnd(math.max(s, dl)) - 1
        if (sp - 1) * s - 2 * p + dl * (k - 1) + o.output_padding[d] + 1 < 1 then o.padding[d] = 0 end
      end
    end
    cases[#cases + 1] = { tr, xs, ws, o }
  end
  return cases
end

local CASES = {}
for _, c in ipairs(FIXED) do CASES[#CASES + 1] = c end
for _, c in ipairs(random_cases(24)) do CASES[#CASES + 1] = c end

local function show(c)
  local parts = {}
  for _, k in ipairs({ "stride", "padding", "dilation", "groups", "output_padding", "bias" }) do
    local v = c[4][k]
    if v ~= nil then
      parts[#parts + 1] = k .. "=" .. (type(v) == "table" and "{" .. table.concat(v, ",") .. "}" or tostring(v))
    end
  end
  return ("%s x{%s} w{%s} %s"):format(c[1] and "transposed" or "conv", table.concat(c[2], ","),
    table.concat(c[3], ","), table.concat(parts, " "))
end

local function numel(s) local n = 1 for _, v in ipairs(s) do n = n * v end return n end

local function run(lib, c, x, w, y, bias, algo)
  local o = {}
  for k, v in pairs(c[4]) do o[k] = v end
  o.bias = c[4].bias and bias or nil
  o.algo = algo
  if c[1] then return lib.conv_transpose(x, w, y, o) end
  return lib.conv(x, w, y, o)
end

-- y inside a poisoned fence of GUARD elements on each side: (y, the whole tensor)
local GUARD = 4096
local function fenced(shape, dtype)
  local whole = kreach.empty({ numel(shape) + 2 * GUARD }, dtype)
  whole:poison()
  return whole:narrow(1, GUARD + 1, numel(shape)):view(shape), whole
end

-- The definition in Lua (double), on host arrays (tests/lua/support.lua's conv_reference):
-- y for x (N, C, sp) or unbatched (C, sp), w as PyTorch lays it out, the shapes as
-- kreach.ops.conv resolves them.
local function lua_reference(tr, xs, ws, opts, X, Wt, B)
  local g = assert(conv.resolve(xs, ws, opts, tr))
  local c = { transposed = tr, x = { g.N, g.C }, y = { g.N, g.Co },
              w = tr and { g.C, g.Cout_g } or { g.Co, g.Cin_g },
              stride = g.stride, padding = g.pad, dilation = g.dilation, groups = g.groups }
  for d = 1, g.n do
    c.x[#c.x + 1], c.y[#c.y + 1], c.w[#c.w + 1] = g.spatial[d], g.out[d], g.k[d]
  end
  return support.conv_reference(c, X, Wt, B), g.yshape
end

describe("kreach.ops.conv on the GPU", function()
  local lib = ops.get()

  it("the f64 oracle equals a double-precision reference computed in Lua", function()
    -- the fixed cases: every kind of convolution, small enough for Lua
    for i, c in ipairs(FIXED) do
      local s = seed + 100 * i
      local x = kreach.empty(c[2], "f64"):uniform(-1, 1, s)
      local w = kreach.empty(c[3], "f64"):uniform(-1, 1, s + 1)
      local b = c[4].bias and kreach.empty({ c[1] and c[3][2] * (c[4].groups or 1) or c[3][1] }, "f64"):uniform(-1, 1, s + 2)
      local opts = {}
      for k, v in pairs(c[4]) do if k ~= "bias" then opts[k] = v end end
      local ref, shape = lua_reference(c[1], c[2], c[3], opts, x:to_table(), w:to_table(), b and b:to_table())
      local y, whole = fenced(shape, "f64")
      run(lib, c, x, w, y, b)
      local got = y:to_table()
      local worst, scale = 0, 0
      for j = 1, #ref do
        worst = math.max(worst, math.abs(got[j] - ref[j]))
        scale = math.max(scale, math.abs(ref[j]))
      end
      -- fp64 sums of at most a few hundred terms: 1e-12 of the largest output
      assert(worst <= 1e-12 * math.max(scale, 1e-300), ("%s: max error %.3g of %.3g"):format(show(c), worst, scale))
      assert.equal(2 * GUARD, whole:count_poisoned(), show(c) .. ": a write outside y")
      x:free(); w:free(); whole:free()
      if b then b:free() end
    end
  end)

  for _, dt in ipairs({ "f32", "bf16", "f16" }) do
    it(("the %s baseline matches the oracle within %g, writes all of y and nothing else, repeatably"):format(dt, TOL[dt]), function()
      local worst = {}
      for i, c in ipairs(CASES) do
        local s = seed + 1000 * i
        local co = c[1] and c[3][2] * (c[4].groups or 1) or c[3][1]
        local x = kreach.empty(c[2], "f64"):uniform(-1, 1, s):to(dt)
        local w = kreach.empty(c[3], "f64"):uniform(-1, 1, s + 1):to(dt)
        local b = kreach.empty({ co }, "f64"):uniform(-1, 1, s + 2):to(dt)
        local shape = conv.output_shape(c[2], c[3], { stride = c[4].stride, padding = c[4].padding,
          dilation = c[4].dilation, groups = c[4].groups, output_padding = c[4].output_padding }, c[1])
        local ref = kreach.empty(shape, "f64")
        local x64, w64, b64 = x:to("f64"), w:to("f64"), b:to("f64")
        run(lib, c, x64, w64, ref, b64)
        for _, algo in ipairs(ALGOS[dt]) do
          local y, whole = fenced(shape, dt)
          run(lib, c, x, w, y, b, algo)
          local r = lib.compare(y, ref)
          local label = ("%s [%s %s]"):format(show(c), dt, algo)
          assert.equal(0, r.nonfinite, label)
          assert(r.rel_l2 <= TOL[dt], ("%s: relative L2 error %.3g"):format(label, r.rel_l2))
          assert.equal(2 * GUARD, whole:count_poisoned(), label .. ": an output unwritten or a write outside y")
          worst[algo] = math.max(worst[algo] or 0, r.rel_l2)
          if i % 4 == 1 then -- the same bits again
            local y2 = kreach.empty(shape, dt)
            run(lib, c, x, w, y2, b, algo)
            assert(y2:to_bytes() == y:to_bytes(), label .. ": a second call differs")
            y2:free()
          end
          whole:free()
        end
        for _, t in ipairs({ x, w, b, ref, x64, w64, b64 }) do t:free() end
      end
      local line = {}
      for _, algo in ipairs(ALGOS[dt]) do line[#line + 1] = ("%s %.3g"):format(algo, worst[algo]) end
      print(("conv_spec: %s worst relative L2 over %d cases: %s"):format(dt, #CASES, table.concat(line, ", ")))
    end)
  end

  -- More than 2^31 elements in x and in y: the last outputs of every (n, channel) row, computed
  -- in Lua from the last inputs, must come out right.
  local BIG = {
    { "bf16", "auto", false, { 2, 4, (1 << 28) + 5 }, { 8, 4, 3 }, { stride = 1, padding = 1 } },
    { "f32", "gemm", true, { 2, 2, (1 << 29) + 1 }, { 2, 2, 3 }, { stride = 1 } },
    { "f32", "direct", false, { 2, 2, (1 << 29) + 3 }, { 2, 2, 3 }, {} },
  }
  for _, bc in ipairs(BIG) do
    local dt, algo, tr, xs, ws, opts = bc[1], bc[2], bc[3], bc[4], bc[5], bc[6]
    it(("indexes past 2^31: %s %s %s x{%s}"):format(dt, algo, tr and "transposed" or "conv", table.concat(xs, ",")), function()
      local dev = kreach.device()
      local shape = conv.output_shape(xs, ws, opts, tr)
      local bytes = (numel(xs) + numel(shape)) * (dt == "f32" and 4 or 2)
      if dev.free_memory_bytes < bytes + (1 << 30) then
        pending(("needs %.1f GB of device memory"):format(bytes / 1e9))
        return
      end
      local x = kreach.empty(xs, dt):uniform(-1, 1, seed + 7)
      local w = kreach.empty(ws, dt):uniform(-1, 1, seed + 8)
      local y = kreach.empty(shape, dt)
      y:poison()
      local o = {}
      for k, v in pairs(opts) do o[k] = v end
      o.algo = algo
      if tr then lib.conv_transpose(x, w, y, o) else lib.conv(x, w, y, o) end
      assert.equal(0, y:count_poisoned())
      local L, OL, C = xs[3], shape[3], xs[2]
      local W = w:to("f64"):to_table()
      local KK = ws[3]
      local co_n = shape[2]
      local tail = 8
      local start0 = L - tail - KK -- the first input read (0-based) of a channel
      for n = 0, xs[1] - 1 do
        -- the last inputs of every channel of this batch element
        local X = {}
        for c = 0, C - 1 do X[c] = x:to_table((n * C + c) * L + start0 + 1, tail + KK) end
        for co = 0, co_n - 1 do
          local got = y:to_table((n * co_n + co) * OL + OL - tail + 1, tail)
          for j = 1, tail do
            local o = OL - tail + j - 1 -- the output position, 0-based
            local acc = 0.0
            for c = 0, C - 1 do
              for kk = 0, KK - 1 do
                local i
                if tr then i = o + (opts.padding or 0) - kk else i = o * (opts.stride or 1) - (opts.padding or 0) + kk end
                if i >= 0 and i < L then
                  assert(i >= start0)
                  local wv = tr and W[(c * co_n + co) * KK + kk + 1] or W[(co * C + c) * KK + kk + 1]
                  acc = acc + wv * X[c][i - start0 + 1]
                end
              end
            end
            local tol = dt == "f32" and 1e-5 or 2e-2
            assert(math.abs(got[j] - acc) <= tol * (1 + math.abs(acc)),
              ("n %d co %d o %d: %.6g, expected %.6g"):format(n, co, o, got[j], acc))
          end
        end
      end
      x:free(); w:free(); y:free()
    end)
  end
end)
