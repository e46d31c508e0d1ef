-- KernelBench level 1, problem 99: nn.TripletMarginLoss(margin) with p = 2, eps = 1e-6,
-- swap = False, the mean over rows.
local kreach = require "kreach"
local input, scalar, output = kreach.input, kreach.scalar, kreach.output

local shape = { "batch_size", "input_size" }

return kreach.problem{
  id = 99, name = "99_TripletMarginLoss", suite = "kernelbench-l1", category = "loss",
  description = "torch.nn.TripletMarginLoss(margin=margin)(anchor, positive, negative) for batch_size x input_size rows, a 0-d result",
  -- input_size is upstream's input_shape = (8192,)
  sizes = { batch_size = 32768, input_size = 8192 },
  args = {
    input("anchor", shape, { dist = "uniform | scale_rand", domain = "real" }),
    input("positive", shape, { dist = "uniform", domain = "real" }),
    input("negative", shape, { dist = "uniform", domain = "real" }),
    scalar("margin", 1.0),
    output("loss", {}),
  },
  -- the module's defaults: p = 2, eps = 1e-6 (added to each difference by pairwise_distance)
  reference = function(ops, anchor, positive, negative, margin, loss)
    ops.triplet_margin_loss(anchor, positive, negative, loss, margin, 2, 1e-6)
  end,
  -- per element and distance a subtraction, the eps add, a square and an add into the row's
  -- sum (two distances); per row two square roots, an add, a subtraction, a clamp and an add
  -- into the mean
  flops = function(s) return 8 * s.batch_size * s.input_size + 6 * s.batch_size end,
  torch = {
    model = [[
class Model(nn.Module):
    """
    A model that computes Triplet Margin Loss for metric learning tasks.

    Parameters:
        margin (float): The margin between the positive and negative samples.
    """
    def __init__(self, margin=1.0):
        super(Model, self).__init__()
        self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss_fn(anchor, positive, negative)
]],
    init = "[margin]",
  },
}
