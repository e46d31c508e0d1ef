-- KernelBench level 1, problem 88: the tanh approximation of GELU used by minGPT, over a batch_size x dim tensor
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 88, name = "88_MinGPTNewGelu", suite = "kernelbench-l1", category = "activation",
  description = "the tanh approximation of GELU used by minGPT, over a batch_size x dim tensor",
  sizes = { batch_size = 8192, dim = 8192 },
  args = {
    input("x", { "batch_size", "dim" }, { domain = "real" }),
    output("y", { "batch_size", "dim" }),
  },
  reference = function(ops, x, y)
    ops.gelu_tanh(x, y)
  end,
  -- cube, multiply-add, scale, tanh, add, two multiplies per element
  flops = function(s) return 8 * s.batch_size * s.dim end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
]],
  },
}
