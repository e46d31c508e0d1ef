-- KernelBench level 1, problem 16: C = A.T @ B, A is K x M and B is K x N
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 16, name = "16_Matmul_with_transposed_A", suite = "kernelbench-l1", category = "matmul",
  description = "C = A.T @ B, A is K x M and B is K x N",
  sizes = { M = 2048, K = 8192, N = 4096 },
  args = {
    input("A", { "K", "M" }, { domain = "real" }),
    input("B", { "K", "N" }, { domain = "real" }),
    output("C", { "M", "N" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C, { trans_a = true })
  end,
  -- one multiply and one add per term of each dot product
  flops = function(s) return 2 * s.M * s.K * s.N end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)
]],
  },
}
