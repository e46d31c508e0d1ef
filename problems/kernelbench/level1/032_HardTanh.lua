-- KernelBench level 1, problem 32: F.hardtanh with min_val = -1 and max_val = 1 over a batch_size x dim tensor
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 32, name = "32_HardTanh", suite = "kernelbench-l1", category = "activation",
  description = "F.hardtanh with min_val = -1 and max_val = 1 over a batch_size x dim tensor",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y)
    ops.hardtanh(x, y, -1, 1)
  end,
  -- two compares per element
  flops = function(s) return 2 * s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=-1., max_val=1.)
]],
  },
}
