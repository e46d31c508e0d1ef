# KernelBench format, adversarial (thread injection): forward returns an empty output at once and
# leaves a native thread that queues the ReLU on the caller's stream a moment later, after the
# harness has recorded the call's second event but before it copies the output: the values are
# right and the event time is nearly nothing. The lint cannot see into the C++; kreach's guard
# finds the thread still running when forward returns (invalid_candidate).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <chrono>
#include <thread>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    cudaStream_t s = c10::cuda::getCurrentCUDAStream().stream();
    int device = x.get_device();
    std::thread([=]() {
        cudaSetDevice(device);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        const int block = 256;
        const int64_t grid = (n + block - 1) / block;
        relu_kernel<<<(unsigned)grid, block, 0, s>>>(xp, yp, n);
    }).detach();
    return y;
}
"""

relu_cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu = load_inline(
    name="kreach_test_relu_thread",
    cpp_sources=relu_cpp_source,
    cuda_sources=relu_source,
    functions=["relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu.relu_cuda(x)
