-- KernelBench level 1, problem 49: torch.max(x, dim=reduce_dim)[0] (the values) over a batch_size x dim1 x dim2 tensor, reduce_dim = 1 (the middle one).
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

-- x's shape with the reduced dimension (reduce_dim, 0-based as in PyTorch) removed
local function reduced(s)
  local shape = { s.batch_size, s.dim1, s.dim2 }
  table.remove(shape, s.reduce_dim + 1)
  return shape
end

return kreach.problem{
  id = 49, name = "49_Max_reduction_over_a_dimension", suite = "kernelbench-l1", category = "reduction",
  description = "torch.max(x, dim=reduce_dim)[0] (the values) over a batch_size x dim1 x dim2 tensor, reduce_dim = 1 (the middle one)",
  sizes = { batch_size = 128, dim1 = 4096, dim2 = 4095, reduce_dim = 1 },
  args = {
    input("x", { "batch_size", "dim1", "dim2" }, { domain = "real" }),
    output("y", reduced),
  },
  -- reduce_dim is 0-based, as in PyTorch; the operators count dimensions from 1
  reference = function(ops, x, y) ops.amax(x, y, ops.sizes.reduce_dim + 1) end,
  -- one comparison per element
  flops = function(s) return s.batch_size * s.dim1 * s.dim2 end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=self.dim)[0]
]],
    init = "[reduce_dim]",
  },
}
