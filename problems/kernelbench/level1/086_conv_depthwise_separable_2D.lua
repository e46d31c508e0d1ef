-- KernelBench level 1, problem 86: a depthwise-separable convolution, a depthwise
-- nn.Conv2d(64, 64, kernel_size=3, padding=1, groups=64) then a pointwise nn.Conv2d(64, 128,
-- kernel_size=1), neither with a bias, over a 16x64x512x512 input.
--
-- The constructor arguments are sizes (they appear in torch.init): the reference reads them from
-- ops.sizes, so an override changes the model and the reference alike. stride, padding and
-- dilation are the depthwise convolution's; the pointwise one has stride 1 and no padding. The
-- depthwise output is an intermediate tensor (16x64x512x512, 1 GiB in f32) that the model also
-- materialises; the reference takes it from the operator library's scratch memory (ops.empty:
-- shape-only while the reference is validated, from the timing pool while it is timed) and frees
-- it after the pointwise convolution. The default byte count (input, weights and output) leaves it
-- out: it is not compulsory traffic, a fused kernel need not write it. Both weights have PyTorch's
-- default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in_channels / groups *
-- prod(kernel): kernel_size^2 for the depthwise weight, in_channels for the pointwise one.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

-- PyTorch's output extent: out_len(d, k, stride, padding, dilation)
local out_len = kreach.conv_out_len

-- the depthwise output's spatial extents (the pointwise convolution keeps them)
local function mid_hw(s)
  return out_len(s.height, s.kernel_size, s.stride, s.padding, s.dilation),
         out_len(s.width, s.kernel_size, s.stride, s.padding, s.dilation)
end

local function out_shape(s)
  local h, w = mid_hw(s)
  return { s.batch_size, s.out_channels, h, w }
end

return kreach.problem{
  id = 86, name = "86_conv_depthwise_separable_2D",
  suite = "kernelbench-l1", category = "convolution", subcategory = "separable 2D",
  description = "depthwise nn.Conv2d(64, 64, kernel_size=3, padding=1, groups=64) then pointwise nn.Conv2d(64, 128, kernel_size=1), no biases, over a batch_size x in_channels x height x width tensor",
  sizes = { batch_size = 16, in_channels = 64, out_channels = 128, kernel_size = 3, height = 512,
            width = 512, stride = 1, padding = 1, dilation = 1 },
  args = {
    input("x", { "batch_size", "in_channels", "height", "width" }, { domain = "real" }),
    param("depthwise_weight", { "in_channels", 1, "kernel_size", "kernel_size" },
          { init = "kaiming_uniform" }),
    param("pointwise_weight", { "out_channels", "in_channels", 1, 1 }, { init = "kaiming_uniform" }),
    output("y", out_shape),
  },
  reference = function(ops, x, depthwise_weight, pointwise_weight, y)
    local s = ops.sizes
    local h, w = mid_hw(s)
    local mid = ops.empty({ s.batch_size, s.in_channels, h, w }, x.dtype)
    ops.conv(x, depthwise_weight, mid, {
      stride = s.stride, padding = s.padding, dilation = s.dilation, groups = s.in_channels,
    })
    ops.conv(mid, pointwise_weight, y, { stride = 1, padding = 0, dilation = 1 })
    if not ops.meta then mid:free() end
  end,
  -- a multiply and an add for every output element and every weight element of its group, in
  -- each of the two convolutions
  flops = function(s)
    local h, w = mid_hw(s)
    local pixels = s.batch_size * h * w
    return 2 * pixels * s.in_channels * s.kernel_size * s.kernel_size
      + 2 * pixels * s.out_channels * s.in_channels
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=in_channels, bias=bias)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.depthwise(x)
        x = self.pointwise(x)
        return x
]],
    init = "[in_channels, out_channels, kernel_size, stride, padding, dilation]",
  },
}
