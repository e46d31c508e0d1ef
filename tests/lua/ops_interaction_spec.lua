-- kreach.ops.interaction without a GPU: dot_interaction's checks on shape-only tensors, and its
-- CUDA kernel run on the CPU (kreach.emulate) on random samples against the definition computed
-- here (dlrm's interact_features: x, then T T^T's strict lower triangle in row-major order).
-- Random: the seed is printed; KREACH_SEED=N repeats a run.
local ops = require "kreach.ops"
local meta = require "kreach.meta"
local inter = require "kreach.ops.interaction"
local cuda = require "kreach.ops.cuda"
local emu = require "kreach.emulate"

local support = require "support"

local seed = support.seed("ops_interaction_spec")

-- Each case's line "<case> <max error> <max |reference|>" within REL[dtype] of the reference.
local function check_errors(out, cases, REL)
  for c, v in pairs(support.emu_lines(out, #cases)) do
    local k = cases[c]
    assert.is_true(v[1] <= REL[k.dt] * math.max(v[2], 1),
      ("case %d (seed %d): %s B=%d F=%d D=%d: error %g against max %g"):format(c, seed, k.dt, k.B, k.F, k.D, v[1], v[2]))
  end
end

describe("kreach.ops.interaction", function()
  local lib = ops.get(true)
  local function m(shape, dtype) return meta.new(shape, dtype or "f32") end

  it("checks its arguments on shape-only tensors and records the write", function()
    local out = m({ 4, 128 + 351 })
    lib.dot_interaction(m({ 4, 128 }), m({ 4, 26, 128 }), out)
    assert.is_true(out:written())
    local function err(...)
      local ok, e = pcall(lib.dot_interaction, ...)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.matches("emb is {4, 26, 64}, expected %[4, F %- 1, 128%]", err(m({ 4, 128 }), m({ 4, 26, 64 }), out))
    assert.matches("out is {4, 478}, expected {4, 479}", err(m({ 4, 128 }), m({ 4, 26, 128 }), m({ 4, 478 })))
    assert.matches("emb is bf16, expected f32", err(m({ 4, 128 }), m({ 4, 26, 128 }, "bf16"), out))
    assert.matches("a sample of 27 x 512 is 55404 bytes of shared memory", err(m({ 4, 512 }), m({ 4, 26, 512 }), m({ 4, 512 + 351 })))
  end)

  it("computes the dot interaction's gradient for x and emb (its kernel, emulated on the CPU)", function()
    local rand = support.rng(seed + 17)
    local dtypes = { "f64", "f32", "bf16", "f16" }
    local src = { emu.HEADER, cuda, emu.source(inter.SOURCE), emu.LAUNCH, support.EMU_VEC }
    local cases = {}
    local list = support.c_list
    for c = 1, 8 do
      local dt = dtypes[(c - 1) % #dtypes + 1]
      local B, F, D = rand(3), rand(28), ({ 1, 5, 16, 64, 128 })[rand(5)]
      if c == 1 then B, F, D = 2, 27, 128 end
      local P = F * (F - 1) // 2
      local x, e, go = {}, {}, {}
      for i = 1, B * D do x[i] = (rand(33) - 17) / 16 end
      for i = 1, B * (F - 1) * D do e[i] = (rand(33) - 17) / 16 end
      for i = 1, B * (D + P) do go[i] = (rand(33) - 17) / 16 end
      local rdx, rde = {}, {}
      for b = 0, B - 1 do
        local function T(f, d) return f == 0 and x[b * D + d + 1] or e[(b * (F - 1) + f - 1) * D + d + 1] end
        local function S(i, j)
          if i == j then return 0 end
          local hi, lo = math.max(i, j), math.min(i, j)
          return go[b * (D + P) + D + hi * (hi - 1) // 2 + lo + 1]
        end
        for f = 0, F - 1 do
          for d = 0, D - 1 do
            local s = f == 0 and go[b * (D + P) + d + 1] or 0
            for k = 0, F - 1 do s = s + S(f, k) * T(k, d) end
            if f == 0 then rdx[b * D + d + 1] = s else rde[(b * (F - 1) + f - 1) * D + d + 1] = s end
          end
        end
      end
      local pl = assert(inter.plan(dt, ops.CTYPE[dt], B, F, D, true))
      cases[c] = { dt = dt, B = B, F = F, D = D }
      src[#src + 1] = ([[
static void case_%d() {
  typedef %s T;
  static const double X[] = %s, E[] = %s, GO[] = %s, RDX[] = %s, RDE[] = %s;
  const long long B = %d; const int F = %d, D = %d;
  auto x = emu_vec<T>(X, %d); auto e = emu_vec<T>(E, %d); auto go = emu_vec<T>(GO, %d);
  std::vector<T> dx(%d), de(%d);
  emu_launch({%d, 1, 1}, {%d, 1, 1}, [&] { %s(x.data(), e.data(), go.data(), dx.data(), de.data(), B, F, D); });
  double err = 0, mag = 0;
  for (size_t i = 0; i < dx.size(); i++) { err = std::fmax(err, std::fabs((double)ld(dx[i]) - RDX[i])); mag = std::fmax(mag, std::fabs(RDX[i])); }
  if (F > 1) for (size_t i = 0; i < de.size(); i++) {
    err = std::fmax(err, std::fabs((double)ld(de[i]) - RDE[i])); mag = std::fmax(mag, std::fabs(RDE[i])); }
  printf("%d %%.3e %%.3e\n", err, mag);
}
]]):format(c, ops.CTYPE[dt], list(x), list(e), list(go), list(rdx), list(rde), B, F, D, #x, math.max(#e, 1), #go,
        #x, math.max(#e, 1), math.min(pl.grid, 2), pl.block, pl.kernel, c)
    end
    src[#src + 1] = support.emu_main(#cases)
    local out, ok = emu.run(src)
    assert(ok, out)
    local REL = { f64 = 0, f32 = 0, bf16 = 2 ^ -8, f16 = 2 ^ -11 }
    check_errors(out, cases, REL)
  end)

  it("computes dlrm's dot interaction (its kernel, emulated on the CPU)", function()
    local rand = support.rng(seed)
    local dtypes = { "f64", "f32", "bf16", "f16" }
    local src = { emu.HEADER, cuda, emu.source(inter.SOURCE), emu.LAUNCH, support.EMU_VEC }
    local cases = {}
    local list = support.c_list
    for c = 1, 12 do
      local dt = dtypes[(c - 1) % #dtypes + 1]
      local B, F, D = rand(4) - 1, rand(28), ({ 1, 3, 8, 16, 33, 64, 128 })[rand(7)]
      if c == 1 then B, F, D = 2, 27, 128 end
      local x, e = {}, {}
      for i = 1, B * D do x[i] = (rand(65) - 33) / 16 end -- exact at every dtype, products exact in fp32
      for i = 1, B * (F - 1) * D do e[i] = (rand(65) - 33) / 16 end
      local ldo = D + F * (F - 1) // 2
      local ref = {}
      for b = 0, B - 1 do
        local function T(f, d) return f == 0 and x[b * D + d + 1] or e[(b * (F - 1) + f - 1) * D + d + 1] end
        for d = 0, D - 1 do ref[b * ldo + d + 1] = x[b * D + d + 1] end
        local p = 0
        for i = 1, F - 1 do
          for j = 0, i - 1 do
            local s = 0.0
            for d = 0, D - 1 do s = s + T(i, d) * T(j, d) end
            ref[b * ldo + D + p + 1] = s
            p = p + 1
          end
        end
      end
      local pl = assert(inter.plan(dt, ops.CTYPE[dt], B, F, D))
      cases[c] = { dt = dt, B = B, F = F, D = D }
      src[#src + 1] = ([[
static void case_%d() {
  typedef %s T;
  static const double X[] = %s, E[] = %s, REF[] = %s;
  const long long B = %d; const int F = %d, D = %d; const long long n = B * %d;
  auto x = emu_vec<T>(X, %d); auto e = emu_vec<T>(E, %d);
  std::vector<T> out(n > 0 ? n : 1, st<T>((typename Acc<T>::type)-1024));
  if (B > 0) emu_launch({%d, 1, 1}, {%d, 1, 1}, [&] { %s(x.data(), e.data(), out.data(), B, F, D); });
  double err = 0, mag = 0;
  for (long long i = 0; i < n; i++) { err = std::fmax(err, std::fabs((double)ld(out[i]) - REF[i])); mag = std::fmax(mag, std::fabs(REF[i])); }
  printf("%d %%.3e %%.3e\n", err, mag);
}
]]):format(c, ops.CTYPE[dt], list(x), list(e), list(ref), B, F, D, ldo, math.max(#x, 1), math.max(#e, 1),
        math.min(pl.grid, 3), pl.block, pl.kernel, c)
    end
    src[#src + 1] = support.emu_main(#cases)
    local out, ok = emu.run(src)
    assert(ok, out)
    -- exact products and sums at f32 and f64 (multiples of 1/256 below 2^24 / 256); one rounding
    -- of each output at the 16-bit dtypes
    local REL = { f64 = 0, f32 = 0, bf16 = 2 ^ -8, f16 = 2 ^ -11 }
    check_errors(out, cases, REL)
  end)
end)
