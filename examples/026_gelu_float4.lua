-- An example candidate for KernelBench level-1 problem 26 (exact GELU, f32): a grid-stride
-- float4 kernel computing 0.5 x (1 + erf(x / sqrt 2)), and a scalar kernel for the tail.
return {
  name = "gelu_erf_float4",
  source = [[
__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }

extern "C" __global__ void gelu4(const float4 *__restrict__ x, float4 *__restrict__ y, long long n4) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v = x[i];
    v.x = gelu(v.x); v.y = gelu(v.y); v.z = gelu(v.z); v.w = gelu(v.w);
    y[i] = v;
  }
}
extern "C" __global__ void gelu_tail(const float *x, float *y, long long from, long long n) {
  long long i = from + blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = gelu(x[i]);
}
]],
  forward = function(k, x, y)
    local n = x:numel()
    local n4 = n // 4
    if n4 > 0 then k.gelu4{ grid = 132 * 16, block = 256 }(x, y, n4) end
    if n % 4 ~= 0 then k.gelu_tail{ grid = 1, block = 32 }(x, y, n4 * 4, n) end
  end,
}
