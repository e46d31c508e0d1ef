-- KernelBench level 1, problem 4: matrix-vector product torch.matmul(A, B) with B a K x 1 matrix
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 4, name = "4_Matrix_vector_multiplication_", suite = "kernelbench-l1", category = "matmul",
  description = "matrix-vector product torch.matmul(A, B) with B a K x 1 matrix",
  sizes = { M = 2048, K = 1048576 },
  args = {
    input("A", { "M", "K" }, { domain = "real" }),
    input("B", { "K", 1 }, { domain = "real" }),
    output("C", { "M", 1 }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C)
  end,
  -- one multiply and one add per element of A
  flops = function(s) return 2 * s.M * s.K end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor):
        return torch.matmul(A, B)
]],
  },
}
