-- DLRM-Bench, problem 10: DLRM's bottom MLP on the 13 dense features, MLPerf DLRM v1 / v2's
-- 13-512-256-128 (facebookresearch/dlrm's --arch-mlp-bot), each layer nn.Linear with bias and a
-- ReLU, at a batch of 8192. The first layer's K is 13: tiny, and far from a GEMM's sweet spot.
-- Weights and biases are initialised as dlrm's: normal(0, sqrt(2 / (in + out))) and
-- normal(0, sqrt(1 / out)). The dense input is dlrm's log(1 + 100 u) of counts, here U(0, 4.6)
-- (normal laws in the other trials). Intermediates are the reference's own (ops.empty); TF32 is
-- off, as everywhere in kreach.
local kreach = require "kreach"
local input, param, output = kreach.input, kreach.param, kreach.output

local LAYERS = { 13, 512, 256, 128 }

local args = { input("x", { "batch_size", LAYERS[1] }, { dist = "uniform(0, 4.6151205168412594)", domain = "nonnegative" }) }
for l = 1, #LAYERS - 1 do
  local n, m = LAYERS[l], LAYERS[l + 1]
  args[#args + 1] = param(("w%d"):format(l), { m, n }, { init = ("normal(0, %.17g)"):format(math.sqrt(2 / (n + m))) })
  args[#args + 1] = param(("b%d"):format(l), { m }, { init = ("normal(0, %.17g)"):format(math.sqrt(1 / m)) })
end
args[#args + 1] = output("y", { "batch_size", LAYERS[#LAYERS] })

return kreach.problem{
  id = 10, name = "10_BottomMLP", suite = "dlrm-bench", category = "matmul",
  description = "DLRM's bottom MLP: Linear(13, 512) ReLU Linear(512, 256) ReLU Linear(256, 128) ReLU over batch_size x 13",
  sizes = { batch_size = 8192 },
  args = args,
  reference = function(ops, x, w1, b1, w2, b2, w3, b3, y)
    local h1 = ops.empty({ x:size(1), LAYERS[2] }, x.dtype)
    local h2 = ops.empty({ x:size(1), LAYERS[3] }, x.dtype)
    ops.linear(x, w1, b1, h1, { activation = "relu" })
    ops.linear(h1, w2, b2, h2, { activation = "relu" })
    ops.linear(h2, w3, b3, y, { activation = "relu" })
    if not ops.meta then
      h1:free()
      h2:free()
    end
  end,
  -- a multiply and an add for each weight and row, the bias's add and the ReLU's compare
  flops = function(s)
    local f = 0
    for l = 1, #LAYERS - 1 do f = f + s.batch_size * (2 * LAYERS[l] * LAYERS[l + 1] + 2 * LAYERS[l + 1]) end
    return f
  end,
  -- the input, the weights and biases, and the output (a fused MLP need not write its layers)
  bytes = function(s, es)
    local w = 0
    for l = 1, #LAYERS - 1 do w = w + LAYERS[l] * LAYERS[l + 1] + LAYERS[l + 1] end
    return (s.batch_size * (LAYERS[1] + LAYERS[#LAYERS]) + w) * es
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self, sizes):
        super(Model, self).__init__()
        layers = []
        for n, m in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(n, m, bias=True), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x)
]],
    init = "[[13, 512, 256, 128]]",
  },
}
