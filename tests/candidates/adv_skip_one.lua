-- Adversarial (problem 19, ReLU): correct ReLU values into every element of the output but one,
-- in the middle, which keeps the harness's poison. Expected: incorrect / incomplete_write (a
-- single unwritten element is enough; no fraction of the output may be left).
return {
  name = "adv_skip_one",
  source = [[
extern "C" __global__ void relu_but_one(const float *x, float *y, long long n, long long skip) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    if (i != skip) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
]],
  forward = function(k, x, y)
    local n = x:numel()
    k.relu_but_one{ grid = 1024, block = 256 }(x, y, n, n // 2)
  end,
}
