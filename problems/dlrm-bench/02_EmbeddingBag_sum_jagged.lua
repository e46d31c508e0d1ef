-- DLRM-Bench, problem 2: one embedding table of 1M rows and dimension 64 (nn.EmbeddingBag,
-- mode "sum"), looked up with jagged bags: batch_size bags whose lengths are spread uniformly
-- over 1..100 (the multiset 1, 2, ..., 100, 1, ... shuffled by the seed, so that the number of
-- indices, kreach.bags_total, is fixed: 102176 at the shipped batch of 2048). The offsets are
-- CSR (batch_size + 1 values, include_last_offset=True). The table is initialised as dlrm's,
-- U(-1/sqrt(rows), 1/sqrt(rows)); the indices are its rows, uniform in the default trials and
-- Zipf-like in the centred and shifted ones. A bag sums up to 100 rows in fp32.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

local LO, HI = 1, 100

local function count(s) return kreach.bags_total(s.batch_size, LO, HI) end

return kreach.problem{
  id = 2, name = "2_EmbeddingBag_sum_jagged", suite = "dlrm-bench", category = "embedding",
  subcategory = "bag",
  description = ("nn.EmbeddingBag(rows, dim, mode='sum', include_last_offset=True) over batch_size jagged bags of %d to %d indices"):format(LO, HI),
  sizes = { rows = 1000000, dim = 64, batch_size = 2048 },
  args = {
    input("idx", function(s) return { count(s) } end,
      { dtype = "i64", dist = function(s) return ("randint(0, %d)"):format(s.rows) end, domain = "rows" }),
    input("offsets", function(s) return { s.batch_size + 1 } end, { dtype = "i64", dist = ("bags(%d, %d)"):format(LO, HI) }),
    param("table", { "rows", "dim" }, { init = function(shape)
      local b = 1 / math.sqrt(shape[1])
      return ("uniform(%.17g, %.17g)"):format(-b, b)
    end }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, idx, offsets, tbl, y) ops.embedding_bag(tbl, idx, offsets, y) end,
  -- an add for each element of each looked-up row
  flops = function(s) return count(s) * s.dim end,
  -- the rows looked up, the indices, the offsets and the output (not the whole table)
  bytes = function(s, es) return count(s) * (s.dim * es + 8) + (s.batch_size + 1) * 8 + s.batch_size * s.dim * es end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, rows, dim):
        super(Model, self).__init__()
        self.emb = nn.EmbeddingBag(rows, dim, mode="sum", include_last_offset=True)

    def forward(self, idx, offsets):
        return self.emb(idx, offsets)
]],
    init = "[rows, dim]",
  },
}
