-- DLRM-Bench's problems without a GPU: each loads and validates (its reference run on
-- shape-only tensors) at every dtype, its index inputs are rows of the table they index, and its
-- KernelBench export runs under Debian's PyTorch on the CPU with the declared output, which for
-- the lookups is checked against a gather written here.
local kreach = require "kreach"
local problem = require "kreach.problem"
local export = require "kreach.problem.export"
local support = require "support"

local PYTHON = os.getenv("KREACH_PYTHON") or "/usr/bin/python3"

local suite = problem.load_suite("dlrm-bench")

-- run_exported(inst, body) -> the output of Debian's PyTorch running `body` after loading the
-- instance's KernelBench export as module m and building model = m.Model(*m.get_init_inputs())
-- (seed 1). While the model is built, torch.empty returns NaN-filled floating tensors, so a
-- parameter the model leaves uninitialised is NaN every time rather than whatever memory held
-- (zeros on one machine, garbage on another); the first line printed is
-- "uninitialised [names of the parameters that are not all finite]".
local function run_exported(inst, body)
  local py = support.tmpdir() .. "/m.py"
  support.spit(py, export.kernelbench(inst))
  local f = io.popen(([[%q - 2>&1 <<'EOF'
import importlib.util, torch
spec = importlib.util.spec_from_file_location("m", %q); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
torch.manual_seed(1)
_empty = torch.empty
def _nan_empty(*a, **k):
    t = _empty(*a, **k)
    if t.is_floating_point():
        t.fill_(float("nan"))
    return t
torch.empty = _nan_empty
try:
    model = m.Model(*m.get_init_inputs())
finally:
    torch.empty = _empty
print("uninitialised", [n for n, p in model.named_parameters() if not bool(torch.isfinite(p).all())])
%s
EOF]]):format(PYTHON, py, body))
  local out = f:read("a")
  f:close()
  return out
end

local function have_torch()
  local _, rc = support.sh(("%q -c 'import torch'"):format(PYTHON))
  return rc == 0
end

describe("the dlrm-bench suite", function()
  it("names its problems dlrm-bench/N, not by bare ids (KernelBench's)", function()
    assert.is_false(suite.bare_ids)
    for i, id in ipairs(suite.ids) do
      assert.equals(suite.files[i], problem.resolve("dlrm-bench/" .. id))
      assert.are_not.equal(suite.files[i], problem.resolve(tostring(id)))
    end
    -- the ported and the pending ones are the twelve, once each
    local all = {}
    for _, id in ipairs(suite.ids) do all[#all + 1] = id end
    for _, id in ipairs(suite.pending) do all[#all + 1] = id end
    table.sort(all)
    assert.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, all)
  end)

  for i, path in ipairs(suite.files) do
    local p = problem.load(path)
    describe(p.name, function()
      it("validates at f32, bf16 and f16 and belongs to the suite", function()
        assert.equals("dlrm-bench", p.suite)
        assert.equals(suite.ids[i], p.id)
        for _, dt in ipairs({ "f32", "bf16", "f16" }) do p:instantiate{ dtype = dt }:validate() end
      end)

      local has_idx = false
      for _, a in ipairs(p.def.args) do has_idx = has_idx or a.name:match("^idx") ~= nil end
      if has_idx then it("draws the indices of each table among its rows", function()
        local inst = p:instantiate{ dtype = "f32" }
        local tables = {}
        for _, a in ipairs(inst.args) do
          local t = a.name:match("^table(_?%d*)$")
          if t then tables[t] = a.shape[1] end
        end
        local n = 0
        for _, a in ipairs(inst.args) do
          local t = a.name:match("^idx(_?%d*)$")
          if t then
            assert.equals("rows", a.domain)
            assert.equals("randint", a.dist.gen)
            assert.equals(0, a.dist.args[1])
            assert.equals(tables[t] or inst.sizes.rows, a.dist.args[2], a.name)
            n = n + 1
          end
        end
        assert.is_true(n > 0)
      end) end
    end)
  end

  it("4: draws each feature's ids in its own table, in every trial, and CSR offsets over them", function()
    local p = kreach.load_problem("dlrm-bench/4")
    local sizes = { batch_size = 64, dim = 8, cap = 1000 }
    local inst = p:instantiate{ dtype = "f32", sizes = sizes }
    local ind, off = inst.args[1], inst.args[2]
    local offs = off.dist.draw(off.shape, 3, "default", sizes)
    assert.equals(26 * 64 + 1, #offs)
    assert.equals(0, offs[1])
    assert.equals(ind.shape[1], offs[#offs])
    local full = { 39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10, 2208,
                   11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36 }
    for _, variant in ipairs({ "default", "centred", "shifted" }) do
      local v = ind.dist.draw(ind.shape, 3, variant, sizes)
      assert.equals(ind.shape[1], #v)
      local first, hist = 0, {}
      for t = 1, 26 do
        local rows = math.min(full[t], 1000)
        for j = offs[(t - 1) * 64 + 1] + 1, offs[t * 64 + 1] do
          assert.is_true(v[j] >= first and v[j] < first + rows, ("%s: id %d of feature %d is %d"):format(variant, j, t, v[j]))
          if t == 21 then hist[v[j]] = (hist[v[j]] or 0) + 1 end
        end
        first = first + rows
      end
      -- feature 21 (100 ids a sample over 1000 rows): its hottest row is far above uniform's share under Zipf
      local top = 0
      for _, c in pairs(hist) do top = math.max(top, c) end
      if variant == "default" then assert.is_true(top < 40, "uniform: hottest row " .. top)
      else assert.is_true(top > 200, variant .. ": hottest row " .. top) end
    end
  end)

  -- the problems' outputs computed here from the model's tables and the exported inputs
  local CHECKS = {
    [1] = { sizes = { batch_size = 8, cap = 100 }, shape = "[8, 416]", want = [==[
ws = [e.weight for e in model.emb]
want = torch.cat([w[i] for w, i in zip(ws, idx)], dim=1)]==] },
    [2] = { sizes = { batch_size = 16, rows = 1000 }, shape = "[16, 64]", want = [==[
i, o = idx
assert int(o[0]) == 0 and int(o[-1]) == i.numel(), "offsets are not CSR over the indices"
L = (o[1:] - o[:-1]).tolist()
assert sorted(L) == sorted([1 + k % 100 for k in range(16)]), L
w = model.emb.weight
want = torch.stack([w[i[o[b]:o[b + 1]]].sum(0) for b in range(16)])]==] },
    [3] = { sizes = { batch_size = 32, rows = 5000 }, shape = "[32, 128]", want = [==[
i, o, pw = idx
assert int(o[0]) == 0 and int(o[-1]) == i.numel()
assert sorted((o[1:] - o[:-1]).tolist()) == sorted([12 + k % 16 for k in range(32)])
w = model.emb.weight
want = torch.stack([(w[i[o[b]:o[b + 1]]] * pw[o[b]:o[b + 1], None]).sum(0) for b in range(32)])]==] },
    [4] = { sizes = { batch_size = 16, dim = 8, cap = 50 }, shape = "[16, 208]", want = [==[
ind, off = idx
rows = [min(n, 50) for n in [39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10, 2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36]]
first = [sum(rows[:t]) for t in range(26)]
assert int(off[0]) == 0 and int(off[-1]) == ind.numel()
w = model.emb.weight
want = torch.zeros(16, 26 * 8)
for t in range(26):
    for b in range(16):
        s, e = int(off[t * 16 + b]), int(off[t * 16 + b + 1])
        assert all(first[t] <= int(v) < first[t] + rows[t] for v in ind[s:e])
        want[b, 8 * t:8 * t + 8] = w[ind[s:e]].sum(0)]==] },
    [5] = { sizes = { rows = 60, dim = 4, batch_size = 6 }, shape = "[%d]", count_arg = 1, dtype = "int64", want = [==[
i, o, go = idx
rows, grads, n = ys
d = {}
for b in range(6):
    for j in range(int(o[b]), int(o[b + 1])):
        r = int(i[j])
        d[r] = d.get(r, torch.zeros(4)) + go[b]
keys = sorted(d)
assert int(n[0]) == len(keys)
assert rows.tolist() == keys + [-1] * (i.numel() - len(keys))
wg = torch.zeros(i.numel(), 4)
for k, r in enumerate(keys):
    wg[k] = d[r]
assert torch.allclose(grads, wg, atol=1e-6)
want = rows]==] },
    [6] = { sizes = { rows = 500, dim = 8, touched = 40 }, shape = "[40, 8]", want = [==[
ids, g, lr, eps = idx
assert len(set(ids.tolist())) == 40 and int(ids.min()) >= 0 and int(ids.max()) < 500, "ids are not distinct rows"
rows, st = ys
ws = model.state[ids] + (g * g).mean(1)
assert torch.allclose(st, ws)
want = model.table[ids] - (lr / (ws.sqrt() + eps))[:, None] * g]==] },
    [7] = { sizes = { batch_size = 4 }, shape = "[4, 479]", want = [==[
x, e = idx
want = []
for b in range(4):
    t = [x[b]] + [e[b, f] for f in range(26)]
    want.append(torch.cat([x[b], torch.stack([(t[i] * t[j]).sum() for i in range(27) for j in range(i)])]))
want = torch.stack(want)]==] },
    [8] = { sizes = { batch_size = 3 }, shape = "[3, 128]", want = [==[
x, e, go = idx
dx, de = ys
P = 351
wdx, wde = [], []
for b in range(3):
    t = torch.cat([x[b][None], e[b]])
    S = torch.zeros(27, 27)
    p = 0
    for i in range(27):
        for j in range(i):
            S[i, j] = S[j, i] = go[b, 128 + p]
            p += 1
    dT = S @ t
    wdx.append(go[b, :128] + dT[0])
    wde.append(dT[1:])
assert torch.allclose(de, torch.stack(wde), rtol=1e-5, atol=1e-5)
want = torch.stack(wdx)]==] },
    [9] = { sizes = { batch_size = 8, features = 24, rank = 4 }, shape = "[8, 24]", want = [==[
(x0,) = idx
ps = list(model.parameters())
assert [list(p.shape) for p in ps] == [[4, 24]] * 3 + [[24, 4], [24]] * 3
x = x0
for l in range(3):
    x = x0 * ((x @ ps[l].T) @ ps[3 + 2 * l].T + ps[4 + 2 * l]) + x
want = x]==] },
    [11] = { sizes = { batch_size = 64, features = 8 }, shape = "[1]", want = [==[
x, t = idx
assert t.dtype == torch.float32 and set(t.tolist()) <= {0.0, 1.0}
w, b = model.fc.weight, model.fc.bias
p = torch.sigmoid(x @ w.T + b).squeeze(1)
loss = -(t * torch.log(p) + (1 - t) * torch.log(1 - p)).mean()
g = (p - t) / 64
want4 = [loss.reshape(1), g[:, None] * w, (g[:, None] * x).sum(0, keepdim=True), g.sum().reshape(1)]
assert all(a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-7) for a, b in zip(ys, want4)), [(a, b) for a, b in zip(ys, want4)]
want = want4[0]]==] },
    [12] = { sizes = { batch_size = 40 }, shape = "[%d]", dtype = "int64", want = [==[
L, ids = idx
lin, off = ys
rows = model.rows.tolist()
first = [sum(rows[:t]) for t in range(26)]
hot = [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1]
for t in range(26):
    assert sorted(L[t].tolist()) == sorted([k % (2 * hot[t] + 1) for k in range(40)]), t
flat = L.flatten().tolist()
wo = [0]
for v in flat:
    wo.append(wo[-1] + v)
assert off.tolist() == wo
w = []
for t in range(26):
    for j in range(wo[t * 40], wo[(t + 1) * 40]):
        w.append(int(ids[j]) % rows[t] + first[t])
assert lin.tolist() == w
want = lin]==] },
    [10] = { sizes = { batch_size = 16 }, shape = "[16, 128]", want = [==[
(x,) = idx
ps = list(model.parameters())
assert [list(p.shape) for p in ps] == [[512, 13], [512], [256, 512], [256], [128, 256], [128]]
h = x
for l in range(3):
    h = torch.clamp_min(h @ ps[2 * l].T + ps[2 * l + 1], 0)
want = h]==] },
  }

  for _, id in ipairs(suite.ids) do
    it(("%d: its export runs under PyTorch (CPU) and computes the problem's output"):format(id), function()
      local c = CHECKS[id]
      assert(c, "no PyTorch check for dlrm-bench/" .. id .. " here")
      if not have_torch() then
        pending("no PyTorch for " .. PYTHON .. " (Debian's python3-torch)")
        return
      end
      local inst = kreach.load_problem("dlrm-bench/" .. id):instantiate{ dtype = "f32", sizes = c.sizes }
      local out = run_exported(inst, ([[
idx = m.get_inputs()
with torch.no_grad():
    y = model(*idx)
ys = list(y) if isinstance(y, (tuple, list)) else [y]
y = ys[0]
%s
print("shape", list(y.shape), y.dtype, "close", bool(torch.allclose(y, want, rtol=1e-5, atol=1e-6)))
]]):format(c.want))
      local shape = c.shape
      if shape:find("%d", 1, true) then shape = shape:format(inst.args[c.count_arg or 2].numel) end
      assert.matches("^uninitialised %[%]\n", out)
      assert.matches("shape " .. shape:gsub("[%[%]]", "%%%0") .. " torch%." .. (c.dtype or "float32") .. " close True", out)
    end)
  end
end)

describe("the dlrm-bench-variants suite", function()
  local vs = problem.load_suite("dlrm-bench-variants")

  it("holds problem 6's SGD variant, named dlrm-bench-variants/6, not a bare 6", function()
    assert.same({ 6 }, vs.ids)
    assert.is_false(vs.bare_ids)
    assert.equals(vs.files[1], problem.resolve("dlrm-bench-variants/6"))
    assert.equals(vs.files[1], problem.resolve("6_SparseSGD_index_add"))
    local p = problem.load(vs.files[1])
    assert.equals("dlrm-bench-variants", p.suite)
    for _, dt in ipairs({ "f32", "bf16", "f16" }) do p:instantiate{ dtype = dt }:validate() end
  end)

  it("6: its export runs under PyTorch (CPU) and applies index_add_ to the touched rows", function()
    if not have_torch() then
      pending("no PyTorch for " .. PYTHON .. " (Debian's python3-torch)")
      return
    end
    local inst = kreach.load_problem("dlrm-bench-variants/6"):instantiate{ dtype = "f32",
      sizes = { rows = 50, dim = 4, batch_size = 6 } }
    local out = run_exported(inst, [[
ids, g, lr = m.get_inputs()
with torch.no_grad():
    rows, new, n = model(ids, g, lr)
    t = model.table.detach().clone()
    t.index_add_(0, ids, g, alpha=-lr)
keys = sorted(set(ids.tolist()))
L = ids.numel()
ok = int(n[0]) == len(keys) and rows.tolist() == keys + [-1] * (L - len(keys))
want = torch.zeros(L, 4)
want[:len(keys)] = t[keys]
print("L", L, "repeats", L > len(keys), "ok", ok, "close", bool(torch.allclose(new, want, rtol=1e-5, atol=1e-6)))
]])
    assert.matches("^uninitialised %[%]\n", out)
    assert.matches("L 21 repeats True ok True close True", out)
  end)
end)
