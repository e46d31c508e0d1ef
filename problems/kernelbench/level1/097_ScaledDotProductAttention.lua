-- KernelBench level 1, problem 97: F.scaled_dot_product_attention(Q, K, V), no mask, not
-- causal, scale 1/sqrt(embedding_dimension).
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

local shape = { "batch_size", "num_heads", "sequence_length", "embedding_dimension" }

return kreach.problem{
  id = 97, name = "97_ScaledDotProductAttention", suite = "kernelbench-l1", category = "attention",
  description = "torch.nn.functional.scaled_dot_product_attention(Q, K, V) for (batch_size, num_heads, sequence_length, embedding_dimension) tensors",
  sizes = { batch_size = 32, num_heads = 32, sequence_length = 512, embedding_dimension = 1024 },
  args = {
    input("Q", shape, { dist = "uniform", domain = "real" }),
    input("K", shape, { dist = "uniform", domain = "real" }),
    input("V", shape, { dist = "uniform", domain = "real" }),
    output("out", shape),
  },
  reference = function(ops, Q, K, V, out) ops.sdpa(Q, K, V, out) end,
  -- the two matrix products, 2 L^2 D each per (batch, head); the softmax's max, subtraction,
  -- exp, sum and division per score (the scale rides on the first product)
  flops = function(s)
    local bh, l, d = s.batch_size * s.num_heads, s.sequence_length, s.embedding_dimension
    return 4 * bh * l * l * d + 5 * bh * l * l
  end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        out = torch.nn.functional.scaled_dot_product_attention(Q, K, V)
        return out
]],
  },
}
