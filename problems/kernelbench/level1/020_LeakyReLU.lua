-- KernelBench level 1, problem 20: F.leaky_relu with negative_slope = 0.01 over a batch_size x dim tensor
local kreach = require "kreach"
local input, scalar, output = kreach.input, kreach.scalar, kreach.output

return kreach.problem{
  id = 20, name = "20_LeakyReLU", suite = "kernelbench-l1", category = "activation",
  description = "F.leaky_relu with negative_slope = 0.01 over a batch_size x dim tensor",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    scalar("negative_slope", 0.01),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, negative_slope, y)
    ops.leaky_relu(x, y, negative_slope)
  end,
  -- two operations per element (compare, multiply)
  flops = function(s) return 2 * s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super(Model, self).__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)
]],
    init = "[negative_slope]",
  },
}
