-- KernelBench level 1, problem 94: mean squared error, torch.mean((predictions - targets) ** 2).
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 94, name = "94_MSELoss", suite = "kernelbench-l1", category = "loss",
  description = "torch.mean((predictions - targets) ** 2) over two batch_size x input_size tensors, a 0-d result",
  -- input_size is upstream's input_shape = (32768,)
  sizes = { batch_size = 32768, input_size = 32768 },
  args = {
    input("predictions", { "batch_size", "input_size" }, { dist = "uniform | scale_rand", domain = "real" }),
    input("targets", { "batch_size", "input_size" }, { dist = "uniform", domain = "real" }),
    output("loss", {}),
  },
  reference = function(ops, predictions, targets, loss) ops.mse_loss(predictions, targets, loss) end,
  -- per element a subtraction, a square and an add into the sum
  flops = function(s) return 3 * s.batch_size * s.input_size end,
  torch = {
    model = [[
class Model(nn.Module):
    """
    A model that computes the Mean Squared Error loss for regression tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)
]],
  },
}
