-- KernelBench level 1, problem 78: nn.ConvTranspose2d(32, 32, kernel_size=(3, 7), padding=(1, 3)),
-- no bias, over a 8x32x512x1024 input.
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
           out_len(s.height, s.kernel_h, s.stride_h, s.padding_h, 1, 0),
           out_len(s.width, s.kernel_w, s.stride_w, s.padding_w, 1, 0) }
end

return kreach.problem{
  id = 78, name = "78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__",
  suite = "kernelbench-l1", category = "convolution", subcategory = "transposed 2D",
  description = "nn.ConvTranspose2d(32, 32, kernel_size=(3, 7), padding=(1, 3)), no bias, over a batch_size x in_channels x height x width tensor",
  sizes = { batch_size = 8, in_channels = 32, out_channels = 32, kernel_h = 3, kernel_w = 7,
            height = 512, width = 1024, stride_h = 1, stride_w = 1, padding_h = 1, padding_w = 3 },
  args = {
    input("x", { "batch_size", "in_channels", "height", "width" }, { domain = "real" }),
    param("weight", { "in_channels", "out_channels", "kernel_h", "kernel_w" },
          { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv_transpose(x, weight, y, {
      stride = { s.stride_h, s.stride_w }, padding = { s.padding_h, s.padding_w }, dilation = 1,
    })
  end,
  -- counted over the input: a multiply and an add for every input element and every weight
  -- element of its group
  flops = function(s)
    return 2 * s.batch_size * s.in_channels * s.height * s.width * s.out_channels * s.kernel_h *
      s.kernel_w
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1), padding: tuple = (0, 0), bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose2d(x)
]],
    init = "[in_channels, out_channels, (kernel_h, kernel_w), (stride_h, stride_w), (padding_h, padding_w)]",
  },
}
