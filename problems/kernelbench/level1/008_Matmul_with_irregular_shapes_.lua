-- KernelBench level 1, problem 8: C = A @ B with odd sizes M = 8205, K = 2949, N = 5921
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 8, name = "8_Matmul_with_irregular_shapes_", suite = "kernelbench-l1", category = "matmul",
  description = "C = A @ B with odd sizes M = 8205, K = 2949, N = 5921",
  sizes = { M = 8205, K = 2949, N = 5921 },
  args = {
    input("A", { "M", "K" }, { domain = "real" }),
    input("B", { "K", "N" }, { domain = "real" }),
    output("C", { "M", "N" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C)
  end,
  -- one multiply and one add per term of each dot product
  flops = function(s) return 2 * s.M * s.K * s.N end,
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
