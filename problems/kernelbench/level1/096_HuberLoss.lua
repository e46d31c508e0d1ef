-- KernelBench level 1, problem 96: smooth L1 (Huber) loss with beta = 1, the mean.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 96, name = "96_HuberLoss", suite = "kernelbench-l1", category = "loss",
  description = "torch.nn.functional.smooth_l1_loss(predictions, targets) (beta = 1, mean) over two batch_size x input_size tensors, a 0-d result",
  -- input_size is upstream's input_shape = (32768,)
  sizes = { batch_size = 32768, input_size = 32768 },
  args = {
    input("predictions", { "batch_size", "input_size" }, { dist = "uniform | scale_rand", domain = "real" }),
    input("targets", { "batch_size", "input_size" }, { dist = "uniform", domain = "real" }),
    output("loss", {}),
  },
  reference = function(ops, predictions, targets, loss) ops.smooth_l1_loss(predictions, targets, loss, 1.0) end,
  -- per element a subtraction, an abs, a compare, two multiplications (0.5 d^2 / beta, the
  -- division by beta = 1 not counted) and an add into the sum
  flops = function(s) return 6 * s.batch_size * s.input_size end,
  torch = {
    model = [[
class Model(nn.Module):
    """
    A model that computes Smooth L1 (Huber) Loss for regression tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.smooth_l1_loss(predictions, targets)
]],
  },
}
