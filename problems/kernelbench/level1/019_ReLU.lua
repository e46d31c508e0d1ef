-- KernelBench level 1, problem 19: ReLU.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 19, name = "19_ReLU", suite = "kernelbench-l1", category = "activation",
  description = "torch.relu over a batch_size x dim tensor",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y) ops.relu(x, y) end,
  flops = function(s) return s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
]],
  },
}
