-- experiments/conv/emulate.lua: runs kreach.ops.conv's CUDA kernels on the CPU, without a GPU,
-- against a CPU reference, so that their indexing can be checked where there is no device.
--
--   kreach experiments/conv/emulate.lua [--cases N] [--seed S] [--keep DIR] [--sweep]
--
-- --sweep runs every compiled tile configuration of the GEMMs (conv.CONFIGS) on every case,
-- instead of the ones conv.TILES picks.
--
-- The kernels' source is compiled as C++ by g++ (-std=c++20) with kreach.emulate's emulation of
-- CUDA (a block's threads are fibers meeting at a barrier of the block for __syncthreads,
-- __shared__ variables are statics, one block at a time), and mma.sync m16n8k16 is computed from the
-- fragment layout of the PTX ISA ("Matrix Fragments for mma.m16n8k16 with floating point
-- type"), gathering the warp's fragments at a barrier. The launches are the ones
-- kreach.ops.conv plans for each case; the reference is the definition (the transposed one
-- scatters, as PyTorch's definition reads), in double, from the inputs as rounded to the dtype.
-- Prints one line per case and exits 1 when any case is off. Needs g++ and the CUDA headers.
local conv = require "kreach.ops.conv"
local cuda = require "kreach.ops.cuda"
local emu = require "kreach.emulate"

local args = { ... }
local n_random, seed, keep, sweep = 40, 7, nil, false
local i = 1
while i <= #args do
  if args[i] == "--cases" then n_random = tonumber(args[i + 1]); i = i + 2
  elseif args[i] == "--seed" then seed = tonumber(args[i + 1]); i = i + 2
  elseif args[i] == "--keep" then keep = args[i + 1]; i = i + 2
  elseif args[i] == "--sweep" then sweep = true; i = i + 1
  else error("unknown argument " .. args[i]) end
end


local MMA_EMU = emu.MMA

local DRIVER = [==[
template <typename T> inline double emu_d(T v) { return (double)ld(v); }
template <typename T> inline T emu_t(double v) { return st<T>((typename Acc<T>::type)v); }

static unsigned long long g_rng = 88172645463325252ull;
static double emu_uniform() {
  g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* the definition, in double: x (N, C, D, H, W), w forward (Co, Cin_g, k..), transposed
 * (C, Cout_g, k..); scatter for the transposed one */
static void emu_ref(const std::vector<double> &x, const std::vector<double> &w,
                    const std::vector<double> &bias, std::vector<double> &y, bool trans, int N,
                    int C, const int *I, int Co, const int *O, int G, const int *k, const int *s,
                    const int *p, const int *d, bool has_bias) {
  const int Cin_g = C / G, Cout_g = Co / G;
  const long long IT = (long long)I[0] * I[1] * I[2], OT = (long long)O[0] * O[1] * O[2];
  const int KK = k[0] * k[1] * k[2];
  y.assign((size_t)N * Co * OT, 0.0);
  for (int n = 0; n < N; n++)
    for (int co = 0; co < Co; co++)
      for (long long o = 0; o < OT; o++) y[((size_t)n * Co + co) * OT + o] = has_bias ? bias[co] : 0.0;
  for (int n = 0; n < N; n++)
    for (int g = 0; g < G; g++)
      for (int ci = 0; ci < Cin_g; ci++)
        for (int co = 0; co < Cout_g; co++)
          for (int a = 0; a < k[0]; a++)
            for (int b = 0; b < k[1]; b++)
              for (int c = 0; c < k[2]; c++) {
                const int tap = (a * k[1] + b) * k[2] + c;
                const double wv = trans ? w[(((size_t)(g * Cin_g + ci)) * Cout_g + co) * KK + tap]
                                        : w[(((size_t)(g * Cout_g + co)) * Cin_g + ci) * KK + tap];
                const size_t xb = ((size_t)n * C + g * Cin_g + ci) * IT;
                const size_t yb = ((size_t)n * Co + g * Cout_g + co) * OT;
                if (!trans) {
                  for (int o1 = 0; o1 < O[0]; o1++)
                    for (int o2 = 0; o2 < O[1]; o2++)
                      for (int o3 = 0; o3 < O[2]; o3++) {
                        const int i1 = o1 * s[0] - p[0] + a * d[0], i2 = o2 * s[1] - p[1] + b * d[1],
                                  i3 = o3 * s[2] - p[2] + c * d[2];
                        if (i1 < 0 || i1 >= I[0] || i2 < 0 || i2 >= I[1] || i3 < 0 || i3 >= I[2]) continue;
                        y[yb + ((size_t)o1 * O[1] + o2) * O[2] + o3] += wv * x[xb + ((size_t)i1 * I[1] + i2) * I[2] + i3];
                      }
                } else {
                  for (int i1 = 0; i1 < I[0]; i1++)
                    for (int i2 = 0; i2 < I[1]; i2++)
                      for (int i3 = 0; i3 < I[2]; i3++) {
                        const int o1 = i1 * s[0] - p[0] + a * d[0], o2 = i2 * s[1] - p[1] + b * d[1],
                                  o3 = i3 * s[2] - p[2] + c * d[2];
                        if (o1 < 0 || o1 >= O[0] || o2 < 0 || o2 >= O[1] || o3 < 0 || o3 >= O[2]) continue;
                        y[yb + ((size_t)o1 * O[1] + o2) * O[2] + o3] += wv * x[xb + ((size_t)i1 * I[1] + i2) * I[2] + i3];
                      }
                }
              }
}

template <typename T> struct EmuCase {
  std::vector<T> x, w, bias, y, wp;
  std::vector<double> xd, wd, bd, ref;
  void fill(size_t nx, size_t nw, size_t nb, size_t ny, size_t nwp) {
    x.resize(nx); w.resize(nw); bias.resize(nb ? nb : 1); y.resize(ny); wp.resize(nwp ? nwp : 1);
    xd.resize(nx); wd.resize(nw); bd.resize(nb);
    for (size_t i = 0; i < nx; i++) { x[i] = emu_t<T>(emu_uniform()); xd[i] = emu_d(x[i]); }
    for (size_t i = 0; i < nw; i++) { w[i] = emu_t<T>(emu_uniform()); wd[i] = emu_d(w[i]); }
    for (size_t i = 0; i < nb; i++) { bias[i] = emu_t<T>(emu_uniform()); bd[i] = emu_d(bias[i]); }
    for (size_t i = 0; i < ny; i++) y[i] = emu_t<T>(12345.0); /* poison: every output is written */
  }
  /* relative L2 error of y against ref; -1 when an output still holds the poison */
  double err() const {
    double num = 0, den = 0;
    for (size_t i = 0; i < y.size(); i++) {
      const double v = emu_d(y[i]);
      if (v == emu_d(emu_t<T>(12345.0))) return -1;
      num += (v - ref[i]) * (v - ref[i]);
      den += ref[i] * ref[i];
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  }
};
]==]

-- a random case: { n, N, C, Co, groups, sp, k, s, p, d, op, transposed, bias }
local function random_case(rnd)
  local function pick(t) return t[rnd(#t)] end
  local n = rnd(3)
  local transposed = rnd(2) == 2
  local groups = pick({ 1, 1, 1, 2, 3, 4 })
  local depthwise = rnd(5) == 1
  local cin_g = depthwise and 1 or pick({ 1, 2, 3, 5, 8, 13, 40 })
  local cout_g = depthwise and pick({ 1, 1, 2, 3 }) or pick({ 1, 3, 5, 8, 17, 33, 70, 130 })
  local C = cin_g * groups
  local Co = cout_g * groups
  local sp, k, s, p, d, op = {}, {}, {}, {}, {}, {}
  local maxsp = ({ 40, 12, 6 })[n]
  for j = 1, n do
    k[j] = pick({ 1, 2, 3, 3, 4, 5 })
    s[j] = pick({ 1, 1, 1, 2, 3 })
    d[j] = pick({ 1, 1, 2, 3 })
    p[j] = rnd(3) - 1
    sp[j] = rnd(maxsp)
    op[j] = 0
    if transposed and rnd(3) == 1 then
      local lim = math.max(s[j], d[j]) - 1
      op[j] = lim > 0 and rnd(lim + 1) - 1 or 0
    end
    if not transposed then
      local span = d[j] * (k[j] - 1) + 1
      if sp[j] + 2 * p[j] < span then sp[j] = span - 2 * p[j] + rnd(3) end
    end
  end
  return { n = n, N = rnd(2), C = C, Co = Co, groups = groups, sp = sp, k = k, s = s, p = p, d = d,
           op = op, transposed = transposed, bias = rnd(2) == 1 }
end

local FIXED = {
  -- the shapes of kernels at their edges: K = 0 phases, many phases, 1-D, wide 3-D kernels
  { n = 1, N = 2, C = 32, Co = 64, groups = 1, sp = { 37 }, k = { 3 }, s = { 2 }, p = { 1 }, d = { 2 }, op = { 0 }, transposed = true, bias = false },
  { n = 2, N = 1, C = 8, Co = 16, groups = 1, sp = { 5, 6 }, k = { 3, 3 }, s = { 5, 5 }, p = { 1, 1 }, d = { 2, 2 }, op = { 0, 0 }, transposed = true, bias = true },
  { n = 3, N = 1, C = 8, Co = 8, groups = 4, sp = { 3, 4, 5 }, k = { 3, 5, 7 }, s = { 2, 2, 2 }, p = { 1, 2, 3 }, d = { 1, 1, 1 }, op = { 1, 1, 1 }, transposed = true, bias = false },
  { n = 2, N = 2, C = 8, Co = 16, groups = 4, sp = { 6, 7 }, k = { 3, 5 }, s = { 2, 3 }, p = { 1, 2 }, d = { 2, 1 }, op = { 0, 0 }, transposed = true, bias = false },
  { n = 2, N = 2, C = 3, Co = 96, groups = 1, sp = { 30, 31 }, k = { 11, 11 }, s = { 4, 4 }, p = { 2, 2 }, d = { 1, 1 }, op = { 0, 0 }, transposed = false, bias = true },
  { n = 3, N = 1, C = 3, Co = 64, groups = 1, sp = { 5, 7, 9 }, k = { 3, 5, 7 }, s = { 1, 1, 1 }, p = { 0, 0, 0 }, d = { 1, 1, 1 }, op = { 0, 0, 0 }, transposed = false, bias = false },
  { n = 2, N = 2, C = 6, Co = 6, groups = 6, sp = { 9, 10 }, k = { 3, 3 }, s = { 1, 1 }, p = { 1, 1 }, d = { 1, 1 }, op = { 0, 0 }, transposed = false, bias = true },
  { n = 2, N = 3, C = 64, Co = 128, groups = 1, sp = { 7, 9 }, k = { 1, 1 }, s = { 1, 1 }, p = { 0, 0 }, d = { 1, 1 }, op = { 0, 0 }, transposed = false, bias = false },
  { n = 1, N = 2, C = 16, Co = 40, groups = 1, sp = { 300 }, k = { 3 }, s = { 3 }, p = { 0 }, d = { 4 }, op = { 0 }, transposed = false, bias = false },
}

local function prod(t) local r = 1 for _, v in ipairs(t) do r = r * v end return r end

local function lit(v)
  if type(v) == "boolean" then return v and "true" or "false" end
  if math.type(v) == "integer" then return ("%dll"):format(v) end
  return tostring(v)
end

-- the C++ of one case at one dtype and algorithm; nil when the plan refuses it
local function case_code(id, c, dtype, algo, cfg)
  local xs = { c.N, c.C }
  for j = 1, c.n do xs[#xs + 1] = c.sp[j] end
  local ws = c.transposed and { c.C, c.Co // c.groups } or { c.Co, c.C // c.groups }
  for j = 1, c.n do ws[#ws + 1] = c.k[j] end
  local opts = { stride = c.s, padding = c.p, dilation = c.d, groups = c.groups, algo = algo }
  if c.transposed then opts.output_padding = c.op end
  local g, err = conv.resolve(xs, ws, opts, c.transposed)
  if not g then return nil, err end
  local plan
  local saved = conv.TILES[algo]
  if cfg then conv.TILES[algo] = { { 1, cfg } } end
  plan, err = conv.plan(g, dtype, c.bias)
  if cfg then conv.TILES[algo] = saved end
  if not plan then return nil, err end
  local T = conv.DTYPE_CTYPE[dtype]
  local function pad3(t, f) local r = {} for j = 1, 3 - c.n do r[j] = f end for j = 1, c.n do r[#r + 1] = t[j] end return r end
  local I, O = pad3(g.spatial, 1), pad3(g.out, 1)
  local K3, S3, P3, D3 = pad3(c.k, 1), pad3(c.s, 1), pad3(c.p, 0), pad3(c.d, 1)
  local L = {}
  L[#L + 1] = ("static double case_%d() {"):format(id)
  L[#L + 1] = ("  EmuCase<%s> e;"):format(T)
  L[#L + 1] = ("  e.fill(%d, %d, %d, %d, %d);"):format(prod(xs), prod(ws), c.bias and g.Co or 0, prod(g.yshape), plan.scratch or 0)
  L[#L + 1] = "  { int I[3] = {" .. table.concat(I, ", ") .. "}, O[3] = {" .. table.concat(O, ", ") ..
    "}, k[3] = {" .. table.concat(K3, ", ") .. "}, s[3] = {" .. table.concat(S3, ", ") .. "}, p[3] = {" ..
    table.concat(P3, ", ") .. "}, d[3] = {" .. table.concat(D3, ", ") .. "};"
  L[#L + 1] = ("    emu_ref(e.xd, e.wd, e.bd, e.ref, %s, %d, %d, I, %d, O, %d, k, s, p, d, %s); }"):format(
    lit(c.transposed), c.N, c.C, g.Co, c.groups, lit(c.bias))
  local names = { x = "e.x.data()", w = "e.w.data()", bias = "e.bias.data()", y = "e.y.data()", wp = "e.wp.data()" }
  for _, l in ipairs(plan.launches) do
    local grid = type(l.grid) == "table" and l.grid or { l.grid, 1, 1 }
    local block = type(l.block) == "table" and l.block or { l.block, 1, 1 }
    local a = {}
    for j, v in ipairs(l.args) do a[j] = type(v) == "string" and names[v] or lit(v) end
    L[#L + 1] = ("  emu_launch({%d, %d, %d}, {%d, %d, %d}, [&] { %s(%s); });"):format(grid[1], grid[2] or 1,
      grid[3] or 1, block[1], block[2] or 1, block[3] or 1, l.kernel, table.concat(a, ", "))
  end
  L[#L + 1] = "  return e.err();"
  L[#L + 1] = "}"
  return table.concat(L, "\n"), plan
end

-- tolerances of the relative L2 error against the reference (which sees the same rounded inputs)
local TOL = { f64 = 1e-12, f32 = 1e-5, bf16 = 1e-2, f16 = 2e-3 }

local state = seed
local function rnd(m) -- 1..m, a small LCG so the cases depend on the seed only
  state = (state * 1103515245 + 12345) % 2147483648
  return state % m + 1
end
local cases = {}
for _, c in ipairs(FIXED) do cases[#cases + 1] = c end
for _ = 1, n_random do cases[#cases + 1] = random_case(rnd) end

local RUNS = { { "f64", "auto" }, { "f32", "gemm" }, { "f32", "direct" }, { "bf16", "mma" }, { "f16", "mma" }, { "bf16", "gemm" } }
if sweep then
  RUNS = {}
  for _, cfg in ipairs(conv.CONFIGS.gemm) do RUNS[#RUNS + 1] = { "f32", "gemm", cfg } end
  for _, cfg in ipairs(conv.CONFIGS.mma) do RUNS[#RUNS + 1] = { "bf16", "mma", cfg } end
  for _, cfg in ipairs(conv.CONFIGS.mma) do RUNS[#RUNS + 1] = { "f16", "mma", cfg } end
end
local src = { emu.HEADER, cuda, MMA_EMU, conv.body_source, emu.LAUNCH, DRIVER }
local list = {}
local id = 0
for ci, c in ipairs(cases) do
  for ri, r in ipairs(RUNS) do
    -- every case at f32 with both kernels; the 16-bit and f64 runs on every other case
    if sweep or ri <= 3 or ci % 2 == 0 or ci <= #FIXED then
      local code, plan = case_code(id, c, r[1], r[2], r[3])
      if code then
        src[#src + 1] = code
        list[#list + 1] = { id = id, case = c, dtype = r[1], algo = plan.algo, kernel = plan.launches[#plan.launches].kernel }
        id = id + 1
      else
        print(("case %d %s %s: not planned: %s"):format(ci, r[1], r[2], plan))
      end
    end
  end
end
local main = { "int main() {" }
for _, l in ipairs(list) do main[#main + 1] = ("  printf(\"%%d %%.3e\\n\", %d, case_%d()); fflush(stdout);"):format(l.id, l.id) end
main[#main + 1] = "  return 0;\n}"
src[#src + 1] = table.concat(main, "\n")

print(("compiling and running %d runs (g++, kreach.emulate)"):format(#list))
local out, ran = emu.run(src, { keep = keep })
if not ran then
  io.stderr:write(out, "\n")
  error("the emulation did not compile or run", 0)
end
local bad = 0
local by_id = {}
for _, l in ipairs(list) do by_id[l.id] = l end
for line in out:gmatch("[^\n]+") do
  local i, e = line:match("^(%d+) (%S+)$")
  local l = by_id[tonumber(i)]
  local err = tonumber(e)
  local c = l.case
  local ok = err >= 0 and err <= TOL[l.dtype]
  if not ok then bad = bad + 1 end
  print(("%-4s %-5s %-6s %-48s %s%dD N=%d C=%d Co=%d g=%d sp={%s} k={%s} s={%s} p={%s} d={%s}%s%s  err %s"):format(
    ok and "ok" or "FAIL", l.dtype, l.algo, l.kernel, c.transposed and "T" or "", c.n, c.N, c.C, c.Co, c.groups,
    table.concat(c.sp, ","), table.concat(c.k, ","), table.concat(c.s, ","), table.concat(c.p, ","),
    table.concat(c.d, ","), c.transposed and (" op={" .. table.concat(c.op, ",") .. "}") or "",
    c.bias and " bias" or "", err < 0 and "unwritten outputs" or ("%.2e"):format(err)))
end
print(("%d runs, %d off"):format(#list, bad))
os.exit(bad == 0 and 0 or 1)
