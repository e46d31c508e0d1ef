-- KernelBench level 1, problem 34: nn.InstanceNorm2d (affine = False): per (n, c) mean and
-- biased variance over H, W, eps = 1e-5.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 34, name = "34_InstanceNorm", suite = "kernelbench-l1", category = "normalization",
  description = "nn.InstanceNorm2d(features) (no affine, eps 1e-5) over a batch_size x features x dim1 x dim2 tensor",
  sizes = { batch_size = 112, features = 64, dim1 = 512, dim2 = 512 },
  args = {
    input("x", { "batch_size", "features", "dim1", "dim2" }, { domain = "real" }),
    output("y", { "batch_size", "features", "dim1", "dim2" }),
  },
  reference = function(ops, x, y) ops.instance_norm(x, y, 1e-5) end,
  -- five operations per element: the statistics (add; multiply and add for the square) and
  -- the map (subtract, multiply by 1/std)
  flops = function(s) return 5 * s.batch_size * s.features * s.dim1 * s.dim2 end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, num_features: int):
        super(Model, self).__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inorm(x)
]],
    init = "[features]",
  },
}
