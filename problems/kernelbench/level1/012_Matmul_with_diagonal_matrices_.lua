-- KernelBench level 1, problem 12: diag(A) @ B, which the model computes as a row scaling,
-- A.unsqueeze(1) * B (not a dense matrix product).
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 12, name = "12_Matmul_with_diagonal_matrices_", suite = "kernelbench-l1", category = "matmul",
  description = "diag(A) @ B as A.unsqueeze(1) * B: row i of B scaled by A[i]",
  sizes = { N = 4096, M = 4096 },
  args = {
    input("A", { "N" }, { domain = "real" }),
    input("B", { "N", "M" }, { domain = "real" }),
    output("C", { "N", "M" }),
  },
  reference = function(ops, A, B, C) ops.row_scale(A, B, C) end,
  flops = function(s) return s.N * s.M end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return A.unsqueeze(1) * B
]],
  },
}
