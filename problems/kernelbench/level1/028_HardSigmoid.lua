-- KernelBench level 1, problem 28: F.hardsigmoid: clamp(x / 6 + 1/2, 0, 1) over a batch_size x dim tensor
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 28, name = "28_HardSigmoid", suite = "kernelbench-l1", category = "activation",
  description = "F.hardsigmoid: clamp(x / 6 + 1/2, 0, 1) over a batch_size x dim tensor",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y)
    ops.hardsigmoid(x, y)
  end,
  -- add, two clamps, divide per element
  flops = function(s) return 4 * s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardsigmoid(x)
]],
  },
}
