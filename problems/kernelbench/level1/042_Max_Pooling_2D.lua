-- KernelBench level 1, problem 42: nn.MaxPool2d(kernel_size=4, stride=1, padding=1, dilation=1)
-- over a batch_size x channels x height x width tensor.
--
-- The pooling parameters are sizes (they are constructor arguments and appear in torch.init):
-- the reference reads them from ops.sizes, so an override changes the model and the reference
-- alike.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local POOL = { kernel_size = 4, stride = 1, padding = 1, dilation = 1 }

local function out_len(s, n)
  return (n + 2 * s.padding - s.dilation * (s.kernel_size - 1) - 1) // s.stride + 1
end

return kreach.problem{
  id = 42, name = "42_Max_Pooling_2D", suite = "kernelbench-l1", category = "pooling",
  description = "nn.MaxPool2d(kernel_size=4, stride=1, padding=1, dilation=1) over a batch_size x "
    .. "channels x height x width tensor",
  sizes = { batch_size = 32, channels = 64, height = 512, width = 512,
            kernel_size = POOL.kernel_size, stride = POOL.stride, padding = POOL.padding,
            dilation = POOL.dilation },
  args = {
    input("x", { "batch_size", "channels", "height", "width" }, { domain = "real" }),
    output("y", function(s)
      return { s.batch_size, s.channels, out_len(s, s.height), out_len(s, s.width) }
    end),
  },
  reference = function(ops, x, y)
    ops.max_pool2d(x, y, ops.sizes.kernel_size, ops.sizes.stride, ops.sizes.padding, ops.sizes.dilation)
  end,
  -- one comparison per window element (padded positions included) of every output
  flops = function(s)
    return s.batch_size * s.channels * out_len(s, s.height) * out_len(s, s.width)
      * s.kernel_size * s.kernel_size
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super(Model, self).__init__()
        self.maxpool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)
]],
    init = "[kernel_size, stride, padding, dilation]",
  },
}
