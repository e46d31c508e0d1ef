-- KernelBench level 1, problem 40: nn.LayerNorm((features, dim1, dim2)): mean and biased
-- variance over the trailing features x dim1 x dim2 elements of each sample, eps = 1e-5, then
-- the elementwise weight and bias.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

return kreach.problem{
  id = 40, name = "40_LayerNorm", suite = "kernelbench-l1", category = "normalization",
  description = "nn.LayerNorm(normalized_shape=(features, dim1, dim2)) (eps 1e-5) over a batch_size x features x dim1 x dim2 tensor",
  sizes = { batch_size = 16, features = 64, dim1 = 256, dim2 = 256 },
  args = {
    input("x", { "batch_size", "features", "dim1", "dim2" }, { domain = "real" }),
    param("weight", { "features", "dim1", "dim2" }, { init = "ones" }),
    param("bias", { "features", "dim1", "dim2" }, { init = "zeros" }),
    output("y", { "batch_size", "features", "dim1", "dim2" }),
  },
  reference = function(ops, x, weight, bias, y) ops.layer_norm(x, weight, bias, y, 1e-5) end,
  -- seven operations per element: the statistics (add; multiply and add for the square) and
  -- the map (subtract, multiply by 1/std, multiply by the weight, add the bias)
  flops = function(s) return 7 * s.batch_size * s.features * s.dim1 * s.dim2 end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super(Model, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)
]],
    init = "[(features, dim1, dim2)]",
  },
}
