-- KernelBench level 1, problem 50: AlexNet's first layer, nn.Conv2d(3, 96, kernel_size=11,
-- stride=4, padding=2) *with* a bias (the module's default), over a 256x3x224x224 input.
--
-- The model hard-codes its channels, kernel, stride and padding; its one constructor argument,
-- num_classes, is unused (it is kept as a size only because torch.init passes it). The batch
-- and the spatial extents are sizes; the channels are not, since the model would not follow
-- them. The weight and the bias have PyTorch's default initialisation: U(-b, b) with
-- b = 1/sqrt(fan_in), fan_in = 3 * 11 * 11 = 363, for both.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

local C_IN, C_OUT, K, STRIDE, PAD = 3, 96, 11, 4, 2
local FAN_IN = C_IN * K * K

-- PyTorch's output extent: floor((d + 2 padding - (k - 1) - 1) / stride) + 1
local function out_len(d) return kreach.conv_out_len(d, K, STRIDE, PAD, 1) end

local function out_shape(s)
  return { s.batch_size, C_OUT, out_len(s.height), out_len(s.width) }
end

return kreach.problem{
  id = 50, name = "50_conv_standard_2D__square_input__square_kernel",
  suite = "kernelbench-l1", category = "convolution", subcategory = "standard 2D",
  description = "nn.Conv2d(3, 96, kernel_size=11, stride=4, padding=2) with bias (AlexNet conv1; num_classes unused), over a batch_size x 3 x height x width tensor",
  sizes = { batch_size = 256, height = 224, width = 224, num_classes = 1000 },
  args = {
    input("x", { "batch_size", C_IN, "height", "width" }, { domain = "real" }),
    param("weight", { C_OUT, C_IN, K, K }, { init = ("kaiming_uniform(%d)"):format(FAN_IN) }),
    -- nn.Conv2d's bias bound is 1/sqrt(fan_in) of the weight, which kaiming_uniform(fan_in) gives
    param("bias", { C_OUT }, { init = ("kaiming_uniform(%d)"):format(FAN_IN) }),
    output("y", out_shape),
  },
  reference = function(ops, x, weight, bias, y)
    ops.conv(x, weight, y, { stride = STRIDE, padding = PAD, dilation = 1, bias = bias })
  end,
  -- a multiply and an add for every output element and every weight element, and the bias's add
  flops = function(s)
    local y = out_shape(s)
    local n = y[1] * y[2] * y[3] * y[4]
    return 2 * n * FAN_IN + n
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super(Model, self).__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)

    def forward(self, x):
        x = self.conv1(x)
        return x
]],
    init = "[num_classes]",
  },
}
