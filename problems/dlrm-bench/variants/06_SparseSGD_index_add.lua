-- DLRM-Bench, problem 6's SGD variant (suite dlrm-bench-variants): plain SGD's update of an
-- embedding table from a sparse gradient, as PyTorch applies it to an nn.EmbeddingBag with
-- sparse=True: table.index_add_(0, ids, grad, alpha=-lr), the lookups' ids with their repeats
-- (an uncoalesced gradient) and each lookup's gradient row. dlrm's SGD step runs this once a
-- table (the indexFuncLargeIndex kernels of experiments/dlrm/project.lua's traces).
-- The table is problem 5's, 10M x 128 (5.1 GB at f32), with its lookups: 1739342 of them (8192
-- bags of 1 to 427), rows uniform in the default trials and Zipf-like in the centred and
-- shifted ones (many repeats). A kernel may not change the table (it is an input here), so the
-- outputs are the touched rows after the update, in problem 5's layout: the rows ascending
-- then -1, their new values then zeros, and their count. lr 0.1 (dlrm's Kaggle rate).
local kreach = require "kreach"
local input, param, scalar, output = kreach.input, kreach.param, kreach.scalar, kreach.output

local LO, HI = 1, 427
local function count(s) return kreach.bags_total(s.batch_size, LO, HI) end

return kreach.problem{
  id = 6, name = "6_SparseSGD_index_add", suite = "dlrm-bench-variants", category = "embedding",
  subcategory = "optimizer",
  description = "SGD on an embedding table from a sparse gradient, table.index_add_(0, ids, grad, alpha=-lr): the touched rows ascending, their new values, their count",
  sizes = { rows = 10000000, dim = 128, batch_size = 8192 },
  args = {
    input("ids", function(s) return { count(s) } end,
      { dtype = "i64", dist = function(s) return ("randint(0, %d)"):format(s.rows) end, domain = "rows" }),
    input("grad", function(s) return { count(s), s.dim } end, { domain = "real" }),
    param("table", { "rows", "dim" }, { init = function(shape)
      local b = 1 / math.sqrt(shape[1])
      return ("uniform(%.17g, %.17g)"):format(-b, b)
    end }),
    scalar("lr", 0.1),
    output("rows_out", function(s) return { count(s) } end, { dtype = "i64" }),
    output("new_rows", function(s) return { count(s), s.dim } end),
    output("count", { 1 }, { dtype = "i64" }),
  },
  reference = function(ops, ids, grad, tbl, lr, rows_out, new_rows, n)
    ops.sparse_sgd(tbl, ids, grad, lr, rows_out, new_rows, n)
  end,
  -- a multiply and an add for each element of each lookup's gradient
  flops = function(s) return 2 * count(s) * s.dim end,
  -- the ids and gradients read, each touched row read and written (at most one a lookup)
  bytes = function(s, es) return count(s) * (8 + 3 * s.dim * es + 8) + 8 end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self, rows, dim):
        super(Model, self).__init__()
        # drawn as kreach draws it (an uninitialised table would make the export's output
        # whatever memory held, NaN included)
        b = 1 / math.sqrt(rows)
        self.table = nn.Parameter(torch.empty(rows, dim).uniform_(-b, b))

    def forward(self, ids, grad, lr):
        L = ids.numel()
        uniq, inv = torch.unique(ids, sorted=True, return_inverse=True)
        u = uniq.numel()
        # index_add_ into the touched rows only (into the whole table it would write 5 GB)
        new = self.table[uniq].index_add_(0, inv, grad, alpha=-lr)
        rows = torch.full((L,), -1, dtype=torch.long, device=ids.device)
        rows[:u] = uniq
        out = torch.zeros(L, grad.shape[1], dtype=grad.dtype, device=ids.device)
        out[:u] = new
        return rows, out, torch.tensor([u], dtype=torch.long, device=ids.device)
]==],
    init = "[rows, dim]",
    inputs = "[ids, grad, lr]",
  },
}
