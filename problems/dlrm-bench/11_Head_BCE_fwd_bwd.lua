-- DLRM-Bench, problem 11: a recommender's head and its loss, forward and gradient, as one
-- training step computes them: logits z = x w^T + b (nn.Linear(256, 1), the last layer of
-- DLRM's top MLP), p = sigmoid(z), the binary cross-entropy of p against the clicks (mean over
-- the batch, PyTorch's logs clamped at -100), and the gradients of that loss with respect to x,
-- w and b. Batch 65536 (MLPerf DLRM v1's large batches; --size batch_size=8192 for dlrm's).
-- x is the previous layer's ReLU output, U(0, 1); the clicks are 0 or 1 (randint(0, 2), cast);
-- w and b are nn.Linear's default init, U(-1/16, 1/16).
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

return kreach.problem{
  id = 11, name = "11_Head_BCE_fwd_bwd", suite = "dlrm-bench", category = "loss",
  description = "Linear(features, 1) + sigmoid + BCE (mean) over batch_size x features, and the gradients of the loss for x, w and b",
  sizes = { batch_size = 65536, features = 256 },
  args = {
    input("x", { "batch_size", "features" }, { domain = "nonnegative" }),
    input("target", { "batch_size" }, { dist = "randint(0, 2)", domain = "mask" }),
    param("w", { 1, "features" }, { init = "kaiming_uniform" }),
    param("b", { 1 }, { init = function() return "uniform(-0.0625, 0.0625)" end }),
    output("loss", { 1 }),
    output("dx", { "batch_size", "features" }),
    output("dw", { 1, "features" }),
    output("db", { 1 }),
  },
  reference = function(ops, x, target, w, b, loss, dx, dw, db)
    ops.bce_head(x, w, b, target, loss, dx, dw, db)
  end,
  -- the logits (2 per element), the row terms, dx (1 per element) and dw (2 per element)
  flops = function(s) return 5 * s.batch_size * s.features + 10 * s.batch_size end,
  -- x read (once by a fused kernel), dx written, the targets
  bytes = function(s, es) return (2 * s.batch_size * s.features + 2 * s.batch_size + 2 * s.features + 3) * es end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self, features):
        super(Model, self).__init__()
        self.fc = nn.Linear(features, 1)

    def forward(self, x, target):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            p = torch.sigmoid(self.fc(x)).squeeze(1)
            loss = F.binary_cross_entropy(p, target)
            dx, dw, db = torch.autograd.grad(loss, [x, self.fc.weight, self.fc.bias])
        return loss.detach().reshape(1), dx, dw, db
]==],
    init = "[features]",
  },
}
