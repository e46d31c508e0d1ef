-- KernelBench level 1, problem 100: torch.mean(torch.clamp(1 - predictions * targets, min=0))
-- where the (input_size,) targets broadcast along the last dimension of the predictions
-- (element [i, j] uses targets[j]: per column, not per sample).
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 100, name = "100_HingeLoss", suite = "kernelbench-l1", category = "loss",
  description = "torch.mean(torch.clamp(1 - predictions * targets, min=0)) for batch_size x input_size predictions and +-1 targets broadcast along the last dimension, a 0-d result",
  -- input_size is upstream's input_shape = (32768,). Upstream draws the targets with shape
  -- (batch_size,), which broadcasts only because batch_size == input_size; the shape here is
  -- (input_size,), what the broadcast needs, so that the sizes can be overridden apart.
  sizes = { batch_size = 32768, input_size = 32768 },
  args = {
    input("predictions", { "batch_size", "input_size" }, { dist = "uniform", domain = "real" }),
    input("targets", { "input_size" }, { dist = "sign", domain = "sign" }),
    output("loss", {}),
  },
  reference = function(ops, predictions, targets, loss) ops.hinge_loss(predictions, targets, loss) end,
  -- per element a multiplication, a subtraction, a clamp and an add into the sum
  flops = function(s) return 4 * s.batch_size * s.input_size end,
  torch = {
    model = [[
class Model(nn.Module):
    """
    A model that computes Hinge Loss for binary classification tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))
]],
  },
}
