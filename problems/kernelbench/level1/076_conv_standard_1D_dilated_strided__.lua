-- KernelBench level 1, problem 76: nn.Conv1d(64, 128, kernel_size=3, stride=3, dilation=4), no
-- bias, over a 64x64x524280 input.
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
  return { s.batch_size, s.out_channels, out_len(s.length, s.kernel_size, s.stride, 0, s.dilation) }
end

return kreach.problem{
  id = 76, name = "76_conv_standard_1D_dilated_strided__",
  suite = "kernelbench-l1", category = "convolution", subcategory = "standard 1D",
  description = "nn.Conv1d(64, 128, kernel_size=3, stride=3, dilation=4), no bias, over a batch_size x in_channels x length tensor",
  sizes = { batch_size = 64, in_channels = 64, out_channels = 128, kernel_size = 3, length = 524280,
            stride = 3, dilation = 4 },
  args = {
    input("x", { "batch_size", "in_channels", "length" }, { domain = "real" }),
    param("weight", { "out_channels", "in_channels", "kernel_size" }, { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, y)
    local s = ops.sizes
    ops.conv(x, weight, y, { stride = s.stride, padding = 0, dilation = s.dilation })
  end,
  -- a multiply and an add for every output element and every weight element of its group
  flops = function(s)
    local y = out_shape(s)
    return 2 * y[1] * y[2] * y[3] * s.in_channels * s.kernel_size
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, dilation: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, dilation=dilation, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d(x)
]],
    init = "[in_channels, out_channels, kernel_size, stride, dilation]",
  },
}
