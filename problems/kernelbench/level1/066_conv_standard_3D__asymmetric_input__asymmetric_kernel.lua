-- KernelBench level 1, problem 66: nn.Conv3d(3, 64, kernel_size=(3, 5, 7)), no bias, over a
-- 8x3x16x128x128 input.
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
  return { s.batch_size, s.out_channels, out_len(s.depth, s.kernel_d, 1, 0, 1),
           out_len(s.height, s.kernel_h, 1, 0, 1), out_len(s.width, s.kernel_w, 1, 0, 1) }
end

return kreach.problem{
  id = 66, name = "66_conv_standard_3D__asymmetric_input__asymmetric_kernel",
  suite = "kernelbench-l1", category = "convolution", subcategory = "standard 3D",
  description = "nn.Conv3d(3, 64, kernel_size=(3, 5, 7)), no bias, over a batch_size x in_channels x depth x height x width tensor",
  sizes = { batch_size = 8, in_channels = 3, out_channels = 64, kernel_d = 3, kernel_h = 5,
            kernel_w = 7, depth = 16, height = 128, width = 128 },
  args = {
    input("x", { "batch_size", "in_channels", "depth", "height", "width" }, { domain = "real" }),
    param("weight", { "out_channels", "in_channels", "kernel_d", "kernel_h", "kernel_w" },
          { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    ops.conv(x, weight, y, { stride = 1, padding = 0, dilation = 1 })
  end,
  -- a multiply and an add for every output element and every weight element of its group
  flops = function(s)
    local y = out_shape(s)
    return 2 * y[1] * y[2] * y[3] * y[4] * y[5] * s.in_channels * s.kernel_d * s.kernel_h *
      s.kernel_w
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1, 1), padding: tuple = (0, 0, 0), dilation: tuple = (1, 1, 1), groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv3d(x)
]],
    init = "[in_channels, out_channels, (kernel_d, kernel_h, kernel_w)]",
  },
}
