-- Adversarial (problem 19, ReLU): not valid Lua: the long string holding the source is never
-- closed. Expected: invalid_candidate.
return {
  name = "adv_malformed",
  source = [[
extern "C" __global__ void relu(const float *x, float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
]=],
  forward = function(k, x, y)
    k.relu{ grid = (x:numel() + 255) // 256, block = 256 }(x, y, x:numel())
  end,
}
