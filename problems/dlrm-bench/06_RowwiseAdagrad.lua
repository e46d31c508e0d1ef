-- DLRM-Bench, problem 6: the sparse row-wise Adagrad step of an embedding table (FBGEMM's and
-- torchrec's ROWWISE_ADAGRAD, the optimiser MLPerf DLRM v2 trains its tables with) on the rows a
-- batch touched: for each of the `touched` distinct rows r with gradient g (its row of grad),
--   state'[r] = state[r] + mean(g^2),   row'[r] = table[r] - lr / (sqrt(state'[r]) + eps) * g.
-- The table is 10M x 128 (5.1 GB at f32) with one state value a row; the batch touched 1M rows
-- (dlrm's 0.3 to 1.5M). The outputs are the touched rows and their states after the step, in
-- the order of `ids` (a kernel that updates the table in place reads and writes the same bytes).
-- The ids are distinct rows (unique(rows): a run of a bijection of the table's rows); the
-- gradients are U(0, 1) (normal laws in the other trials); the states are U(0, 1), as after
-- some steps of accumulated squares; lr 0.01, eps 1e-8.
local kreach = require "kreach"
local input, param, scalar, output = kreach.input, kreach.param, kreach.scalar, kreach.output

return kreach.problem{
  id = 6, name = "6_RowwiseAdagrad", suite = "dlrm-bench", category = "embedding",
  subcategory = "optimizer",
  description = "row-wise Adagrad on the touched distinct rows of a rows x dim table: the new rows and their new states",
  sizes = { rows = 10000000, dim = 128, touched = 1000000 },
  args = {
    input("ids", { "touched" }, { dtype = "i64", dist = function(s) return ("unique(%d)"):format(s.rows) end }),
    input("grad", { "touched", "dim" }, { domain = "real" }),
    param("table", { "rows", "dim" }, { init = function(shape)
      local b = 1 / math.sqrt(shape[1])
      return ("uniform(%.17g, %.17g)"):format(-b, b)
    end }),
    param("state", { "rows" }, { init = "uniform(0, 1)" }),
    scalar("lr", 0.01),
    scalar("eps", 1e-8),
    output("new_rows", { "touched", "dim" }),
    output("new_state", { "touched" }),
  },
  reference = function(ops, ids, grad, tbl, state, lr, eps, new_rows, new_state)
    ops.rowwise_adagrad(tbl, state, ids, grad, lr, eps, new_rows, new_state)
  end,
  -- per element: the square, its share of the mean, the scale and the update; per row: the root
  flops = function(s) return s.touched * (4 * s.dim + 4) end,
  -- the touched rows and states read and written, the ids and the gradients read
  bytes = function(s, es) return s.touched * (3 * s.dim * es + 2 * es + 8) end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self, rows, dim):
        super(Model, self).__init__()
        # drawn as kreach draws them (an uninitialised table would make the export's output
        # whatever memory held, NaN included)
        b = 1 / math.sqrt(rows)
        self.table = nn.Parameter(torch.empty(rows, dim).uniform_(-b, b))
        self.state = nn.Parameter(torch.empty(rows).uniform_(0, 1))

    def forward(self, ids, grad, lr, eps):
        st = self.state[ids] + grad.pow(2).mean(dim=1)
        rows = self.table[ids] - (lr / (st.sqrt() + eps)).unsqueeze(1) * grad
        return rows, st
]==],
    init = "[rows, dim]",
    inputs = "[ids, grad, lr, eps]",
  },
}
