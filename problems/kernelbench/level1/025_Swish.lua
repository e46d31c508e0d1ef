-- KernelBench level 1, problem 25: Swish: x * sigmoid(x) over a batch_size x dim tensor
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 25, name = "25_Swish", suite = "kernelbench-l1", category = "activation",
  description = "Swish: x * sigmoid(x) over a batch_size x dim tensor",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y)
    ops.swish(x, y)
  end,
  -- negate, exp, add, divide per element
  flops = function(s) return 4 * s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)
]],
  },
}
