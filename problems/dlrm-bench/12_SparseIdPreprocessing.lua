-- DLRM-Bench, problem 12: the preprocessing of MLPerf DLRM v2's multi-hot sparse features as a
-- keyed jagged tensor (torchrec's KeyedJaggedTensor, feature-major) arrives from the loader: the
-- bags' lengths [26, batch] become CSR offsets (an exclusive cumulative sum, the total last,
-- 26 * batch + 1 values), and each raw id (a 40-bit hash) becomes a row of the one buffer that
-- holds all 26 tables: id mod rows_t plus the table's first row (table-batched embeddings).
-- Rows: dlrm.py's MLPerf cardinalities, capped at 10M as problem 4 caps them; the mean lengths
-- are MLPerf DLRM v2's multi-hot sizes (214 ids a sample). Each feature's lengths are 0..2 h_t in
-- turn, shuffled by the seed, so their total (kreach.jagged_total: 1749081 at the shipped batch
-- of 8192) is fixed while every bag's length varies; a kernel that assumes the lengths is wrong
-- on the next draw. Everything is integer: the outputs are exact.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local CAP = 10000000
local ROWS_FULL = { 39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10, 2208,
                    11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36 }
local HOT = { 3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1 }
local F = #HOT
local ROWS, FIRST = {}, {}
do
  local acc = 0
  for t, n in ipairs(ROWS_FULL) do
    ROWS[t] = math.min(n, CAP)
    FIRST[t] = acc
    acc = acc + ROWS[t]
  end
end

local function count(s) return kreach.jagged_total(s.batch_size, HOT) end
local ID_RANGE = 1 << 40

return kreach.problem{
  id = 12, name = "12_SparseIdPreprocessing", suite = "dlrm-bench", category = "embedding",
  subcategory = "preprocessing",
  description = "keyed jagged sparse features: lengths [26, batch_size] to CSR offsets, raw ids to rows of the table-batched buffer (id mod rows_t + first row)",
  sizes = { batch_size = 8192 },
  args = {
    input("lengths", { F, "batch_size" }, { dtype = "i64", dist = ("jagged(%s)"):format(table.concat(HOT, ", ")) }),
    input("ids", function(s) return { count(s) } end, { dtype = "i64", dist = ("randint(0, %d)"):format(ID_RANGE) }),
    output("linear", function(s) return { count(s) } end, { dtype = "i64" }),
    output("offsets", function(s) return { F * s.batch_size + 1 } end, { dtype = "i64" }),
  },
  reference = function(ops, lengths, ids, linear, offsets)
    ops.lengths_to_offsets(lengths, offsets)
    ops.linearize_ids(ids, offsets, ROWS, FIRST, linear)
  end,
  -- a remainder and an add per id, an add per length
  flops = function(s) return 2 * count(s) + F * s.batch_size end,
  -- ids read and rows written (8 bytes each), lengths read and offsets written
  bytes = function(s) return 16 * count(s) + 16 * F * s.batch_size + 8 end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self, rows):
        super(Model, self).__init__()
        r = torch.tensor(rows, dtype=torch.long)
        self.register_buffer("rows", r, persistent=False)
        self.register_buffer("first", torch.cumsum(r, 0) - r, persistent=False)

    def forward(self, lengths, ids):
        offsets = torch.cat([lengths.new_zeros(1), torch.cumsum(lengths.flatten(), 0)])
        feature = torch.repeat_interleave(torch.arange(lengths.shape[0], device=ids.device), lengths.sum(1))
        return ids % self.rows[feature] + self.first[feature], offsets
]==],
    init = ("[[%s]]"):format(table.concat(ROWS, ", ")),
  },
}
