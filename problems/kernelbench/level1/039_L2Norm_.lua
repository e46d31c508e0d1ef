-- KernelBench level 1, problem 39: x / torch.norm(x, p=2, dim=1, keepdim=True) over the rows
-- of a matrix.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 39, name = "39_L2Norm_", suite = "kernelbench-l1", category = "normalization",
  description = "x / torch.norm(x, p=2, dim=1, keepdim=True) over the rows of a batch_size x dim matrix",
  sizes = { batch_size = 32768, dim = 65535 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y) ops.l2_normalize(x, y) end,
  -- three operations per element (the square, the add into the sum, the division) and the
  -- square root per row
  flops = function(s) return 3 * s.batch_size * s.dim + s.batch_size end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p=2, dim=1, keepdim=True)
]],
  },
}
