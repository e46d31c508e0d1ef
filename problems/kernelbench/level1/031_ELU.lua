-- KernelBench level 1, problem 31: F.elu with alpha = 1.0 over a batch_size x dim tensor
local kreach = require "kreach"
local input, scalar, output = kreach.input, kreach.scalar, kreach.output

return kreach.problem{
  id = 31, name = "31_ELU", suite = "kernelbench-l1", category = "activation",
  description = "F.elu with alpha = 1.0 over a batch_size x dim tensor",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    scalar("alpha", 1.0),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, alpha, y)
    ops.elu(x, y, alpha)
  end,
  -- compare, expm1, multiply per element
  flops = function(s) return 3 * s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, alpha: float = 1.0):
        super(Model, self).__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=self.alpha)
]],
    init = "[alpha]",
  },
}
