-- Adversarial (problem 19, ReLU): the kernel spins on a volatile __device__ flag that nothing
-- ever sets. The compiler must reload a volatile on every iteration, so it cannot remove the
-- loop, and the kernel never finishes. Expected: timeout (in the trial's forward/sync phase).
return {
  name = "adv_gpu_hang",
  source = [[
__device__ volatile int release_flag = 0;  // never written

extern "C" __global__ void relu_after_release(const float *x, float *y, long long n) {
  while (release_flag == 0) __nanosleep(1000);  // forever
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
}
]],
  forward = function(k, x, y)
    k.relu_after_release{ grid = 1, block = 32 }(x, y, x:numel())
  end,
}
