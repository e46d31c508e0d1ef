-- DLRM-Bench, problem 5: the backward pass of an embedding table's bags, as a sparse optimiser
-- needs it: each lookup's bag gradient (embedding_bag(sum)'s gradient, grad_out [batch, dim])
-- expanded to its lookup (offset2bag), the lookups sorted by row, and the gradients summed per
-- distinct row (FBGEMM's and PyTorch's embedding_bag backward). One table of 10M x 128, 8192
-- bags of 1 to 427 lookups (mean 214, MLPerf v2's ids a sample: 1739342 lookups, shuffled
-- lengths of a fixed total). Rows uniform in the default trials, Zipf-like (many repeats) in the
-- centred and shifted ones. The outputs have the lookups' capacity: the distinct rows in
-- ascending order (then -1), their summed gradients (then zeros), and their count.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local LO, HI = 1, 427

local function count(s) return kreach.bags_total(s.batch_size, LO, HI) end

return kreach.problem{
  id = 5, name = "5_EmbeddingBag_backward", suite = "dlrm-bench", category = "embedding",
  subcategory = "bag grad",
  description = "embedding_bag(sum)'s table gradient: lookups sorted by row, gradients summed per distinct row (rows ascending, padded to the lookups' count)",
  sizes = { rows = 10000000, dim = 128, batch_size = 8192 },
  args = {
    input("idx", function(s) return { count(s) } end,
      { dtype = "i64", dist = function(s) return ("randint(0, %d)"):format(s.rows) end, domain = "rows" }),
    input("offsets", function(s) return { s.batch_size + 1 } end, { dtype = "i64", dist = ("bags(%d, %d)"):format(LO, HI) }),
    input("grad_out", { "batch_size", "dim" }, { domain = "real" }),
    output("rows_out", function(s) return { count(s) } end, { dtype = "i64" }),
    output("grads", function(s) return { count(s), s.dim } end),
    output("count", { 1 }, { dtype = "i64" }),
  },
  reference = function(ops, idx, offsets, grad_out, rows_out, grads, n)
    ops.embedding_bag_backward(idx, offsets, grad_out, ops.sizes.rows, rows_out, grads, n)
  end,
  flops = function(s) return count(s) * s.dim end,
  -- the lookups and offsets read, each lookup's bag gradient read, the per-row sums written
  bytes = function(s, es) return count(s) * (8 + s.dim * es + 8 + s.dim * es) + (s.batch_size + 1) * 8 + 8 end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, idx, offsets, grad_out):
        L = idx.numel()
        bag = torch.repeat_interleave(torch.arange(offsets.numel() - 1, device=idx.device), offsets[1:] - offsets[:-1])
        uniq, inv = torch.unique(idx, sorted=True, return_inverse=True)
        u = uniq.numel()
        grads = torch.zeros(L, grad_out.shape[1], dtype=grad_out.dtype, device=idx.device)
        grads.index_add_(0, inv, grad_out[bag])
        rows = torch.full((L,), -1, dtype=torch.long, device=idx.device)
        rows[:u] = uniq
        return rows, grads, torch.tensor([u], dtype=torch.long, device=idx.device)
]==],
  },
}
