-- KernelBench level 1, problem 14: triu(A @ B) for upper-triangular A and B.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 14, name = "14_Matmul_for_upper_triangular_matrices", suite = "kernelbench-l1",
  category = "matmul",
  description = "torch.triu(torch.matmul(A, B)) for upper-triangular N x N matrices",
  sizes = { N = 4096 },
  args = {
    input("A", { "N", "N" }, { dist = "uniform | triu", domain = "upper_triangular" }),
    input("B", { "N", "N" }, { dist = "uniform | triu", domain = "upper_triangular" }),
    output("C", { "N", "N" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C)
    ops.triu(C, C)
  end,
  -- what the model computes: a dense product (the triangles are not exploited)
  flops = function(s) return 2 * s.N * s.N * s.N end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.triu(torch.matmul(A, B))
]],
  },
}
