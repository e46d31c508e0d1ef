-- KernelBench level 1, problem 24: torch.log_softmax over dim 1 of a batch_size x dim matrix.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 24, name = "24_LogSoftmax", suite = "kernelbench-l1", category = "activation",
  description = "torch.log_softmax(x, dim=1) over the rows of a batch_size x dim matrix",
  sizes = { batch_size = 4096, dim = 393216 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y) ops.log_softmax(x, y, -1) end,
  -- five operations per element (the max comparison, the subtraction for exp, the exp, the add
  -- into the sum, the final subtraction) and a log per row
  flops = function(s) return 5 * s.batch_size * s.dim + s.batch_size end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, dim: int = 1):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=self.dim)
]],
  },
}
