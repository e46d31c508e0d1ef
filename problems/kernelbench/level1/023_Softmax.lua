-- KernelBench level 1, problem 23: torch.softmax over dim 1 of a batch_size x dim matrix.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 23, name = "23_Softmax", suite = "kernelbench-l1", category = "activation",
  description = "torch.softmax(x, dim=1) over the rows of a batch_size x dim matrix",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y) ops.softmax(x, y, -1) end,
  -- five operations per element: the max comparison, the subtraction, the exp, the add into
  -- the sum, the division
  flops = function(s) return 5 * s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)
]],
  },
}
