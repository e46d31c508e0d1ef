-- KernelBench level 1, problem 37: x / torch.norm(x, p='fro'), one norm over the whole tensor.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 37, name = "37_FrobeniusNorm_", suite = "kernelbench-l1", category = "normalization",
  description = "x / torch.norm(x, p='fro') (one global norm) over a batch_size x features x dim1 x dim2 tensor",
  sizes = { batch_size = 112, features = 64, dim1 = 512, dim2 = 512 },
  args = {
    input("x", { "batch_size", "features", "dim1", "dim2" }, { domain = "real" }),
    output("y", { "batch_size", "features", "dim1", "dim2" }),
  },
  reference = function(ops, x, y) ops.frobenius_normalize(x, y) end,
  -- three operations per element: the square, the add into the sum, the division
  flops = function(s) return 3 * s.batch_size * s.features * s.dim1 * s.dim2 end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = torch.norm(x, p='fro')
        return x / norm
]],
  },
}
