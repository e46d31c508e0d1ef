-- KernelBench level 1, problem 72: nn.ConvTranspose3d(32, 32, kernel_size=(3, 5, 7), stride=2,
-- padding=(1, 2, 3), output_padding=1, groups=4), no bias, over a 8x32x12x24x48 input.
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
           out_len(s.depth, s.kernel_d, s.stride_d, s.padding_d, 1, s.output_padding_d),
           out_len(s.height, s.kernel_h, s.stride_h, s.padding_h, 1, s.output_padding_h),
           out_len(s.width, s.kernel_w, s.stride_w, s.padding_w, 1, s.output_padding_w) }
end

return kreach.problem{
  id = 72, name = "72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_",
  suite = "kernelbench-l1", category = "convolution", subcategory = "transposed 3D",
  description = "nn.ConvTranspose3d(32, 32, kernel_size=(3, 5, 7), stride=2, padding=(1, 2, 3), output_padding=1, groups=4), no bias, over a batch_size x in_channels x depth x height x width tensor",
  sizes = { batch_size = 8, in_channels = 32, out_channels = 32, kernel_d = 3, kernel_h = 5,
            kernel_w = 7, depth = 12, height = 24, width = 48, stride_d = 2, stride_h = 2,
            stride_w = 2, padding_d = 1, padding_h = 2, padding_w = 3, output_padding_d = 1,
            output_padding_h = 1, output_padding_w = 1, groups = 4 },
  args = {
    input("x", { "batch_size", "in_channels", "depth", "height", "width" }, { domain = "real" }),
    param("weight", function(s)
      return { s.in_channels, s.out_channels // s.groups, s.kernel_d, s.kernel_h, s.kernel_w }
    end, { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv_transpose(x, weight, y, {
      stride = { s.stride_d, s.stride_h, s.stride_w },
      padding = { s.padding_d, s.padding_h, s.padding_w }, dilation = 1,
      output_padding = { s.output_padding_d, s.output_padding_h, s.output_padding_w },
      groups = s.groups,
    })
  end,
  -- counted over the input: a multiply and an add for every input element and every weight
  -- element of its group
  flops = function(s)
    return 2 * s.batch_size * s.in_channels * s.depth * s.height * s.width *
      (s.out_channels // s.groups) * s.kernel_d * s.kernel_h * s.kernel_w
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1, 1), padding: tuple = (0, 0, 0), output_padding: tuple = (0, 0, 0), groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose3d(x)
]],
    init = "[in_channels, out_channels, (kernel_d, kernel_h, kernel_w), (stride_d, stride_h, stride_w), (padding_d, padding_h, padding_w), (output_padding_d, output_padding_h, output_padding_w), groups]",
  },
}
