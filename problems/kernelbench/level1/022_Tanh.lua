-- KernelBench level 1, problem 22: torch.tanh over a batch_size x dim tensor
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 22, name = "22_Tanh", suite = "kernelbench-l1", category = "activation",
  description = "torch.tanh over a batch_size x dim tensor",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y)
    ops.tanh(x, y)
  end,
  -- one transcendental per element
  flops = function(s) return s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)
]],
  },
}
