-- KernelBench level 1, problem 80: nn.Conv2d(32, 64, kernel_size=(5, 9), padding=(2, 4),
-- dilation=(2, 3)), no bias, over a 8x32x512x512 input.
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
           out_len(s.height, s.kernel_h, s.stride, s.padding_h, s.dilation_h),
           out_len(s.width, s.kernel_w, s.stride, s.padding_w, s.dilation_w) }
end

return kreach.problem{
  id = 80, name = "80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__",
  suite = "kernelbench-l1", category = "convolution", subcategory = "standard 2D",
  description = "nn.Conv2d(32, 64, kernel_size=(5, 9), padding=(2, 4), dilation=(2, 3)), no bias, over a batch_size x in_channels x height x width tensor",
  sizes = { batch_size = 8, in_channels = 32, out_channels = 64, kernel_h = 5, kernel_w = 9,
            height = 512, width = 512, stride = 1, padding_h = 2, padding_w = 4, dilation_h = 2,
            dilation_w = 3 },
  args = {
    input("x", { "batch_size", "in_channels", "height", "width" }, { domain = "real" }),
    param("weight", { "out_channels", "in_channels", "kernel_h", "kernel_w" },
          { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv(x, weight, y, {
      stride = s.stride, padding = { s.padding_h, s.padding_w },
      dilation = { s.dilation_h, s.dilation_w },
    })
  end,
  -- a multiply and an add for every output element and every weight element of its group
  flops = function(s)
    local y = out_shape(s)
    return 2 * y[1] * y[2] * y[3] * y[4] * s.in_channels * s.kernel_h * s.kernel_w
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1, padding: tuple = (0, 0), dilation: tuple = (1, 1), bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)
]],
    init = "[in_channels, out_channels, (kernel_h, kernel_w), stride, (padding_h, padding_w), (dilation_h, dilation_w)]",
  },
}
