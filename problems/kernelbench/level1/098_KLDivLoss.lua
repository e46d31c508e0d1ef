-- KernelBench level 1, problem 98: F.kl_div(torch.log(predictions), targets,
-- reduction='batchmean') for row-softmaxed predictions and targets.
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 98, name = "98_KLDivLoss", suite = "kernelbench-l1", category = "loss",
  description = "torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean') for batch_size x input_size probability rows, a 0-d result",
  -- input_size is upstream's input_shape = (8192 * 2,)
  sizes = { batch_size = 16384, input_size = 16384 },
  args = {
    input("predictions", { "batch_size", "input_size" }, { dist = "uniform | scale_rand | softmax", domain = "probabilities" }),
    input("targets", { "batch_size", "input_size" }, { dist = "uniform | softmax", domain = "probabilities" }),
    output("loss", {}),
  },
  reference = function(ops, predictions, targets, loss) ops.kl_div_batchmean(predictions, targets, loss) end,
  -- per element two logs, two multiplications, a subtraction and an add into the sum
  flops = function(s) return 6 * s.batch_size * s.input_size end,
  torch = {
    model = [[
class Model(nn.Module):
    """
    A model that computes Kullback-Leibler Divergence for comparing two distributions.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')
]],
  },
}
