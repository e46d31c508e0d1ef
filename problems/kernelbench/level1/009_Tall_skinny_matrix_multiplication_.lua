-- KernelBench level 1, problem 9: C = A @ B for tall-skinny A (M x N) and wide B (N x M): an M x M output
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 9, name = "9_Tall_skinny_matrix_multiplication_", suite = "kernelbench-l1", category = "matmul",
  description = "C = A @ B for tall-skinny A (M x N) and wide B (N x M): an M x M output",
  sizes = { M = 32768, N = 32 },
  args = {
    input("A", { "M", "N" }, { domain = "real" }),
    input("B", { "N", "M" }, { domain = "real" }),
    output("C", { "M", "M" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C)
  end,
  -- one multiply and one add per term of each dot product
  flops = function(s) return 2 * s.M * s.N * s.M end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)
]],
  },
}
