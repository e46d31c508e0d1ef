-- KernelBench level 1, problem 68: nn.ConvTranspose3d(32, 64, kernel_size=(3, 5, 5)), no bias, over
-- a 16x32x64x64x64 input.
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
  return { s.batch_size, s.out_channels, out_len(s.depth, s.kernel_depth, 1, 0, 1, 0),
           out_len(s.width, s.kernel_width, 1, 0, 1, 0),
           out_len(s.height, s.kernel_height, 1, 0, 1, 0) }
end

return kreach.problem{
  id = 68, name = "68_conv_transposed_3D__square_input__asymmetric_kernel",
  suite = "kernelbench-l1", category = "convolution", subcategory = "transposed 3D",
  description = "nn.ConvTranspose3d(32, 64, kernel_size=(3, 5, 5)), no bias, over a batch_size x in_channels x depth x width x height tensor",
  sizes = { batch_size = 16, in_channels = 32, out_channels = 64, kernel_depth = 3,
            kernel_width = 5, kernel_height = 5, depth = 64, width = 64, height = 64 },
  args = {
    input("x", { "batch_size", "in_channels", "depth", "width", "height" }, { domain = "real" }),
    param("weight", { "in_channels", "out_channels", "kernel_depth", "kernel_width", "kernel_height" },
          { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    ops.conv_transpose(x, weight, y, { stride = 1, padding = 0, dilation = 1 })
  end,
  -- counted over the input: a multiply and an add for every input element and every weight
  -- element of its group
  flops = function(s)
    return 2 * s.batch_size * s.in_channels * s.depth * s.width * s.height * s.out_channels *
      s.kernel_depth * s.kernel_width * s.kernel_height
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
    init = "[in_channels, out_channels, (kernel_depth, kernel_width, kernel_height)]",
  },
}
