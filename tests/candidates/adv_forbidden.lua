-- Adversarial (problem 19, ReLU): forward tries to run a shell command and to load a module
-- (neither os nor require is in the sandbox). Expected: invalid_candidate.
return {
  name = "adv_forbidden",
  source = [[
extern "C" __global__ void relu(const float *x, float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
]],
  forward = function(k, x, y)
    os.execute("true")
    local ffi = require("ffi")
    k.relu{ grid = (x:numel() + 255) // 256, block = 256 }(x, y, x:numel())
  end,
}
