-- KernelBench level 1, problem 41: nn.MaxPool1d(kernel_size=8, stride=1, padding=4, dilation=3)
-- over a batch_size x features x sequence_length tensor.
--
-- The pooling parameters are sizes (they are constructor arguments and appear in torch.init):
-- the reference reads them from ops.sizes, so an override changes the model and the reference
-- alike.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local POOL = { kernel_size = 8, stride = 1, padding = 4, dilation = 3 }

local function out_len(s)
  return (s.sequence_length + 2 * s.padding - s.dilation * (s.kernel_size - 1) - 1) // s.stride + 1
end

return kreach.problem{
  id = 41, name = "41_Max_Pooling_1D", suite = "kernelbench-l1", category = "pooling",
  description = "nn.MaxPool1d(kernel_size=8, stride=1, padding=4, dilation=3) over a batch_size x "
    .. "features x sequence_length tensor",
  sizes = { batch_size = 64, features = 192, sequence_length = 65536,
            kernel_size = POOL.kernel_size, stride = POOL.stride, padding = POOL.padding,
            dilation = POOL.dilation },
  args = {
    input("x", { "batch_size", "features", "sequence_length" }, { domain = "real" }),
    output("y", function(s) return { s.batch_size, s.features, out_len(s) } end),
  },
  reference = function(ops, x, y)
    ops.max_pool1d(x, y, ops.sizes.kernel_size, ops.sizes.stride, ops.sizes.padding, ops.sizes.dilation)
  end,
  -- one comparison per window element (padded positions included) of every output
  flops = function(s) return s.batch_size * s.features * out_len(s) * s.kernel_size end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1, return_indices: bool = False):
        super(Model, self).__init__()
        self.maxpool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation, return_indices=return_indices)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)
]],
    init = "[kernel_size, stride, padding, dilation, False]",
  },
}
