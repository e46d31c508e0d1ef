-- kreach.ops.sparse without a GPU: the checks of lengths_to_offsets and linearize_ids on
-- shape-only tensors, and their CUDA kernels run on the CPU (kreach.emulate) against the
-- definitions computed here, on random keyed jagged tensors (the seed is printed; KREACH_SEED=N
-- repeats a run).
local ops = require "kreach.ops"
local meta = require "kreach.meta"
local problem = require "kreach.problem"
local sparse = require "kreach.ops.sparse"
local cuda = require "kreach.ops.cuda"
local emu = require "kreach.emulate"

local support = require "support"

local seed = support.seed("ops_sparse_spec")

describe("kreach.ops.sparse", function()
  local lib = ops.get(true)
  local function m(shape, dt) return meta.new(shape, dt or "i64") end

  it("checks its arguments on shape-only tensors and records the writes", function()
    local off = m({ 3 * 4 + 1 })
    lib.lengths_to_offsets(m({ 3, 4 }), off)
    assert.is_true(off:written())
    local out = m({ 20 })
    lib.linearize_ids(m({ 20 }), off, { 10, 20, 30 }, { 0, 10, 30 }, out)
    assert.is_true(out:written())
    local function err(f, ...)
      local ok, e = pcall(f, ...)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.matches("offsets is {12}, expected {13}", err(lib.lengths_to_offsets, m({ 3, 4 }), m({ 12 })))
    assert.matches("lengths is f32, expected i64", err(lib.lengths_to_offsets, m({ 3, 4 }, "f32"), off))
    assert.matches("offsets has 13 entries, not F %* B %+ 1 for 5 features",
      err(lib.linearize_ids, m({ 20 }), off, { 1, 2, 3, 4, 5 }, { 0, 1, 2, 3, 4 }, out))
    assert.matches("rows and first are lists of 1 to 28 integers", err(lib.linearize_ids, m({ 20 }), off, { 1, 2 }, { 0 }, out))
    assert.matches("feature 2: rows 0 and first 1", err(lib.linearize_ids, m({ 20 }), off, { 1, 0, 3 }, { 0, 1, 1 }, out))
  end)

  it("computes offsets and linear ids as defined (its kernels, emulated on the CPU)", function()
    local rand = support.rng(seed)
    local src = { emu.HEADER, cuda, sparse.SOURCE, emu.LAUNCH }
    local cases = {}
    local list = support.c_list
    for c = 1, 6 do
      local F, B = rand(sparse.MAXF), rand(300)
      if c == 1 then F, B = 26, 2000 end -- more lengths than threads: chunks of two
      local hs = {}
      for t = 1, F do hs[t] = rand(6) - 1 end
      local lengths = problem.jagged_lengths(B, hs, seed + c)
      local n = problem.jagged_total(B, hs)
      local rows, first, acc = {}, {}, 0
      for t = 1, F do rows[t] = rand(100000); first[t] = acc; acc = acc + rows[t] end
      local ids = {}
      for j = 1, n do ids[j] = rand(1 << 40) - 1 end
      local off, want = { 0 }, {}
      for i, l in ipairs(lengths) do off[i + 1] = off[i] + l end
      assert.equals(n, off[#off])
      for t = 1, F do
        for j = off[(t - 1) * B + 1], off[t * B + 1] - 1 do want[j + 1] = ids[j + 1] % rows[t] + first[t] end
      end
      cases[c] = { F = F, B = B, n = n }
      local extra = {}
      for t = 1, sparse.MAXF do extra[#extra + 1] = rows[t] or 1 end
      for t = 1, sparse.MAXF do extra[#extra + 1] = first[t] or 0 end
      src[#src + 1] = ([[
static void case_%d() {
  static const long long L[] = %s, IDS[] = %s, OFF[] = %s, WANT[] = %s;
  const long long nl = %d, n = %d;
  std::vector<long long> off(nl + 1), out(n > 0 ? n : 1);
  emu_launch({1, 1, 1}, {1024, 1, 1}, [&] { lengths_to_offsets<double>(L, off.data(), nl); });
  long long bad_off = 0, bad_out = 0;
  for (long long i = 0; i <= nl; i++) bad_off += off[i] != OFF[i];
  if (n > 0) emu_launch({2, 1, 1}, {256, 1, 1}, [&] { linearize_ids<double>(IDS, off.data(), out.data(), n, %d, %d, %s); });
  for (long long j = 0; j < n; j++) bad_out += out[j] != WANT[j];
  printf("%d %%lld %%lld\n", bad_off, bad_out);
}
]]):format(c, list(lengths), list(ids), list(off), list(want), #lengths, n, F, B, table.concat(extra, ", "), c)
    end
    src[#src + 1] = support.emu_main(#cases)
    local out, ok = emu.run(src)
    assert(ok, out)
    for c, v in pairs(support.emu_lines(out, #cases)) do
      local k = cases[c]
      local what = ("case %d (seed %d): F=%d B=%d n=%d"):format(c, seed, k.F, k.B, k.n)
      assert.equals(0, v[1], what .. ": offsets differ")
      assert.equals(0, v[2], what .. ": linear ids differ")
    end
  end)
end)
