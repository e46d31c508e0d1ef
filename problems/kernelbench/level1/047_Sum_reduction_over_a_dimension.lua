-- KernelBench level 1, problem 47: torch.sum(x, dim=reduce_dim, keepdim=True) over a batch_size x dim1 x dim2 tensor, reduce_dim = 1 (the middle one).
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

-- x's shape with the reduced dimension (reduce_dim, 0-based as in PyTorch) kept as 1
local function reduced(s)
  local shape = { s.batch_size, s.dim1, s.dim2 }
  shape[s.reduce_dim + 1] = 1
  return shape
end

return kreach.problem{
  id = 47, name = "47_Sum_reduction_over_a_dimension", suite = "kernelbench-l1", category = "reduction",
  description = "torch.sum(x, dim=reduce_dim, keepdim=True) over a batch_size x dim1 x dim2 tensor, reduce_dim = 1 (the middle one)",
  sizes = { batch_size = 128, dim1 = 4096, dim2 = 4095, reduce_dim = 1 },
  args = {
    input("x", { "batch_size", "dim1", "dim2" }, { domain = "real" }),
    output("y", reduced),
  },
  -- reduce_dim is 0-based, as in PyTorch; the operators count dimensions from 1
  reference = function(ops, x, y) ops.sum(x, y, ops.sizes.reduce_dim + 1) end,
  -- one add per element
  flops = function(s) return s.batch_size * s.dim1 * s.dim2 end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, dim: int):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)
]],
    init = "[reduce_dim]",
  },
}
