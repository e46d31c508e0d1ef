-- KernelBench level 1, problem 1: C = A @ B for square matrices.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 1, name = "1_Square_matrix_multiplication_", suite = "kernelbench-l1", category = "matmul",
  description = "C = A @ B (torch.matmul) for two N x N matrices",
  sizes = { N = 4096 },
  args = {
    input("A", { "N", "N" }, { domain = "real" }),
    input("B", { "N", "N" }, { domain = "real" }),
    output("C", { "N", "N" }),
  },
  reference = function(ops, A, B, C) ops.matmul(A, B, C) end,
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
