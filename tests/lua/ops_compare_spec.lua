-- kreach.ops.compare without a GPU: its metric kernels (metrics1, metrics2, diff_stats) run on
-- the CPU (kreach.emulate: g++, a fiber a CUDA thread) over hand-built outputs and oracles,
-- and the metrics the library derives from their sums (compare.assemble, compare.from_diff)
-- are checked against answers worked out by hand (tests/lua/compare_cases.lua). The GPU runs
-- the same cases through lib.metrics and lib.compare (tests/lua/gpu/compare_spec.lua).
local compare = require "kreach.ops.compare"
local cuda = require "kreach.ops.cuda"
local emu = require "kreach.emulate"
local cases = require "compare_cases"

-- a double as a C++ literal
local function lit(x)
  if x ~= x then return "NAN" end
  if x == math.huge then return "INFINITY" end
  if x == -math.huge then return "-INFINITY" end
  return ("%.17g"):format(x)
end

local function list(xs)
  local t = {}
  for i, x in ipairs(xs) do t[i] = lit(x) end
  return table.concat(t, ", ")
end

describe("kreach.ops.compare's metrics (its kernels emulated on the CPU)", function()
  -- one program for every case: for each, pass 1 and pass 2 over 2 blocks of 64 threads (so
  -- that the sums cross warps and blocks), at y = f32 and, where the case allows, bf16, and
  -- diff_stats; printed as "case k dtype" then the sums
  local results
  setup(function()
    local src = { emu.HEADER, cuda, compare.SOURCE, emu.LAUNCH, [[
template <typename T> static void run(int k, const char *dt, const std::vector<double> &yv,
                                      const std::vector<double> &r, double ta, double tb) {
  std::vector<T> y(yv.size());
  for (size_t i = 0; i < yv.size(); i++) y[i] = (T)yv[i];
  const i64 n = (i64)r.size();
  double m[10] = {0}, c[2] = {0}, d[8] = {0};
  emu_launch({2, 1, 1}, {64, 1, 1}, [&] { metrics1<T, double>(y.data(), r.data(), n, ta, tb, m); });
  const double mu = m[9] > 0 ? m[2] / m[9] : 0;
  emu_launch({2, 1, 1}, {64, 1, 1}, [&] { metrics2<double>(r.data(), n, mu, c); });
  emu_launch({2, 1, 1}, {64, 1, 1}, [&] { diff_stats<T, double>(y.data(), r.data(), n, d); });
  printf("case %d %s m", k, dt);
  for (int j = 0; j < 10; j++) printf(" %.17g", m[j]);
  printf(" c %.17g %.17g d", c[0], c[1]);
  for (int j = 0; j < 8; j++) printf(" %.17g", d[j]);
  printf("\n");
}
int main() {
]] }
    for k, c in ipairs(cases.cases) do
      src[#src + 1] = ("  { std::vector<double> y = {%s}, r = {%s};"):format(list(c.y), list(c.r))
      src[#src + 1] = ("    run<float>(%d, \"f32\", y, r, %s, %s);"):format(k, lit(c.tols[1]), lit(c.tols[2]))
      if c.bf16 then
        src[#src + 1] = ("    run<__nv_bfloat16>(%d, \"bf16\", y, r, %s, %s);"):format(k, lit(c.tols[1]), lit(c.tols[2]))
      end
      src[#src + 1] = "  }"
    end
    src[#src + 1] = "  return 0;\n}"
    local out, ok = emu.run(src)
    assert(ok, out)
    results = {}
    for line in out:gmatch("[^\n]+") do
      local k, dt, ms, cs, ds = line:match("^case (%d+) (%w+) m (.-) c (.-) d (.*)$")
      if k then
        local function nums(str)
          local t = {}
          local special = { nan = 0 / 0, ["-nan"] = 0 / 0, inf = math.huge, ["-inf"] = -math.huge }
          for x in str:gmatch("%S+") do
            local v = tonumber(x)
            if v == nil then v = special[x] end
            assert(v ~= nil, x)
            t[#t + 1] = v
          end
          return t
        end
        results[#results + 1] = { case = tonumber(k), dtype = dt, a = nums(ms), c = nums(cs), d = nums(ds) }
      end
    end
  end)

  it("ran every case", function()
    local want = 0
    for _, c in ipairs(cases.cases) do want = want + (c.bf16 and 2 or 1) end
    assert.equals(want, #results)
  end)

  for k, c in ipairs(cases.cases) do
    it(("metrics: %s"):format(c.name), function()
      local seen = 0
      for _, r in ipairs(results) do
        if r.case == k then
          seen = seen + 1
          local m = compare.assemble(#c.r, r.a, r.c, c.tols)
          assert.same({}, cases.mismatches(m, c.want, cases.FIELDS), r.dtype)
          assert.same(c.tols, m.allclose_tols)
        end
      end
      assert.is_true(seen >= 1)
    end)
    if c.diff then
      it(("compare (the oracle's check): %s"):format(c.name), function()
        for _, r in ipairs(results) do
          if r.case == k then
            assert.same({}, cases.mismatches(compare.from_diff(#c.r, r.d), c.diff, cases.DIFF_FIELDS), r.dtype)
          end
        end
      end)
    end
  end
end)

describe("kreach.ops.compare's derived metrics", function()
  it("are the square roots of the sums' ratios, and x / 0 is 0 or infinite", function()
    local m = compare.derive{ sum_d2 = 4, sum_r2 = 16, sum_c2 = 64, max_abs = 3, max_ref = 6, max_c = 12 }
    assert.equals(0.5, m.rel_l2)
    assert.equals(0.5, m.max_scaled)
    assert.equals(0.25, m.centred_l2)
    assert.equals(0.25, m.centred_max)
    assert.equals(2, m.const_l2)
    assert.equals(2, m.const_max)
    local z = compare.derive{ sum_d2 = 0, sum_r2 = 0, sum_c2 = 0, max_abs = 0, max_ref = 0, max_c = 0 }
    assert.same({ 0, 0, 0, 0, 0, 0 }, { z.rel_l2, z.max_scaled, z.centred_l2, z.centred_max, z.const_l2, z.const_max })
    local w = compare.derive{ sum_d2 = 1, sum_r2 = 0, sum_c2 = 0, max_abs = 1, max_ref = 0, max_c = 0 }
    assert.same({ math.huge, math.huge, math.huge, math.huge }, { w.rel_l2, w.max_scaled, w.centred_l2, w.centred_max })
  end)
end)
