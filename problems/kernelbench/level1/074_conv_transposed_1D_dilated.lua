-- KernelBench level 1, problem 74: nn.ConvTranspose1d(32, 64, kernel_size=5, dilation=3), no bias,
-- over a 32x32x131072 input.
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
           out_len(s.length, s.kernel_size, s.stride, s.padding, s.dilation, 0) }
end

return kreach.problem{
  id = 74, name = "74_conv_transposed_1D_dilated",
  suite = "kernelbench-l1", category = "convolution", subcategory = "transposed 1D",
  description = "nn.ConvTranspose1d(32, 64, kernel_size=5, dilation=3), no bias, over a batch_size x in_channels x length tensor",
  sizes = { batch_size = 32, in_channels = 32, out_channels = 64, kernel_size = 5, length = 131072,
            stride = 1, padding = 0, dilation = 3 },
  args = {
    input("x", { "batch_size", "in_channels", "length" }, { domain = "real" }),
    param("weight", { "in_channels", "out_channels", "kernel_size" }, { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv_transpose(x, weight, y, {
      stride = s.stride, padding = s.padding, dilation = s.dilation,
    })
  end,
  -- counted over the input: a multiply and an add for every input element and every weight
  -- element of its group
  flops = function(s)
    return 2 * s.batch_size * s.in_channels * s.length * s.out_channels * s.kernel_size
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv1d_transpose = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d_transpose(x)
]],
    init = "[in_channels, out_channels, kernel_size, stride, padding, dilation]",
  },
}
