-- KernelBench level 1, problem 44: nn.AvgPool1d(kernel_size=8, stride=1, padding=4)
-- (count_include_pad=True) over a batch_size x in_channels x input_length tensor.
--
-- The pooling parameters are sizes (they are constructor arguments and appear in torch.init):
-- the reference reads them from ops.sizes, so an override changes the model and the reference
-- alike.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local POOL = { kernel_size = 8, stride = 1, padding = 4 }

local function out_len(s)
  return (s.input_length + 2 * s.padding - s.kernel_size) // s.stride + 1
end

return kreach.problem{
  id = 44, name = "44_Average_Pooling_1D", suite = "kernelbench-l1", category = "pooling",
  description = "nn.AvgPool1d(kernel_size=8, stride=1, padding=4), padding counted, over a "
    .. "batch_size x in_channels x input_length tensor",
  sizes = { batch_size = 64, in_channels = 128, input_length = 65536,
            kernel_size = POOL.kernel_size, stride = POOL.stride, padding = POOL.padding },
  args = {
    input("x", { "batch_size", "in_channels", "input_length" }, { domain = "real" }),
    output("y", function(s) return { s.batch_size, s.in_channels, out_len(s) } end),
  },
  reference = function(ops, x, y)
    ops.avg_pool1d(x, y, ops.sizes.kernel_size, ops.sizes.stride, ops.sizes.padding)
  end,
  -- one addition per window element (padded positions included) and one division per output
  flops = function(s) return s.batch_size * s.in_channels * out_len(s) * (s.kernel_size + 1) end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)
]],
    init = "[kernel_size, stride, padding]",
  },
}
