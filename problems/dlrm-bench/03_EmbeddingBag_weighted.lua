-- DLRM-Bench, problem 3: a large embedding table, 10M rows of dimension 128 (5.1 GB at f32),
-- looked up with weighted bags (nn.EmbeddingBag, mode "sum", per_sample_weights): batch_size
-- bags of 12 to 27 indices (the pooling factors of MLPerf DLRM v2's multi-hot features), each
-- row scaled by its weight. The lengths are 12..27 in turn, shuffled by the seed, so the number
-- of indices, kreach.bags_total, is fixed: 159744 at the shipped batch of 8192. The table is
-- initialised as dlrm's, U(-1/sqrt(rows), 1/sqrt(rows)); the indices are its rows, uniform in
-- the default trials and Zipf-like in the centred and shifted ones; the weights are U(0, 1)
-- (normal laws in the other trials).
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

local LO, HI = 12, 27

local function count(s) return kreach.bags_total(s.batch_size, LO, HI) end

return kreach.problem{
  id = 3, name = "3_EmbeddingBag_weighted", suite = "dlrm-bench", category = "embedding",
  subcategory = "bag",
  description = ("nn.EmbeddingBag(rows, dim, mode='sum', include_last_offset=True) with per_sample_weights, over batch_size bags of %d to %d indices"):format(LO, HI),
  sizes = { rows = 10000000, dim = 128, batch_size = 8192 },
  args = {
    input("idx", function(s) return { count(s) } end,
      { dtype = "i64", dist = function(s) return ("randint(0, %d)"):format(s.rows) end, domain = "rows" }),
    input("offsets", function(s) return { s.batch_size + 1 } end, { dtype = "i64", dist = ("bags(%d, %d)"):format(LO, HI) }),
    input("weights", function(s) return { count(s) } end, { domain = "real" }),
    param("table", { "rows", "dim" }, { init = function(shape)
      local b = 1 / math.sqrt(shape[1])
      return ("uniform(%.17g, %.17g)"):format(-b, b)
    end }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, idx, offsets, weights, tbl, y)
    ops.embedding_bag(tbl, idx, offsets, y, { per_sample_weights = weights })
  end,
  -- a multiply and an add for each element of each looked-up row
  flops = function(s) return 2 * count(s) * s.dim end,
  -- the rows looked up, the indices and weights, the offsets and the output
  bytes = function(s, es) return count(s) * (s.dim * es + 8 + es) + (s.batch_size + 1) * 8 + s.batch_size * s.dim * es end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, rows, dim):
        super(Model, self).__init__()
        self.emb = nn.EmbeddingBag(rows, dim, mode="sum", include_last_offset=True)

    def forward(self, idx, offsets, weights):
        return self.emb(idx, offsets, per_sample_weights=weights)
]],
    init = "[rows, dim]",
  },
}
