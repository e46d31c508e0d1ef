-- Adversarial (problem 19, ReLU): CUDA that does not compile (a float4 assigned to a float).
-- Expected: compile_error.
return {
  name = "adv_compile_error",
  source = [[
extern "C" __global__ void relu_bad(const float4 *x, float *y, long long n4) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n4) y[i] = x[i];  // error: no conversion from float4 to float
}
]],
  forward = function(k, x, y)
    k.relu_bad{ grid = 1024, block = 256 }(x, y, x:numel() // 4)
  end,
}
