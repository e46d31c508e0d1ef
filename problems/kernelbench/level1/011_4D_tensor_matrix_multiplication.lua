-- KernelBench level 1, problem 11: 4-D tensor-matrix product torch.einsum('bijl,lk->bijk', A, B)
local kreach = require "kreach"
local input, output = kreach.input, kreach.output

return kreach.problem{
  id = 11, name = "11_4D_tensor_matrix_multiplication", suite = "kernelbench-l1", category = "matmul",
  description = "4-D tensor-matrix product torch.einsum('bijl,lk->bijk', A, B)",
  sizes = { b = 8, i = 256, j = 512, l = 256, k = 768 },
  args = {
    input("A", { "b", "i", "j", "l" }, { domain = "real" }),
    input("B", { "l", "k" }, { domain = "real" }),
    output("C", { "b", "i", "j", "k" }),
  },
  reference = function(ops, A, B, C)
    ops.matmul(A, B, C) -- contracting the last index of A: a matrix product over the flattened rows
  end,
  -- one multiply and one add per term of each dot product
  flops = function(s) return 2 * s.b * s.i * s.j * s.l * s.k end,
  torch = {
    model = [[
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)
]],
  },
}
