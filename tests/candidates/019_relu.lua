-- A correct candidate for KernelBench level-1 problem 19 (ReLU): a grid-stride float4 kernel.
return {
  name = "relu_float4",
  source = [[
extern "C" __global__ void relu4(const float4 *__restrict__ x, float4 *__restrict__ y, long long n4) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v = x[i];
    v.x = v.x > 0.f ? v.x : 0.f; v.y = v.y > 0.f ? v.y : 0.f;
    v.z = v.z > 0.f ? v.z : 0.f; v.w = v.w > 0.f ? v.w : 0.f;
    y[i] = v;
  }
}
extern "C" __global__ void relu_tail(const float *x, float *y, long long from, long long n) {
  long long i = from + blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
]],
  options = { "--use_fast_math" },
  forward = function(k, x, y)
    local n = x:numel()
    local n4 = n // 4
    if n4 > 0 then k.relu4{ grid = 132 * 16, block = 256 }(x, y, n4) end
    if n % 4 ~= 0 then k.relu_tail{ grid = 1, block = 32 }(x, y, n4 * 4, n) end
  end,
}
