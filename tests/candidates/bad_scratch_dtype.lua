-- Adversarial for kreach lint: asks for scratch memory of a dtype kreach does not have ("f8").
return {
  source = [[extern "C" __global__ void relu(const float *x, float *y, float *tmp, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}]],
  forward = function(k, x, y)
    local n = x:numel()
    local tmp = k:scratch({ n }, "f8")
    k.relu{ grid = (n + 255) // 256, block = 256 }(x, y, tmp, n)
  end,
}
