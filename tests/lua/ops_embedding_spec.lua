-- kreach.ops.embedding without a GPU: the operator's checks on shape-only tensors, and its CUDA
-- kernel run on the CPU (kreach.emulate: g++, a fiber a CUDA thread, warp shuffles at a
-- barrier) on random bags against the definition computed here: sum, mean and weighted bags,
-- empty bags, one index a bag (no offsets), rows of 1 to 260 elements in packs or single
-- elements, into a column range of a wider output whose other columns must stay untouched.
-- Random: the seed is printed; KREACH_SEED=N repeats a run.
local ops = require "kreach.ops"
local meta = require "kreach.meta"
local emb = require "kreach.ops.embedding"
local cuda = require "kreach.ops.cuda"
local emu = require "kreach.emulate"

local support = require "support"

local seed = support.seed("ops_embedding_spec")

describe("kreach.ops.embedding", function()
  local lib = ops.get(true)
  local function m(shape, dtype) return meta.new(shape, dtype) end

  it("checks its arguments on shape-only tensors and records the write", function()
    local w, idx, off = m({ 100, 16 }, "f32"), m({ 30 }, "i64"), m({ 9 }, "i64")
    local out = m({ 8, 40 }, "f32")
    lib.embedding_bag(w, idx, off, out, { col = 24 })
    assert.is_true(out:written())
    local function err(...)
      local ok, e = pcall(lib.embedding_bag, ...)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.matches("indices is f32, expected i64", err(w, m({ 30 }, "f32"), off, out))
    assert.matches("weight is {100, 16, 2}, a 2%-D", err(m({ 100, 16, 2 }, "f32"), idx, off, out))
    assert.matches("out is {8, 39}, expected %[8, >= 40%]", err(w, idx, off, m({ 8, 39 }, "f32"), { col = 24 }))
    assert.matches("out is {7, 16}, expected %[8, >= 16%]", err(w, idx, off, m({ 7, 16 }, "f32")))
    assert.matches("per_sample_weights needs mode 'sum'", err(w, idx, off, out, { mode = "mean", per_sample_weights = m({ 30 }, "f32") }))
    assert.matches("per_sample_weights is {29}, expected {30}", err(w, idx, off, out, { per_sample_weights = m({ 29 }, "f32") }))
    assert.matches("mode 'max': 'sum' or 'mean'", err(w, idx, off, out, { mode = "max" }))
    assert.matches("unknown option 'columns'", err(w, idx, off, out, { columns = 2 }))
    assert.matches("out is bf16, expected f32", err(w, idx, off, m({ 8, 16 }, "bf16")))
    -- one index a bag without offsets: as many bags as indices
    local o2 = m({ 30, 16 }, "f32")
    lib.embedding_bag(w, idx, nil, o2)
    assert.is_true(o2:written())
  end)

  it("spans a row with the fewest lanes that cover its packs", function()
    assert.same({ 1, 1, 2, 4, 4, 32, 32 }, { emb.lanes(0), emb.lanes(1), emb.lanes(2), emb.lanes(3), emb.lanes(4), emb.lanes(32), emb.lanes(65) })
    local p = emb.plan{ dtype = "f32", ctype = "float", D = 16, ldo = 16, col = 0, aligned = true, mode = "sum", bags = 9 }
    assert.equals(4, p.V)
    assert.equals(4, p.G)
    assert.equals(2, p.grid)
    -- a column offset that breaks the packs: single elements
    p = emb.plan{ dtype = "f32", ctype = "float", D = 16, ldo = 40, col = 2, aligned = true, mode = "sum", bags = 9 }
    assert.equals(1, p.V)
    assert.equals(16, p.G)
  end)

  it("draws Zipf-like rows as experiments/workloads/dlrm.py does (its kernel, emulated on the CPU)", function()
    -- the definition, here in Lua's doubles (the same C library's pow, exp and log)
    local P = emb.HASH_PRIME
    local function zipf(u, n, alpha)
      local x
      if math.abs(alpha - 1.0) < 1e-9 then x = math.exp(u * math.log(n + 1.0))
      else
        local a = 1.0 - alpha
        x = (1.0 + u * ((n + 1.0) ^ a - 1.0)) ^ (1.0 / a)
      end
      local r = math.floor(x) - 1
      r = r < 0 and 0 or r >= n and n - 1 or r
      return (r * P) % n
    end
    local us, cases = {}, { { 1000, 1.05 }, { 10000000, 1.2 }, { 3, 1.1 }, { 26, 1.0 }, { 1, 1.1 } }
    local state = seed
    for i = 1, 2000 do
      state = (state * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
      us[i] = (state >> 11) / 2 ^ 52 -- [0, 1)
    end
    us[1], us[2] = 0.0, 1.0 - 2 ^ -53
    local ul = {}
    for i, u in ipairs(us) do ul[i] = ("%.17g"):format(u) end
    local src = { emu.HEADER, cuda, emb.SOURCE, emu.LAUNCH, "static const double U[] = {" .. table.concat(ul, ",") .. "};",
      "int main() {", ("  std::vector<long long> out(%d);"):format(#us) }
    for ci, c in ipairs(cases) do
      src[#src + 1] = ("  emu_launch({%d, 1, 1}, {%d, 1, 1}, [&] { zipf_rows<double>(U, out.data(), %d, %d, %.17g); });"):format(
        (#us + emb.THREADS - 1) // emb.THREADS, emb.THREADS, #us, c[1], c[2])
      src[#src + 1] = ("  for (size_t i = 0; i < out.size(); i++) printf(\"%d %%lld\\n\", out[i]);"):format(ci)
    end
    src[#src + 1] = "  return 0;\n}"
    local out, ok = emu.run(src)
    assert(ok, out)
    local got = support.emu_series(out)
    for ci, c in ipairs(cases) do
      local n, alpha = c[1], c[2]
      local counts, top = {}, 0
      assert.equals(#us, #got[ci])
      for i, u in ipairs(us) do
        local want = zipf(u, n, alpha)
        assert.is_true(got[ci][i] >= 0 and got[ci][i] < n)
        assert.equals(want, got[ci][i], ("n %d alpha %g u %.17g (seed %d)"):format(n, alpha, u, seed))
        counts[want] = (counts[want] or 0) + 1
        top = math.max(top, counts[want])
      end
      -- heavy-tailed: the hottest row of a 1000-row table takes far more than 1/1000 of them
      if n == 1000 then assert.is_true(top > 0.05 * #us, ("hottest row %d of %d draws"):format(top, #us)) end
    end
    -- the spreading is a bijection of the ranks
    local seen = {}
    for r = 0, 96 do seen[(r * P) % 97] = true end
    local k = 0
    for _ in pairs(seen) do k = k + 1 end
    assert.equals(97, k)
  end)

  it("draws distinct rows (unique_rows, its kernel emulated on the CPU)", function()
    local cases = { { 1000, 1000, 37 }, { 10000000, 3000, 9999999 }, { 7, 5, 3 } }
    local src = { emu.HEADER, cuda, emb.SOURCE, emu.LAUNCH, "int main() {" }
    for ci, c in ipairs(cases) do
      src[#src + 1] = ("  { std::vector<long long> o(%d); emu_launch({2, 1, 1}, {%d, 1, 1}, [&] { unique_rows<double>(o.data(), %d, %d, %d); });"):format(
        c[2], emb.THREADS, c[2], c[1], c[3])
      src[#src + 1] = ("    for (long long v : o) printf(\"%d %%lld\\n\", v); }"):format(ci)
    end
    src[#src + 1] = "  return 0;\n}"
    local out, ok = emu.run(src)
    assert(ok, out)
    local got = support.emu_series(out)
    for ci, c in ipairs(cases) do
      local seen = {}
      assert.equals(c[2], #got[ci])
      for j, v in ipairs(got[ci]) do
        assert.equals(emb.unique_row(j - 1, c[1], c[3]), v)
        assert.is_true(v >= 0 and v < c[1])
        assert.is_nil(seen[v], ("row %d twice (n %d)"):format(v, c[1]))
        seen[v] = true
      end
    end
    local lib = ops.get(true)
    local ok2, e = pcall(lib.unique_rows, meta.new({ 8 }, "i64"), 7, 0)
    assert.is_false(ok2)
    assert.matches("8 distinct rows asked of a table of 7", tostring(e))
  end)

  it("takes a row-wise Adagrad step on distinct rows (its kernel, emulated on the CPU)", function()
    local R, D, U, lr, eps = 50, 40, 12, 0.01, 1e-8
    local tbl, st, g, ids = {}, {}, {}, {}
    for i = 1, R * D do tbl[i] = ((i * 37) % 64 - 32) / 64 end
    for i = 1, R do st[i] = (i % 16) / 16 end
    for i = 1, U * D do g[i] = ((i * 53) % 64 - 32) / 32 end
    for j = 1, U do ids[j] = emb.unique_row(j - 1, R, 7) end
    local list = support.c_list
    local out, ok = emu.run{ emu.HEADER, cuda, emb.SOURCE, emu.LAUNCH, ([[
int main() {
  static const double TB[] = %s, ST[] = %s, G[] = %s; static const long long IDS[] = %s;
  std::vector<double> nr(%d), ns(%d);
  emu_launch({1, 1, 1}, {%d, 1, 1}, [&] { rowwise_adagrad<double>(TB, ST, IDS, G, nr.data(), ns.data(), %d, %d, %.17g, %.17g); });
  for (double v : ns) printf("s %%.17g\n", v);
  for (double v : nr) printf("r %%.17g\n", v);
  return 0;
}]]):format(list(tbl), list(st), list(g), list(ids), U * D, U, emb.THREADS, U, D, lr, eps) }
    assert(ok, out)
    local s_got, r_got = {}, {}
    for k, v in out:gmatch("(%a) (%S+)") do
      if k == "s" then s_got[#s_got + 1] = tonumber(v) else r_got[#r_got + 1] = tonumber(v) end
    end
    assert.equals(U, #s_got)
    assert.equals(U * D, #r_got)
    for u = 1, U do
      local r = ids[u]
      local sq = 0
      for d = 1, D do sq = sq + g[(u - 1) * D + d] ^ 2 end
      local s2 = st[r + 1] + sq / D
      assert.is_true(math.abs(s_got[u] - s2) <= 1e-15 * math.abs(s2), ("state of row %d"):format(r))
      local m = lr / (math.sqrt(s2) + eps)
      for d = 1, D do
        local want = tbl[r * D + d] - m * g[(u - 1) * D + d]
        assert.is_true(math.abs(r_got[(u - 1) * D + d] - want) <= 1e-15, ("row %d element %d"):format(r, d))
      end
    end
  end)

  it("applies SGD to the touched rows after their gradients are summed (sparse_sgd's last kernel, emulated; its checks)", function()
    -- rows_val holds each touched row's summed gradient (embedding_bag_backward's output), the
    -- padding rows zeros; the kernel turns the first count rows into table row - lr * sum
    local R, D, L, count, lr = 30, 5, 9, 6, 0.1
    local tbl, uniq, val = {}, {}, {}
    for i = 1, R * D do tbl[i] = ((i * 29) % 64 - 32) / 64 end
    for j = 1, L do uniq[j] = j <= count and (j * 4 + 1) or -1 end
    for i = 1, L * D do val[i] = i <= count * D and ((i * 13) % 32 - 16) / 8 or 0 end
    local list = support.c_list
    local out, ok = emu.run{ emu.HEADER, cuda, emb.SOURCE, emu.LAUNCH, ([[
int main() {
  static const double TB[] = %s; static const long long U[] = %s; static const long long N[] = {%d};
  std::vector<double> v = %s;
  emu_launch({2, 1, 1}, {%d, 1, 1}, [&] { eb_sgd_apply<double>(TB, U, v.data(), N, %.17g, %d, %d); });
  for (double x : v) printf("%%.17g\n", x);
  return 0;
}]]):format(list(tbl), list(uniq), count, "std::vector<double>" .. list(val), emb.THREADS, lr, L, D) }
    assert(ok, out)
    local got = {}
    for v in out:gmatch("%S+") do got[#got + 1] = tonumber(v) end
    assert.equals(L * D, #got)
    for j = 1, L do
      for d = 1, D do
        local i = (j - 1) * D + d
        local want = j <= count and tbl[uniq[j] * D + d] - lr * val[i] or 0
        assert.is_true(math.abs(got[i] - want) <= 1e-15, ("row %d element %d: %g, want %g"):format(j, d, got[i], want))
      end
    end
    local lib = ops.get(true)
    local t, ids = meta.new({ 100, 8 }, "f32"), meta.new({ 12 }, "i64")
    local okc, e = pcall(lib.sparse_sgd, t, ids, meta.new({ 12, 4 }, "f32"), 0.1, meta.new({ 12 }, "i64"),
      meta.new({ 12, 8 }, "f32"), meta.new({ 1 }, "i64"))
    assert.is_false(okc)
    assert.matches("grad", tostring(e))
    okc, e = pcall(lib.sparse_sgd, t, ids, meta.new({ 12, 8 }, "f32"), 0.1, meta.new({ 12 }, "i64"),
      meta.new({ 12, 8 }, "f32"), meta.new({ 2 }, "i64"))
    assert.is_false(okc)
    assert.matches("count", tostring(e))
    assert.has_no.errors(function()
      lib.sparse_sgd(t, ids, meta.new({ 12, 8 }, "f32"), 0.1, meta.new({ 12 }, "i64"), meta.new({ 12, 8 }, "f32"),
        meta.new({ 1 }, "i64"))
    end)
  end)

  it("aggregates embedding_bag's gradient per touched row, sorted (its kernels, emulated on the CPU)", function()
    local rand = support.rng(seed + 5)
    local src = { emu.HEADER, cuda, emb.SOURCE, emu.LAUNCH, support.EMU_VEC }
    local cases = {}
    local list = support.c_list
    for c, dt in ipairs({ "f64", "f32", "bf16", "f32" }) do
      local R = c == 4 and 5000 or rand(400) -- 5000: more than one scan block (2048 a block)
      local bags, D = rand(12), ({ 1, 7, 32, 40 })[rand(4)]
      local idx, off, go = {}, { 0 }, {}
      for _ = 1, bags do
        for _ = 1, rand(9) - 1 do idx[#idx + 1] = rand(4) == 1 and 0 or rand(R) - 1 end -- row 0 often: repeats
        off[#off + 1] = #idx
      end
      for i = 1, bags * D do go[i] = (rand(33) - 17) / 16 end
      local L = #idx
      -- the definition: sorted distinct rows, each the sum of its lookups' bags' gradients
      local sums, keys = {}, {}
      for b = 0, bags - 1 do
        for j = off[b + 1], off[b + 2] - 1 do
          local r = idx[j + 1]
          if not sums[r] then sums[r] = {}; for d = 1, D do sums[r][d] = 0 end; keys[#keys + 1] = r end
          for d = 1, D do sums[r][d] = sums[r][d] + go[b * D + d] end
        end
      end
      table.sort(keys)
      local wu, wg = {}, {}
      for j = 1, L do wu[j] = keys[j] or -1 end
      for j = 1, L do for d = 1, D do wg[(j - 1) * D + d] = keys[j] and sums[keys[j]][d] or 0 end end
      cases[c] = { dt = dt, R = R, bags = bags, D = D, L = L, U = #keys }
      local per = emb.THREADS * 8
      local nb = (R + per - 1) // per
      src[#src + 1] = ([[
static void case_%d() {
  typedef %s T; typedef typename Acc<T>::type A;
  static const long long IDX[] = %s, OFF[] = %s, WU[] = %s; static const double GO[] = %s, WG[] = %s;
  const long long R = %d, L = %d, bags = %d, D = %d, nb = %d;
  auto go = emu_vec<T>(GO, bags * D);
  std::vector<long long> mark(R), sums(nb), uniq(L > 0 ? L : 1), count(1);
  std::vector<A> acc(L * D > 0 ? L * D : 1); std::vector<T> grads(L * D > 0 ? L * D : 1);
  auto blocks = [](long long n) { return (unsigned)((n + 255) / 256 > 0 ? ((n + 255) / 256 < 4 ? (n + 255) / 256 : 4) : 1); };
  emu_launch({blocks(R), 1, 1}, {256, 1, 1}, [&] { eb_fill_i64<T>(mark.data(), R, 0); });
  emu_launch({blocks(L), 1, 1}, {256, 1, 1}, [&] { eb_fill_i64<T>(uniq.data(), L, -1); });
  emu_launch({blocks(L * D), 1, 1}, {256, 1, 1}, [&] { eb_zero_acc<T>(acc.data(), L * D); });
  if (L > 0) emu_launch({blocks(L), 1, 1}, {256, 1, 1}, [&] { eb_mark<T>(IDX, L, mark.data()); });
  emu_launch({(unsigned)nb, 1, 1}, {256, 1, 1}, [&] { eb_scan_blocks<T>(mark.data(), R, sums.data()); });
  emu_launch({1, 1, 1}, {32, 1, 1}, [&] { eb_scan_sums<T>(sums.data(), nb, count.data()); });
  emu_launch({blocks(R), 1, 1}, {256, 1, 1}, [&] { eb_scan_add<T>(mark.data(), R, sums.data()); });
  if (L > 0) {
    emu_launch({blocks(L), 1, 1}, {256, 1, 1}, [&] { eb_unique<T>(IDX, L, mark.data(), uniq.data()); });
    emu_launch({2, 1, 1}, {256, 1, 1}, [&] { eb_accumulate<T>(IDX, OFF, go.data(), mark.data(), acc.data(), bags, D); });
  }
  emu_launch({blocks(L * D), 1, 1}, {256, 1, 1}, [&] { eb_store<T>(acc.data(), grads.data(), L * D); });
  long long bad_u = 0; double err = 0, mag = 0;
  for (long long j = 0; j < L; j++) bad_u += uniq[j] != WU[j];
  for (long long i = 0; i < L * D; i++) { err = std::fmax(err, std::fabs((double)ld(grads[i]) - WG[i])); mag = std::fmax(mag, std::fabs(WG[i])); }
  printf("%d %%lld %%lld %%.3e %%.3e\n", count[0], bad_u, err, mag);
}
]]):format(c, ops.CTYPE[dt], list(idx), list(off), list(wu), list(go), list(wg), R, L, bags, D, nb, c)
    end
    src[#src + 1] = support.emu_main(#cases)
    local out, ok = emu.run(src)
    assert(ok, out)
    local REL = { f64 = 0, f32 = 0, bf16 = 2 ^ -8 }
    for c, v in pairs(support.emu_lines(out, #cases)) do
      local k = cases[c]
      local what = ("case %d (seed %d): %s R=%d bags=%d D=%d L=%d"):format(c, seed, k.dt, k.R, k.bags, k.D, k.L)
      assert.equals(k.U, v[1], what .. ": count")
      assert.equals(0, v[2], what .. ": unique rows")
      assert.is_true(v[3] <= REL[k.dt] * math.max(v[4], 1), ("%s: error %g against max %g"):format(what, v[3], v[4]))
    end
  end)

  it("computes embedding bags as PyTorch defines them (its kernel, emulated on the CPU)", function()
    local rand = support.rng(seed)
    local Ds = { 1, 3, 4, 8, 16, 24, 64, 100, 128, 136, 260 }
    local dtypes = { "f64", "f32", "bf16", "f16" }
    local cases, src = {}, { emu.HEADER, cuda, emb.SOURCE, emu.LAUNCH, [[
template <typename T> static std::vector<T> emu_vec(const double *v, size_t n) {
  std::vector<T> r(n); for (size_t i = 0; i < n; i++) r[i] = st<T>((typename Acc<T>::type)v[i]); return r; }
template <typename T> static double emu_d(T v) { return (double)ld(v); }
]] }
    local list = support.c_list
    for c = 1, 28 do
      local dt = dtypes[(c - 1) % #dtypes + 1]
      local D = Ds[rand(#Ds)]
      local rows = rand(40)
      local bags = rand(20) - 1
      local mode = ({ "sum", "mean", "weighted" })[rand(3)]
      local has_off = c % 5 ~= 0
      local col = rand(3) == 1 and rand(5) - 1 or 0
      local extra = rand(3) - 1
      local ldo = col + D + extra
      local W, idx, off, psw = {}, {}, { 0 }, {}
      for i = 1, rows * D do W[i] = (rand(129) - 65) / 32 end -- exact at every dtype
      if has_off then
        for _ = 1, bags do
          local len = rand(4) == 1 and 0 or rand(13) - 1
          for _ = 1, len do idx[#idx + 1] = rand(rows) - 1 end
          off[#off + 1] = #idx
        end
      else
        for _ = 1, bags do idx[#idx + 1] = rand(rows) - 1 end
      end
      for i = 1, #idx do psw[i] = (rand(65) - 33) / 16 end
      -- the definition, in double, from the (exact) values
      local ref = {}
      for b = 0, bags - 1 do
        local s, e = has_off and off[b + 1] or b, has_off and off[b + 2] or b + 1
        for d = 0, D - 1 do
          local acc = 0.0
          for j = s, e - 1 do acc = acc + (mode == "weighted" and psw[j + 1] or 1) * W[idx[j + 1] * D + d + 1] end
          if mode == "mean" then acc = e > s and acc / (e - s) or 0.0 end
          ref[b * ldo + col + d + 1] = acc
        end
      end
      local pl = emb.plan{ dtype = dt, ctype = ops.CTYPE[dt], D = D, ldo = ldo, col = col, aligned = true,
                           mode = mode == "mean" and "mean" or "sum", weighted = mode == "weighted",
                           offsets = has_off, bags = bags }
      cases[c] = { dt = dt, D = D, rows = rows, bags = bags, mode = mode, off = has_off, col = col, ldo = ldo, V = pl.V, G = pl.G }
      local refl = {}
      for i = 1, bags * ldo do refl[i] = ref[i] and ("%.17g"):format(ref[i]) or "NAN" end
      src[#src + 1] = ([[
static void case_%d() {
  typedef %s T;
  static const double W[] = %s, PSW[] = %s, REF[] = %s;
  static const long long IDX[] = %s, OFF[] = %s;
  const long long bags = %d, D = %d, ldo = %d, col = %d, n = %d;
  auto w = emu_vec<T>(W, %d); auto psw = emu_vec<T>(PSW, n > 0 ? n : 1);
  std::vector<T> out((size_t)(bags * ldo > 0 ? bags * ldo : 1), st<T>((typename Acc<T>::type)-1024));
  emu_launch({%d, 1, 1}, {%d, 1, 1}, [&] { %s(w.data(), IDX, OFF, psw.data(), out.data(), bags, D, ldo, col, %d); });
  double err = 0, mag = 0; long long clobbered = 0;
  for (long long i = 0; i < bags * ldo; i++) {
    const double got = emu_d(out[i]);
    if (std::isnan(REF[i])) { if (got != -1024.0) clobbered++; continue; }
    err = std::fmax(err, std::fabs(got - REF[i])); mag = std::fmax(mag, std::fabs(REF[i]));
  }
  printf("%d %%.3e %%.3e %%lld\n", err, mag, clobbered);
}
]]):format(c, ops.CTYPE[dt], list(#W > 0 and W or { 0 }), list(#psw > 0 and psw or { 0 }), list(#refl > 0 and refl or { 0 }),
        list(#idx > 0 and idx or { 0 }), list(off), bags, D, ldo, col, #idx, #W, math.max(pl.grid, 1), pl.block,
        pl.kernel, pl.G, c)
    end
    src[#src + 1] = support.emu_main(#cases)
    local out, ok = emu.run(src)
    assert(ok, out)
    -- exact sums and products of the drawn values at f32 and f64; one rounding of the result
    -- (and the mean's division) at the 16-bit dtypes
    local REL = { f64 = 1e-15, f32 = 1e-6, bf16 = 2 ^ -8, f16 = 2 ^ -11 }
    for c, v in pairs(support.emu_lines(out, #cases)) do
      local k = cases[c]
      local what = ("case %d (seed %d): %s D=%d rows=%d bags=%d %s%s col=%d ldo=%d V=%d G=%d"):format(c, seed, k.dt, k.D,
        k.rows, k.bags, k.mode, k.off and "" or " (no offsets)", k.col, k.ldo, k.V, k.G)
      assert.equals(0, v[3], what .. ": wrote outside its columns")
      assert.is_true(v[1] <= REL[k.dt] * math.max(v[2], 1), ("%s: error %g against max %g"):format(what, v[1], v[2]))
    end
  end)
end)
