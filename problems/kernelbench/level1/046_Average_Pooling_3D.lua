-- KernelBench level 1, problem 46: nn.AvgPool3d(kernel_size=3, stride=2, padding=1)
-- (count_include_pad=True) over a batch_size x channels x depth x height x width tensor.
--
-- The pooling parameters are sizes (they are constructor arguments and appear in torch.init):
-- the reference reads them from ops.sizes, so an override changes the model and the reference
-- alike.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local POOL = { kernel_size = 3, stride = 2, padding = 1 }

local function out_len(s, n)
  return (n + 2 * s.padding - s.kernel_size) // s.stride + 1
end

return kreach.problem{
  id = 46, name = "46_Average_Pooling_3D", suite = "kernelbench-l1", category = "pooling",
  description = "nn.AvgPool3d(kernel_size=3, stride=2, padding=1), padding counted, over a "
    .. "batch_size x channels x depth x height x width tensor",
  sizes = { batch_size = 16, channels = 32, depth = 128, height = 128, width = 256,
            kernel_size = POOL.kernel_size, stride = POOL.stride, padding = POOL.padding },
  args = {
    input("x", { "batch_size", "channels", "depth", "height", "width" }, { domain = "real" }),
    output("y", function(s)
      return { s.batch_size, s.channels, out_len(s, s.depth), out_len(s, s.height),
               out_len(s, s.width) }
    end),
  },
  reference = function(ops, x, y)
    ops.avg_pool3d(x, y, ops.sizes.kernel_size, ops.sizes.stride, ops.sizes.padding)
  end,
  -- one addition per window element (padded positions included) and one division per output
  flops = function(s)
    return s.batch_size * s.channels * out_len(s, s.depth) * out_len(s, s.height)
      * out_len(s, s.width) * (s.kernel_size * s.kernel_size * s.kernel_size + 1)
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)
]],
    init = "[kernel_size, stride, padding]",
  },
}
