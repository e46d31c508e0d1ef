-- KernelBench level 1, problem 69: nn.ConvTranspose2d(64, 128, kernel_size=(3, 5)), no bias, over a
-- 64x64x128x256 input.
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
  return { s.batch_size, s.out_channels, out_len(s.height_in, s.kernel_h, 1, 0, 1, 0),
           out_len(s.width_in, s.kernel_w, 1, 0, 1, 0) }
end

return kreach.problem{
  id = 69, name = "69_conv_transposed_2D__asymmetric_input__asymmetric_kernel",
  suite = "kernelbench-l1", category = "convolution", subcategory = "transposed 2D",
  description = "nn.ConvTranspose2d(64, 128, kernel_size=(3, 5)), no bias, over a batch_size x in_channels x height_in x width_in tensor",
  sizes = { batch_size = 64, in_channels = 64, out_channels = 128, kernel_h = 3, kernel_w = 5,
            height_in = 128, width_in = 256 },
  args = {
    input("x", { "batch_size", "in_channels", "height_in", "width_in" }, { domain = "real" }),
    param("weight", { "in_channels", "out_channels", "kernel_h", "kernel_w" },
          { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    ops.conv_transpose(x, weight, y, { stride = 1, padding = 0, dilation = 1 })
  end,
  -- counted over the input: a multiply and an add for every input element and every weight
  -- element of its group
  flops = function(s)
    return 2 * s.batch_size * s.in_channels * s.height_in * s.width_in * s.out_channels *
      s.kernel_h * s.kernel_w
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1), padding: tuple = (0, 0), output_padding: tuple = (0, 0), dilation: tuple = (1, 1), groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose2d(x)
]],
    init = "[in_channels, out_channels, (kernel_h, kernel_w)]",
  },
}
