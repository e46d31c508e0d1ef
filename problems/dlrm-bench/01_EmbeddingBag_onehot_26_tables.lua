-- DLRM-Bench, problem 1: the sparse features of DLRM on Criteo Kaggle. 26 embedding tables
-- (nn.EmbeddingBag, mode "sum") with dlrm's default Kaggle cardinalities (33.8M rows, 2.2 GB at
-- f32) and embedding dimension 16, one index a sample in each (one-hot, as the dataset has), the
-- 26 bags of a sample concatenated: [batch, 26 * 16] (facebookresearch/dlrm's
-- bench/dlrm_s_criteo_kaggle.sh; experiments/workloads/dlrm.py --config kaggle). The tables
-- are initialised as dlrm initialises them, U(-1/sqrt(n), 1/sqrt(n)) for a table of n rows.
--
-- The indices of each table are its rows: uniform in the default trials, as dlrm's random
-- generator draws them, and Zipf-like (heavy-tailed, as real Criteo ids) in the centred and
-- shifted ones (the domain 'rows'). A sum of one row is that row: the output is a gather, and
-- any difference from the oracle is an error.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

local ROWS = { 1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
               27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572 }
local D = 16
local T = #ROWS

-- `cap` (default: none) caps every table's rows, for smaller runs (--size cap=N)
local function rows_of(n, s) return math.min(n, s.cap) end

local args = {}
for t, n in ipairs(ROWS) do
  args[#args + 1] = input(("idx_%d"):format(t), { "batch_size" },
    { dtype = "i64", dist = function(s) return ("randint(0, %d)"):format(rows_of(n, s)) end, domain = "rows" })
end
for t, n in ipairs(ROWS) do
  args[#args + 1] = param(("table_%d"):format(t), function(s) return { rows_of(n, s), D } end, { init = function(shape)
    local b = 1 / math.sqrt(shape[1])
    return ("uniform(%.17g, %.17g)"):format(-b, b)
  end })
end
args[#args + 1] = output("y", { "batch_size", T * D })

local rows_py = {}
for i, n in ipairs(ROWS) do rows_py[i] = tostring(n) end

return kreach.problem{
  id = 1, name = "1_EmbeddingBag_onehot_26_tables", suite = "dlrm-bench", category = "embedding",
  subcategory = "bag",
  description = ("26 one-hot nn.EmbeddingBag(n, %d, mode='sum') lookups (Criteo Kaggle's cardinalities, 33.8M rows), concatenated: batch_size x %d"):format(D, T * D),
  sizes = { batch_size = 2048, cap = 10131227 },
  args = args,
  reference = function(ops, ...)
    local a = { ... }
    local y = a[2 * T + 1]
    for t = 1, T do ops.embedding_bag(a[T + t], a[t], nil, y, { col = (t - 1) * D }) end
  end,
  -- one read of each looked-up element (a bag of one has no additions)
  flops = function(s) return s.batch_size * T * D end,
  -- the rows looked up, the indices and the output; not the tables, which a lookup never reads whole
  bytes = function(s, es) return s.batch_size * T * (D * es * 2 + 8) end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, rows, dim):
        super(Model, self).__init__()
        self.emb = nn.ModuleList([nn.EmbeddingBag(n, dim, mode="sum") for n in rows])

    def forward(self, *indices):
        # one index a bag: a [batch, 1] input is a batch of bags of one
        return torch.cat([e(i.view(-1, 1)) for e, i in zip(self.emb, indices)], dim=1)
]],
    init = ("[[min(n, cap) for n in [%s]], %d]"):format(table.concat(rows_py, ", "), D),
  },
}
