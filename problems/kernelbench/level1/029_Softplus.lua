-- KernelBench level 1, problem 29: F.softplus with beta = 1 and threshold = 20 over a batch_size x dim tensor
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 29, name = "29_Softplus", suite = "kernelbench-l1", category = "activation",
  description = "F.softplus with beta = 1 and threshold = 20 over a batch_size x dim tensor",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y)
    ops.softplus(x, y)
  end,
  -- multiply, compare, exp, log1p, divide per element
  flops = function(s) return 5 * s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x)
]],
  },
}
