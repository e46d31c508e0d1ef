-- KernelBench level 1, problem 95: F.cross_entropy of batch_size rows of num_classes logits
-- against int64 class indices (mean over rows of logsumexp(row) - row[target]).
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 95, name = "95_CrossEntropyLoss", suite = "kernelbench-l1", category = "loss",
  description = "torch.nn.functional.cross_entropy(predictions, targets) for batch_size x num_classes logits and int64 targets, a 0-d result",
  sizes = { batch_size = 32768, num_classes = 4096 },
  args = {
    input("predictions", { "batch_size", "num_classes" }, { dist = "uniform", domain = "real" }),
    input("targets", { "batch_size" }, { dtype = "i64", dist = function(s) return ("randint(0, %d)"):format(s.num_classes) end, domain = "indices" }),
    output("loss", {}),
  },
  reference = function(ops, predictions, targets, loss) ops.cross_entropy(predictions, targets, loss) end,
  -- per logit a max, a subtraction, an exp and an add (the log-sum-exp); per row a log, two
  -- subtractions and an add into the mean
  flops = function(s) return 4 * s.batch_size * s.num_classes + 4 * s.batch_size end,
  torch = {
    model = [[
class Model(nn.Module):
    """
    A model that computes Cross Entropy Loss for multi-class classification tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.cross_entropy(predictions, targets)
]],
  },
}
