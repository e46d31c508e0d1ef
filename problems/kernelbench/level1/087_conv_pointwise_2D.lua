-- KernelBench level 1, problem 87: nn.Conv2d(64, 128, kernel_size=1), no bias, over a
-- 16x64x1024x1024 input.
--
-- The constructor arguments are sizes (they appear in torch.init): the reference reads them from
-- ops.sizes, so an override changes the model and the reference alike. The weight has PyTorch's
-- default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in_channels / groups *
-- prod(kernel), taken from the weight's shape so that it follows overrides.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

-- PyTorch's output extent: out_len(d, k, stride, padding, dilation)
local out_len = kreach.conv_out_len

local function out_shape(s)
  return { s.batch_size, s.out_channels, out_len(s.height, 1, 1, 0, 1),
           out_len(s.width, 1, 1, 0, 1) }
end

return kreach.problem{
  id = 87, name = "87_conv_pointwise_2D",
  suite = "kernelbench-l1", category = "convolution", subcategory = "pointwise 2D",
  description = "nn.Conv2d(64, 128, kernel_size=1), no bias, over a batch_size x in_channels x height x width tensor",
  sizes = { batch_size = 16, in_channels = 64, out_channels = 128, height = 1024, width = 1024 },
  args = {
    input("x", { "batch_size", "in_channels", "height", "width" }, { domain = "real" }),
    param("weight", { "out_channels", "in_channels", 1, 1 }, { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    ops.conv(x, weight, y, { stride = 1, padding = 0, dilation = 1 })
  end,
  -- a multiply and an add for every output element and every weight element of its group
  flops = function(s)
    local y = out_shape(s)
    return 2 * y[1] * y[2] * y[3] * y[4] * s.in_channels
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super(Model, self).__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d(x)
]],
    init = "[in_channels, out_channels]",
  },
}
