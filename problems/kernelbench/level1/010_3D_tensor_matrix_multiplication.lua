-- KernelBench level 1, problem 10: 3-D tensor times matrix: torch.matmul((N, M, K), (K, L)) -> (N, M, L)
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 10, name = "10_3D_tensor_matrix_multiplication", suite = "kernelbench-l1", category = "matmul",
  description = "3-D tensor times matrix: torch.matmul((N, M, K), (K, L)) -> (N, M, L)",
  sizes = { N = 16, M = 1024, K = 2048, L = 768 },
  args = {
    input("A", { "N", "M", "K" }, { domain = "real" }),
    input("B", { "K", "L" }, { domain = "real" }),
    output("C", { "N", "M", "L" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C)
  end,
  -- one multiply and one add per term of each dot product
  flops = function(s) return 2 * s.N * s.M * s.K * s.L end,
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
