-- KernelBench level 1, problem 33: nn.BatchNorm2d in training mode (the module is never put in
-- eval mode): per-channel batch mean and biased variance over N, H, W, eps = 1e-5.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

return kreach.problem{
  id = 33, name = "33_BatchNorm", suite = "kernelbench-l1", category = "normalization",
  description = "nn.BatchNorm2d(features) in training mode (batch statistics, biased variance, eps 1e-5) over a batch_size x features x dim1 x dim2 tensor",
  sizes = { batch_size = 64, features = 64, dim1 = 512, dim2 = 512 },
  args = {
    input("x", { "batch_size", "features", "dim1", "dim2" }, { domain = "real" }),
    param("weight", { "features" }, { init = "ones" }),
    param("bias", { "features" }, { init = "zeros" }),
    output("y", { "batch_size", "features", "dim1", "dim2" }),
  },
  reference = function(ops, x, weight, bias, y) ops.batch_norm_train(x, weight, bias, y, 1e-5) end,
  -- seven operations per element: the statistics (add; multiply and add for the square) and
  -- the map (subtract, multiply by 1/std, multiply by the weight, add the bias)
  flops = function(s) return 7 * s.batch_size * s.features * s.dim1 * s.dim2 end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, num_features: int):
        super(Model, self).__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)
]],
    init = "[features]",
  },
}
