-- KernelBench level 1, problem 92: exclusive cumsum along dim 1: y[:, 0] = 0, y[:, j] = sum of
-- x[:, :j], over a batch_size x input_size tensor.
--
-- dim is a size (the constructor argument, in torch.init), but the operator scans the last
-- dimension of the 2-D input and a reference receives tensors, not sizes; the output's shape
-- function refuses any dim but 1 instead of letting the reference scan another dimension than
-- the model's.
--
-- The exclusive scan is the shipped one (upstream commit 423217d, after KernelBench PR #109 of
-- 2025-12 fixed issue #72): the cumsum of x.narrow(dim, 0, n - 1) with a zero column
-- prepended, so the output has x's shape, y[:, 0] = 0 and y[:, j] = sum of x[:, :j], as the
-- tsv line says ("zeros column then cumsum of x[:, :-1]"). The older file computed
-- torch.cat((zeros, x), dim)[:-1], whose [:-1] drops a *row* (dimension 0) and returns
-- (batch_size - 1) x (input_size + 1); that is the bug the PR fixed, so it is not ported.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local function shape(s)
  if s.dim ~= 1 then
    error(("dim = %d: only dim = 1 (the last dimension of the 2-D input) is supported"):format(
      s.dim), 0)
  end
  return { s.batch_size, s.input_size }
end

return kreach.problem{
  id = 92, name = "92_cumsum_exclusive", suite = "kernelbench-l1", category = "scan",
  description = "exclusive cumsum along dim 1: y[:, 0] = 0, y[:, j] = sum of x[:, :j], "
    .. "over a batch_size x input_size tensor",
  sizes = { batch_size = 32768, input_size = 32768, dim = 1 },
  args = {
    input("x", { "batch_size", "input_size" }, { domain = "real" }),
    output("y", shape),
  },
  reference = function(ops, x, y) ops.cumsum_exclusive(x, y) end,
  -- one addition per element but the last of each row (which no output includes)
  flops = function(s) return s.batch_size * math.max(s.input_size - 1, 0) end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, dim):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x):
        cumsum = torch.cumsum(x.narrow(dim=self.dim, start=0, length=x.size(self.dim) - 1), dim=self.dim)
        return torch.cat((torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim)), cumsum), dim=self.dim)
]],
    init = "[dim]",
  },
}
