-- An example candidate for KernelBench level-1 problem 36 (RMS norm over the channels of NCHW,
-- f32): one thread per (n, h, w) column; consecutive threads take consecutive columns, so each
-- pass over the channels reads coalesced rows. The first pass sums the squares, the second
-- scales (its reads mostly hit L2).
return {
  name = "rmsnorm_column_per_thread",
  source = [[
extern "C" __global__ void rmsnorm(const float *__restrict__ x, float *__restrict__ y,
                                   long long batch, int channels, long long hw, float eps) {
  long long cols = batch * hw;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < cols; c += stride) {
    long long n = c / hw, p = c % hw;
    const float *xc = x + n * channels * hw + p;
    float *yc = y + n * channels * hw + p;
    float s = 0.f;
    for (int k = 0; k < channels; k++) { float v = xc[k * hw]; s += v * v; }
    float r = rsqrtf(s / channels + eps);
    for (int k = 0; k < channels; k++) yc[k * hw] = xc[k * hw] * r;
  }
}
]],
  forward = function(k, x, y)
    local b, c, h, w = x:size(1), x:size(2), x:size(3), x:size(4)
    local cols = b * h * w
    local blocks = math.max(1, math.min((cols + 255) // 256, 132 * 32))
    k.rmsnorm{ grid = blocks, block = 256 }(x, y, b, c, h * w, 1e-5)
  end,
}
