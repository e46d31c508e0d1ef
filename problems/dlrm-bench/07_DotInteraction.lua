-- DLRM-Bench, problem 7: DLRM's "dot" feature interaction (facebookresearch/dlrm's
-- interact_features, MLPerf DLRM v1 on Criteo Terabyte): the bottom MLP's output x [B, D] and
-- the 26 embeddings emb [B, 26, D] are stacked into T [B, 27, D]; Z = bmm(T, T^T); the output
-- is x followed by Z's strict lower triangle in row-major order (dlrm's li, lj: 351 values), the
-- top MLP's input [B, D + 351] = [2048, 479]. The inputs are U(0, 1) (normal laws in the other
-- trials); a dot sums 128 products in fp32.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local function pairs_of(s) return s.features * (s.features - 1) // 2 end

return kreach.problem{
  id = 7, name = "7_DotInteraction", suite = "dlrm-bench", category = "embedding",
  subcategory = "interaction",
  description = "DLRM's dot interaction: cat(x, tril(bmm(T, T^T), -1)) for T = [x; emb] of features x dim",
  sizes = { batch_size = 2048, features = 27, dim = 128 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    input("emb", function(s) return { s.batch_size, s.features - 1, s.dim } end, { domain = "real" }),
    output("out", function(s) return { s.batch_size, s.dim + pairs_of(s) } end),
  },
  reference = function(ops, x, emb, out) ops.dot_interaction(x, emb, out) end,
  -- a multiply and an add for each of the dim terms of each pair
  flops = function(s) return s.batch_size * pairs_of(s) * 2 * s.dim end,
  -- x and the embeddings read once, the output written once
  bytes = function(s, es) return s.batch_size * (s.features * s.dim + s.dim + pairs_of(s)) * es end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self, features):
        super(Model, self).__init__()
        li, lj = torch.tril_indices(features, features, offset=-1)
        self.register_buffer("li", li, persistent=False)
        self.register_buffer("lj", lj, persistent=False)

    def forward(self, x, emb):
        t = torch.cat([x.unsqueeze(1), emb], dim=1)
        z = torch.bmm(t, torch.transpose(t, 1, 2))
        return torch.cat([x, z[:, self.li, self.lj]], dim=1)
]==],
    init = "[features]",
  },
}
