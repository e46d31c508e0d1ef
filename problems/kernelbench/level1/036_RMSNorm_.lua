-- KernelBench level 1, problem 36: RMS normalisation over the channels (dim 1 in PyTorch's
-- numbering) of NCHW: x / sqrt(mean(x^2, dim=1, keepdim=True) + eps), eps = 1e-5, no weight.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 36, name = "36_RMSNorm_", suite = "kernelbench-l1", category = "normalization",
  description = "x / sqrt(mean(x^2, dim=1, keepdim=True) + 1e-5) over the features of a batch_size x features x dim1 x dim2 tensor",
  sizes = { batch_size = 112, features = 64, dim1 = 512, dim2 = 512 },
  args = {
    input("x", { "batch_size", "features", "dim1", "dim2" }, { domain = "real" }),
    output("y", { "batch_size", "features", "dim1", "dim2" }),
  },
  reference = function(ops, x, y) ops.rms_norm(x, y, 1e-5) end,
  -- three operations per element (the square, the add into the sum, the division) and three
  -- per (n, h, w) column (the division by features, the eps add, the square root)
  flops = function(s)
    local cols = s.batch_size * s.dim1 * s.dim2
    return 3 * cols * s.features + 3 * cols
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super(Model, self).__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms
]],
    init = "[features]",
  },
}
