-- KernelBench level 1, problem 90: torch.cumprod(x, dim=1) over a batch_size x input_size tensor.
--
-- dim is a size (the constructor argument, in torch.init), but the operator scans the last
-- dimension of the 2-D input and a reference receives tensors, not sizes; the output's shape
-- function refuses any dim but 1 instead of letting the reference scan another dimension than
-- the model's.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local function shape(s)
  if s.dim ~= 1 then
    error(("dim = %d: only dim = 1 (the last dimension of the 2-D input) is supported"):format(
      s.dim), 0)
  end
  return { s.batch_size, s.input_size }
end

return kreach.problem{
  id = 90, name = "90_cumprod", suite = "kernelbench-l1", category = "scan",
  description = "torch.cumprod(x, dim=1) over a batch_size x input_size tensor",
  sizes = { batch_size = 32768, input_size = 32768, dim = 1 },
  args = {
    input("x", { "batch_size", "input_size" }, { domain = "unit" }),
    output("y", shape),
  },
  reference = function(ops, x, y) ops.cumprod(x, y) end,
  -- one multiplication per element
  flops = function(s) return s.batch_size * s.input_size end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, dim):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumprod(x, dim=self.dim)
]],
    init = "[dim]",
  },
}
