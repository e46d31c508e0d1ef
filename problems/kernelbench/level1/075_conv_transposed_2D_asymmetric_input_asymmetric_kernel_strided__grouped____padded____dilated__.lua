-- KernelBench level 1, problem 75: nn.ConvTranspose2d(32, 64, kernel_size=(3, 5), stride=(2, 3),
-- padding=(1, 2), dilation=(2, 1), groups=4), no bias, over a 16x32x128x256 input.
--
-- The constructor arguments are sizes (they appear in torch.init): the reference reads them from
-- ops.sizes, so an override changes the model and the reference alike. The weight has PyTorch's
-- default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = weight.size(1) *
-- prod(kernel) (for a transposed convolution weight.size(1) is out_channels / groups), taken from
-- the weight's shape so that it follows overrides.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

-- PyTorch's output extent: out_len(d, k, stride, padding, dilation, output_padding)
local out_len = kreach.conv_transpose_out_len

local function out_shape(s)
  return { s.batch_size, s.out_channels,
           out_len(s.height, s.kernel_h, s.stride_h, s.padding_h, s.dilation_h, 0),
           out_len(s.width, s.kernel_w, s.stride_w, s.padding_w, s.dilation_w, 0) }
end

return kreach.problem{
  id = 75, name = "75_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated__",
  suite = "kernelbench-l1", category = "convolution", subcategory = "transposed 2D",
  description = "nn.ConvTranspose2d(32, 64, kernel_size=(3, 5), stride=(2, 3), padding=(1, 2), dilation=(2, 1), groups=4), no bias, over a batch_size x in_channels x height x width tensor",
  sizes = { batch_size = 16, in_channels = 32, out_channels = 64, kernel_h = 3, kernel_w = 5,
            height = 128, width = 256, stride_h = 2, stride_w = 3, padding_h = 1, padding_w = 2,
            dilation_h = 2, dilation_w = 1, groups = 4 },
  args = {
    input("x", { "batch_size", "in_channels", "height", "width" }, { domain = "real" }),
    param("weight", function(s)
      return { s.in_channels, s.out_channels // s.groups, s.kernel_h, s.kernel_w }
    end, { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv_transpose(x, weight, y, {
      stride = { s.stride_h, s.stride_w }, padding = { s.padding_h, s.padding_w },
      dilation = { s.dilation_h, s.dilation_w }, groups = s.groups,
    })
  end,
  -- counted over the input: a multiply and an add for every input element and every weight
  -- element of its group
  flops = function(s)
    return 2 * s.batch_size * s.in_channels * s.height * s.width * (s.out_channels // s.groups) *
      s.kernel_h * s.kernel_w
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1), padding: tuple = (0, 0), dilation: tuple = (1, 1), groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose2d(x)
]],
    init = "[in_channels, out_channels, (kernel_h, kernel_w), (stride_h, stride_w), (padding_h, padding_w), (dilation_h, dilation_w), groups]",
  },
}
