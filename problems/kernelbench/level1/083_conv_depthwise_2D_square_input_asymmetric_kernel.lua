-- KernelBench level 1, problem 83: nn.Conv2d(8, 8, kernel_size=(3, 1), groups=8), no bias, over a
-- 64x8x512x512 input.
--
-- The kernel is (kernel_size, 1): a column. stride, padding and dilation are single numbers and
-- apply to both dimensions, as PyTorch applies them.
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
  return { s.batch_size, s.in_channels,
           out_len(s.height, s.kernel_size, s.stride, s.padding, s.dilation),
           out_len(s.width, 1, s.stride, s.padding, s.dilation) }
end

return kreach.problem{
  id = 83, name = "83_conv_depthwise_2D_square_input_asymmetric_kernel",
  suite = "kernelbench-l1", category = "convolution", subcategory = "depthwise 2D",
  description = "nn.Conv2d(8, 8, kernel_size=(3, 1), groups=8), no bias, over a batch_size x in_channels x height x width tensor",
  sizes = { batch_size = 64, in_channels = 8, kernel_size = 3, height = 512, width = 512,
            stride = 1, padding = 0, dilation = 1 },
  args = {
    input("x", { "batch_size", "in_channels", "height", "width" }, { domain = "real" }),
    param("weight", { "in_channels", 1, "kernel_size", 1 }, { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv(x, weight, y, {
      stride = s.stride, padding = s.padding, dilation = s.dilation, groups = s.in_channels,
    })
  end,
  -- a multiply and an add for every output element and every weight element of its group
  flops = function(s)
    local y = out_shape(s)
    return 2 * y[1] * y[2] * y[3] * y[4] * s.kernel_size
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size=(kernel_size, 1), stride=stride, padding=padding, dilation=dilation, groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)
]],
    init = "[in_channels, kernel_size, stride, padding, dilation]",
  },
}
