-- Adversarial for kreach lint: asks for scratch memory of a negative size. kreach.empty refuses
-- that shape; lint's dry run checks each k:scratch request with the same code.
return {
  source = [[extern "C" __global__ void relu(const float *x, float *y, float *tmp, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}]],
  forward = function(k, x, y)
    local n = x:numel()
    local tmp = k:scratch({ -n }, "f32")
    k.relu{ grid = (n + 255) // 256, block = 256 }(x, y, tmp, n)
  end,
}
