-- KernelBench level 1, problem 45: nn.AvgPool2d(kernel_size=11) over a batch_size x channels x
-- height x width tensor. The model passes only kernel_size, so the stride defaults to it and
-- the padding is 0: the 11 x 11 windows tile the image without overlap (186 x 186 outputs of a
-- 2048 x 2048 image; the last 2 rows and columns are never read).
--
-- kernel_size is a size (the constructor argument, in torch.init): the reference reads it from
-- ops.sizes, so an override changes the model and the reference alike.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local KERNEL = 11

local function out_len(s, n)
  return (n - s.kernel_size) // s.kernel_size + 1
end

return kreach.problem{
  id = 45, name = "45_Average_Pooling_2D", suite = "kernelbench-l1", category = "pooling",
  description = "nn.AvgPool2d(kernel_size=11) (stride 11, padding 0) over a batch_size x channels "
    .. "x height x width tensor",
  sizes = { batch_size = 16, channels = 64, height = 2048, width = 2048, kernel_size = KERNEL },
  args = {
    input("x", { "batch_size", "channels", "height", "width" }, { domain = "real" }),
    output("y", function(s)
      return { s.batch_size, s.channels, out_len(s, s.height), out_len(s, s.width) }
    end),
  },
  reference = function(ops, x, y) ops.avg_pool2d(x, y, ops.sizes.kernel_size) end,
  -- one addition per window element and one division per output
  flops = function(s)
    return s.batch_size * s.channels * out_len(s, s.height) * out_len(s, s.width)
      * (s.kernel_size * s.kernel_size + 1)
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)
]],
    init = "[kernel_size]",
  },
}
