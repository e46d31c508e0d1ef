-- KernelBench level 1, problem 85: nn.Conv2d(128, 128, kernel_size=(3, 7), groups=128), no bias,
-- over a 32x128x128x256 input.
--
-- The constructor takes out_channels and groups and uses neither: it builds Conv2d(in_channels,
-- in_channels, ..., groups=in_channels). The sizes 'out_channels' and 'groups' (128, as upstream
-- passes them) change nothing, in the model or in the reference.
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
           out_len(s.height, s.kernel_size_h, s.stride_h, s.padding_h, s.dilation_h),
           out_len(s.width, s.kernel_size_w, s.stride_w, s.padding_w, s.dilation_w) }
end

return kreach.problem{
  id = 85, name = "85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel",
  suite = "kernelbench-l1", category = "convolution", subcategory = "depthwise 2D",
  description = "nn.Conv2d(128, 128, kernel_size=(3, 7), groups=128), no bias (its out_channels and groups arguments are unused), over a batch_size x in_channels x height x width tensor",
  sizes = { batch_size = 32, in_channels = 128, out_channels = 128, kernel_size_h = 3,
            kernel_size_w = 7, height = 128, width = 256, stride_h = 1, stride_w = 1, padding_h = 0,
            padding_w = 0, dilation_h = 1, dilation_w = 1, groups = 128 },
  args = {
    input("x", { "batch_size", "in_channels", "height", "width" }, { domain = "real" }),
    param("weight", { "in_channels", 1, "kernel_size_h", "kernel_size_w" },
          { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv(x, weight, y, {
      stride = { s.stride_h, s.stride_w }, padding = { s.padding_h, s.padding_w },
      dilation = { s.dilation_h, s.dilation_w }, groups = s.in_channels,
    })
  end,
  -- a multiply and an add for every output element and every weight element of its group
  flops = function(s)
    local y = out_shape(s)
    return 2 * y[1] * y[2] * y[3] * y[4] * s.kernel_size_h * s.kernel_size_w
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size_h: int, kernel_size_w: int, stride_h: int = 1, stride_w: int = 1, padding_h: int = 0, padding_w: int = 0, dilation_h: int = 1, dilation_w: int = 1, groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, (kernel_size_h, kernel_size_w), stride=(stride_h, stride_w), padding=(padding_h, padding_w), dilation=(dilation_h, dilation_w), groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)
]],
    init = "[in_channels, out_channels, kernel_size_h, kernel_size_w, stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w, groups]",
  },
}
