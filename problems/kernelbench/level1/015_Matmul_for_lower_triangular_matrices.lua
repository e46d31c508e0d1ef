-- KernelBench level 1, problem 15: torch.tril(torch.matmul(A, B)) for lower-triangular N x N matrices
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 15, name = "15_Matmul_for_lower_triangular_matrices", suite = "kernelbench-l1", category = "matmul",
  description = "torch.tril(torch.matmul(A, B)) for lower-triangular N x N matrices",
  sizes = { N = 4096 },
  args = {
    input("A", { "N", "N" }, { dist = "uniform | tril", domain = "lower_triangular" }),
    input("B", { "N", "N" }, { dist = "uniform | tril", domain = "lower_triangular" }),
    output("C", { "N", "N" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C)
    ops.tril(C, C)
  end,
  -- what the model computes: a dense product (the triangles are not exploited)
  flops = function(s) return 2 * s.N * s.N * s.N end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))
]],
  },
}
