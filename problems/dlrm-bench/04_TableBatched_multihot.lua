-- DLRM-Bench, problem 4: the table-batched multi-hot forward of MLPerf DLRM v2 (FBGEMM's
-- table-batched embeddings, as torchrec runs them): the 26 tables in one flat buffer of
-- sum(rows_t) rows of dimension 128, each table's rows after the previous ones'; the ids already
-- linearised into that buffer (problem 12's output); CSR offsets over 26 * batch bags,
-- feature-major (a keyed jagged tensor); each bag summed into out[b, 128 t : 128 (t + 1)].
-- Rows: dlrm.py's MLPerf cardinalities capped at `cap` (10M: 54M rows, 27.6 GB at f32; the f64
-- oracle holds 55 GB more); the bags' lengths: MLPerf v2's multi-hot sizes h_t as means, 0..2 h_t
-- in turn shuffled by the seed (214 ids a sample; a fixed total of 1749081 at the batch of 8192).
-- The ids of feature t are rows of table t, uniform in the default trials and Zipf-like (alpha
-- 1.05, then 1.15) in the centred and shifted ones, drawn on the host. The buffer is initialised
-- U(-b, b) with b = 1/sqrt(the mean table's rows) (dlrm draws each table's own bound; the values
-- do not change the work).
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

local FULL = { 39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10, 2208,
               11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36 }
local HOT = { 3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1 }
local F = #HOT

local function tables(s)
  local rows, first, acc = {}, {}, 0
  for t, n in ipairs(FULL) do
    rows[t] = math.min(n, s.cap)
    first[t] = acc
    acc = acc + rows[t]
  end
  return rows, first, acc
end

local function count(s) return kreach.jagged_total(s.batch_size, HOT) end

local full_py, hot_py = table.concat(FULL, ", "), table.concat(HOT, ", ")

-- the ids: feature t's positions hold rows of table t, from a 64-bit LCG seeded by the trial
local ids = kreach.host_dist{
  text = "rows of each feature's table: uniform (Zipf-like in the centred and shifted trials)",
  draw = function(_, seed, variant, s)
    local rows, first = tables(s)
    local st = seed
    local function u()
      st = (st * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
      return (st >> 11) / 4503599627370496.0
    end
    local alpha = variant == "centred" and 1.05 or variant == "shifted" and 1.15 or nil
    local out = {}
    for t = 1, F do
      local n = rows[t]
      for _ = 1, kreach.bags_total(s.batch_size, 0, 2 * HOT[t]) do
        local r
        if alpha then -- experiments/workloads/dlrm.py's law and spreading (kreach.ops.embedding's zipf_rows)
          local a = 1 - alpha
          local x = (1 + u() * ((n + 1.0) ^ a - 1)) ^ (1 / a)
          r = math.floor(x) - 1
          r = r < 0 and 0 or r >= n and n - 1 or r
          r = (r * 2654435761) % n
        else
          r = math.floor(u() * n)
        end
        out[#out + 1] = first[t] + r
      end
    end
    return out
  end,
  python = ("torch.cat([torch.randint(0, min(n, cap), (sum(k %% (2 * h + 1) for k in range(batch_size)),)) + f"
    .. " for n, h, f in zip([%s], [%s], [sum(min(m, cap) for m in [%s][:t]) for t in range(%d)])])"):format(full_py, hot_py, full_py, F),
}

local offsets = kreach.host_dist{
  text = ("CSR offsets of 26 x batch bags, feature t's lengths 0..2 h_t shuffled (h = MLPerf v2's multi-hot sizes)"),
  draw = function(_, seed, _, s)
    local L = kreach.jagged_lengths(s.batch_size, HOT, seed)
    local off = { 0 }
    for i, l in ipairs(L) do off[i + 1] = off[i] + l end
    return off
  end,
  python = ("torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(torch.cat([(torch.arange(batch_size) %% (2 * h + 1))"
    .. "[torch.randperm(batch_size)] for h in [%s]]), 0)])"):format(hot_py),
}

return kreach.problem{
  id = 4, name = "4_TableBatched_multihot", suite = "dlrm-bench", category = "embedding",
  subcategory = "bag",
  description = "table-batched multi-hot embedding bags: 26 tables in one buffer, 26 x batch_size bags (MLPerf v2's multi-hot sizes) into batch_size x 26 dim",
  sizes = { batch_size = 8192, dim = 128, cap = 10000000 },
  args = {
    input("indices", function(s) return { count(s) } end, { dtype = "i64", dist = ids }),
    input("offsets", function(s) return { F * s.batch_size + 1 } end, { dtype = "i64", dist = offsets }),
    param("table", function(s)
      local _, _, total = tables(s)
      return { total, s.dim }
    end, { init = function(shape) return ("uniform(%.17g, %.17g)"):format(-1 / math.sqrt(shape[1] / F), 1 / math.sqrt(shape[1] / F)) end }),
    output("y", function(s) return { s.batch_size, F * s.dim } end),
  },
  reference = function(ops, indices, offs, tbl, y)
    local B = y:size(1)
    local D = tbl:size(2)
    for t = 0, F - 1 do
      ops.embedding_bag(tbl, indices, offs:narrow(1, t * B + 1, B + 1), y, { col = t * D })
    end
  end,
  -- an add for each element of each looked-up row
  flops = function(s) return count(s) * s.dim end,
  -- the looked-up rows, the ids, the offsets and the output (not the whole buffer)
  bytes = function(s, es) return count(s) * (s.dim * es + 8) + (F * s.batch_size + 1) * 8 + s.batch_size * F * s.dim * es end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self, rows, dim):
        super(Model, self).__init__()
        self.emb = nn.EmbeddingBag(sum(rows), dim, mode="sum", include_last_offset=True)
        self.features = len(rows)

    def forward(self, indices, offsets):
        y = self.emb(indices, offsets)  # [26 * batch, dim], feature-major
        b = y.shape[0] // self.features
        return y.view(self.features, b, -1).transpose(0, 1).reshape(b, -1)
]==],
    init = ("[[min(n, cap) for n in [%s]], dim]"):format(full_py),
  },
}
