-- KernelBench level 1, problem 3: batched matmul torch.bmm(A, B): (batch, m, k) @ (batch, k, n)
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 3, name = "3_Batched_matrix_multiplication", suite = "kernelbench-l1", category = "matmul",
  description = "batched matmul torch.bmm(A, B): (batch, m, k) @ (batch, k, n)",
  sizes = { batch_size = 128, m = 512, k = 1024, n = 2048 },
  args = {
    input("A", { "batch_size", "m", "k" }, { domain = "real" }),
    input("B", { "batch_size", "k", "n" }, { domain = "real" }),
    output("C", { "batch_size", "m", "n" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C)
  end,
  -- one multiply and one add per term of each dot product
  flops = function(s) return 2 * s.batch_size * s.m * s.k * s.n end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor):
        return torch.bmm(A, B)
]],
  },
}
