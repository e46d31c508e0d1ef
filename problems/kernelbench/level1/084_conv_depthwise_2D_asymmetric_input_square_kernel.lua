-- KernelBench level 1, problem 84: nn.Conv2d(128, 128, kernel_size=3, groups=128), no bias, over a
-- 64x128x256x512 input.
--
-- groups = in_channels and out_channels is passed through: with the shipped 128 and 128 it is
-- depthwise; out_channels must stay a multiple of in_channels (each input channel then feeds
-- out_channels / in_channels outputs, as in PyTorch).
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
  return { s.batch_size, s.out_channels,
           out_len(s.height_in, s.kernel_size, s.stride, s.padding, 1),
           out_len(s.width_in, s.kernel_size, s.stride, s.padding, 1) }
end

return kreach.problem{
  id = 84, name = "84_conv_depthwise_2D_asymmetric_input_square_kernel",
  suite = "kernelbench-l1", category = "convolution", subcategory = "depthwise 2D",
  description = "nn.Conv2d(128, 128, kernel_size=3, groups=128), no bias, over a batch_size x in_channels x height_in x width_in tensor",
  sizes = { batch_size = 64, in_channels = 128, out_channels = 128, kernel_size = 3,
            height_in = 256, width_in = 512, stride = 1, padding = 0 },
  args = {
    input("x", { "batch_size", "in_channels", "height_in", "width_in" }, { domain = "real" }),
    param("weight", { "out_channels", 1, "kernel_size", "kernel_size" }, { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv(x, weight, y, {
      stride = s.stride, padding = s.padding, dilation = 1, groups = s.in_channels,
    })
  end,
  -- a multiply and an add for every output element and every weight element of its group
  flops = function(s)
    local y = out_shape(s)
    return 2 * y[1] * y[2] * y[3] * y[4] * s.kernel_size * s.kernel_size
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size=(kernel_size, kernel_size), stride=stride, padding=padding, groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)
]],
    init = "[in_channels, out_channels, kernel_size, stride, padding]",
  },
}
