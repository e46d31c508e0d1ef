-- DLRM-Bench, problem 9: DCNv2's low-rank cross network as MLPerf DLRM v2 runs it (torchrec's
-- LowRankCrossNet): 3 layers of x_{l+1} = x0 * (W_l (V_l x_l) + b_l) + x_l over the interaction
-- input x0 [B, N], N = 3456 (the bottom MLP's 128 and 26 embeddings of 128), rank r = 512,
-- batch 8192. V_l is Linear(N, r) without bias, W_l Linear(r, N) with bias. V and W are
-- initialised xavier-normal (normal(0, sqrt(2 / (in + out)))), the biases at zero, as torchrec
-- does. x0 is U(0, 1) (normal laws in the other trials). Intermediates are the reference's own.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

local L = 3

local function xavier(shape) return ("normal(0, %.17g)"):format(math.sqrt(2 / (shape[1] + shape[2]))) end

local args = { input("x0", { "batch_size", "features" }, { domain = "real" }) }
for l = 1, L do args[#args + 1] = param(("v%d"):format(l), { "rank", "features" }, { init = xavier }) end
for l = 1, L do
  args[#args + 1] = param(("w%d"):format(l), { "features", "rank" }, { init = xavier })
  args[#args + 1] = param(("b%d"):format(l), { "features" }, { init = "zeros" })
end
args[#args + 1] = output("y", { "batch_size", "features" })

return kreach.problem{
  id = 9, name = "9_DCNv2_LowRankCross", suite = "dlrm-bench", category = "matmul",
  description = "DCNv2's low-rank cross: 3 layers of x = x0 * (W (V x) + b) + x over batch_size x features, rank rank",
  sizes = { batch_size = 8192, features = 3456, rank = 512 },
  args = args,
  reference = function(ops, x0, ...)
    local a = { ... }
    local y = a[3 * L + 1]
    local B, N = x0:size(1), x0:size(2)
    local r = a[1]:size(1)
    local low = ops.empty({ B, r }, x0.dtype)
    local h = ops.empty({ B, N }, x0.dtype)
    local x = x0
    for l = 1, L do
      local v, w, b = a[l], a[L + 2 * l - 1], a[L + 2 * l]
      ops.linear(x, v, nil, low)
      ops.linear(low, w, b, h)
      ops.mul_add(x0, h, x, y) -- the last layer's is the output; y serves as x_l from layer 2 on
      x = y
    end
    if not ops.meta then
      low:free()
      h:free()
    end
  end,
  -- per layer: the two products (2 B N r each), the bias, the multiply and the add
  flops = function(s) return L * s.batch_size * (4 * s.features * s.rank + 3 * s.features) end,
  -- x0 and the output once, the weights and biases (a fused network need not write its layers)
  bytes = function(s, es) return (2 * s.batch_size * s.features + L * (2 * s.features * s.rank + s.features)) * es end,
  torch = {
    model = [==[
class Model(nn.Module):
    def __init__(self, features, rank, layers=3):
        super(Model, self).__init__()
        self.V = nn.ModuleList([nn.Linear(features, rank, bias=False) for _ in range(layers)])
        self.W = nn.ModuleList([nn.Linear(rank, features, bias=True) for _ in range(layers)])

    def forward(self, x0):
        x = x0
        for V, W in zip(self.V, self.W):
            x = x0 * W(V(x)) + x
        return x
]==],
    init = "[features, rank]",
  },
}
