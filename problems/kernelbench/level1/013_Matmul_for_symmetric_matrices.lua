-- KernelBench level 1, problem 13: C = A @ B for symmetric N x N matrices ((X + X.T) / 2 of uniform X)
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 13, name = "13_Matmul_for_symmetric_matrices", suite = "kernelbench-l1", category = "matmul",
  description = "C = A @ B for symmetric N x N matrices ((X + X.T) / 2 of uniform X)",
  sizes = { N = 4096 },
  args = {
    input("A", { "N", "N" }, { dist = "uniform | symmetric", domain = "symmetric" }),
    input("B", { "N", "N" }, { dist = "uniform | symmetric", domain = "symmetric" }),
    output("C", { "N", "N" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C)
  end,
  -- a dense product: symmetry is not exploited by the model
  flops = function(s) return 2 * s.N * s.N * s.N end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)
]],
  },
}
