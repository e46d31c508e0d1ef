-- KernelBench level 1, problem 17: C = A @ B.T, A is M x K and B is N x K
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 17, name = "17_Matmul_with_transposed_B", suite = "kernelbench-l1", category = "matmul",
  description = "C = A @ B.T, A is M x K and B is N x K",
  sizes = { M = 2048, K = 8192, N = 4096 },
  args = {
    input("A", { "M", "K" }, { domain = "real" }),
    input("B", { "N", "K" }, { domain = "real" }),
    output("C", { "M", "N" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C, { trans_b = true })
  end,
  -- one multiply and one add per term of each dot product
  flops = function(s) return 2 * s.M * s.K * s.N end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)
]],
  },
}
