-- Adversarial (problem 19, ReLU): computes ReLU in place into the input x, then copies x into y.
-- The output is right; the input has changed. Expected: incorrect / input_mutation.
return {
  name = "adv_mutation",
  source = [[
extern "C" __global__ void relu_inplace(float *x, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = x[i] > 0.f ? x[i] : 0.f;
}
extern "C" __global__ void copy(const float *x, float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i];
}
]],
  forward = function(k, x, y)
    local n = x:numel()
    k.relu_inplace{ grid = 1024, block = 256 }(x, n)
    k.copy{ grid = 1024, block = 256 }(x, y, n)
  end,
}
