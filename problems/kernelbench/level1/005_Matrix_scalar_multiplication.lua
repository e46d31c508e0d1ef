-- KernelBench level 1, problem 5: C = A * s for a Python float s = 3.14
local kreach = require "kreach"
local input, scalar, output = kreach.input, kreach.scalar, kreach.output

return kreach.problem{
  id = 5, name = "5_Matrix_scalar_multiplication", suite = "kernelbench-l1", category = "elementwise",
  description = "C = A * s for a Python float s = 3.14",
  sizes = { M = 65536, N = 16384 },
  args = {
    input("A", { "M", "N" }, { domain = "real" }),
    scalar("s", 3.14),
    output("C", { "M", "N" }),
  },
  reference = function(ops, A, s, C)
    ops.scale(A, C, s)
  end,
  -- one multiply per element
  flops = function(s) return s.M * s.N end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, s: float):
        return A * s
]],
    inputs = "[A, s]",
  },
}
