-- Adversarial (problem 19, ReLU): 019_relu.lua's float4 kernel without its tail kernel, so the
-- last n % 4 elements (1 to 3 at the sizes EXPECTED.lua runs it at) keep the harness's poison.
-- Expected: incorrect / incomplete_write.
return {
  name = "adv_no_tail",
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
]],
  forward = function(k, x, y)
    local n4 = x:numel() // 4
    if n4 > 0 then k.relu4{ grid = 132 * 16, block = 256 }(x, y, n4) end
  end,
}
