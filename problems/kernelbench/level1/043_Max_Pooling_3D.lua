-- KernelBench level 1, problem 43: nn.MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=3)
-- over a batch_size x channels x dim1 x dim2 x dim3 tensor.
--
-- The pooling parameters are sizes (they are constructor arguments and appear in torch.init):
-- the reference reads them from ops.sizes, so an override changes the model and the reference
-- alike. With stride 2 and dilation 3 the windows skip 2 of the
-- 128 planes and rows of each dimension; the default byte count (all of the input) is kept.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local POOL = { kernel_size = 3, stride = 2, padding = 1, dilation = 3 }

local function out_len(s, n)
  return (n + 2 * s.padding - s.dilation * (s.kernel_size - 1) - 1) // s.stride + 1
end

return kreach.problem{
  id = 43, name = "43_Max_Pooling_3D", suite = "kernelbench-l1", category = "pooling",
  description = "nn.MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=3) over a batch_size x "
    .. "channels x dim1 x dim2 x dim3 tensor",
  sizes = { batch_size = 16, channels = 32, dim1 = 128, dim2 = 128, dim3 = 128,
            kernel_size = POOL.kernel_size, stride = POOL.stride, padding = POOL.padding,
            dilation = POOL.dilation },
  args = {
    input("x", { "batch_size", "channels", "dim1", "dim2", "dim3" }, { domain = "real" }),
    output("y", function(s)
      return { s.batch_size, s.channels, out_len(s, s.dim1), out_len(s, s.dim2),
               out_len(s, s.dim3) }
    end),
  },
  reference = function(ops, x, y)
    ops.max_pool3d(x, y, ops.sizes.kernel_size, ops.sizes.stride, ops.sizes.padding, ops.sizes.dilation)
  end,
  -- one comparison per window element (padded positions included) of every output
  flops = function(s)
    return s.batch_size * s.channels * out_len(s, s.dim1) * out_len(s, s.dim2)
      * out_len(s, s.dim3) * s.kernel_size * s.kernel_size * s.kernel_size
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1, return_indices: bool = False, ceil_mode: bool = False):
        super(Model, self).__init__()
        self.maxpool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation, return_indices=return_indices, ceil_mode=ceil_mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)
]],
    init = "[kernel_size, stride, padding, dilation]",
  },
}
