-- DLRM-Bench, problem 8: the gradient of DLRM's dot interaction (problem 7) for its inputs, as a
-- training step's backward pass computes it: given x [B, D], the 26 embeddings emb [B, 26, D]
-- and the gradient of the interaction's output gout [B, D + 351] (from the top MLP), the
-- gradients dx [B, D] and demb [B, 26, D]. With S the symmetric 27 x 27 matrix of gout's pairs
-- (zero diagonal) and T = [x; emb], dT = S T, dx = gout[:, :D] + dT[0] and demb = dT[1:]. The
-- inputs are U(0, 1) (normal laws in the other trials); each output sums 27 products in fp32.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local function pairs_of(s) return s.features * (s.features - 1) // 2 end

return kreach.problem{
  id = 8, name = "8_DotInteraction_backward", suite = "dlrm-bench", category = "embedding",
  subcategory = "interaction grad",
  description = "the gradient of DLRM's dot interaction for x and the embeddings, given the output's gradient",
  sizes = { batch_size = 2048, features = 27, dim = 128 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    input("emb", function(s) return { s.batch_size, s.features - 1, s.dim } end, { domain = "real" }),
    input("gout", function(s) return { s.batch_size, s.dim + pairs_of(s) } end, { domain = "real" }),
    output("dx", { "batch_size", "dim" }),
    output("demb", function(s) return { s.batch_size, s.features - 1, s.dim } end),
  },
  reference = function(ops, x, emb, gout, dx, demb) ops.dot_interaction_backward(x, emb, gout, dx, demb) end,
  -- dT = S T: a multiply and an add for each of features x features x dim, and dx's add
  flops = function(s) return s.batch_size * (2 * s.features * s.features * s.dim + s.dim) end,
  -- x, the embeddings and gout read once, dx and demb written once
  bytes = function(s, es) return s.batch_size * (2 * s.features * s.dim + s.dim + pairs_of(s)) * es end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self, features):
        super(Model, self).__init__()
        li, lj = torch.tril_indices(features, features, offset=-1)
        self.register_buffer("li", li, persistent=False)
        self.register_buffer("lj", lj, persistent=False)

    def forward(self, x, emb, gout):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            emb = emb.detach().requires_grad_(True)
            t = torch.cat([x.unsqueeze(1), emb], dim=1)
            z = torch.bmm(t, torch.transpose(t, 1, 2))
            out = torch.cat([x, z[:, self.li, self.lj]], dim=1)
            dx, demb = torch.autograd.grad(out, [x, emb], gout)
        return dx, demb
]==],
    init = "[features]",
  },
}
