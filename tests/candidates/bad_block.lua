-- Adversarial for kreach lint: a block of 99999 threads, more than any GPU runs (1024 at most,
-- and 1024 x 1024 x 64 per dimension). A real launch refuses it; so does lint's dry run.
return {
  source = [[extern "C" __global__ void relu(const float *x, float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}]],
  forward = function(k, x, y)
    local n = x:numel()
    k.relu{ grid = (n + 99998) // 99999, block = 99999 }(x, y, n)
  end,
}
