-- KernelBench level 1, problem 35: nn.GroupNorm(num_groups, features): mean and biased variance
-- per (n, group of features / num_groups channels), eps = 1e-5, then the per-channel weight and
-- bias.
--
-- num_groups is a size (a constructor argument, in torch.init): the reference reads it from
-- ops.sizes, so an override changes the model and the reference alike.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

local NUM_GROUPS = 8

local function shape(s)
  return { s.batch_size, s.features, s.dim1, s.dim2 }
end

return kreach.problem{
  id = 35, name = "35_GroupNorm_", suite = "kernelbench-l1", category = "normalization",
  description = "nn.GroupNorm(num_groups=8, num_channels=features) (eps 1e-5) over a batch_size x features x dim1 x dim2 tensor",
  sizes = { batch_size = 112, features = 64, num_groups = NUM_GROUPS, dim1 = 512, dim2 = 512 },
  args = {
    input("x", { "batch_size", "features", "dim1", "dim2" }, { domain = "real" }),
    param("weight", { "features" }, { init = "ones" }),
    param("bias", { "features" }, { init = "zeros" }),
    output("y", shape),
  },
  reference = function(ops, x, weight, bias, y)
    ops.group_norm(x, weight, bias, y, ops.sizes.num_groups, 1e-5)
  end,
  -- seven operations per element: the statistics (add; multiply and add for the square) and
  -- the map (subtract, multiply by 1/std, multiply by the weight, add the bias)
  flops = function(s) return 7 * s.batch_size * s.features * s.dim1 * s.dim2 end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, num_features: int, num_groups: int):
        super(Model, self).__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)
]],
    init = "[features, num_groups]",
  },
}
