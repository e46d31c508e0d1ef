# KernelBench format, adversarial without malice (issue 33, attack 5: a side stream from native
# code): the load_inline extension launches its ReLU on a stream from PyTorch's pool
# (c10::cuda::getStreamFromPool()) and returns without joining the caller's stream, as some
# generated extensions do. The lint cannot see into the C++; kreach's guard takes the span of
# every stream (CUPTI) and times the call by it, with a warning.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    const int block = 256;
    const int64_t grid = (n + block - 1) / block;
    cudaStream_t side = c10::cuda::getStreamFromPool().stream();
    relu_kernel<<<(unsigned)grid, block, 0, side>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

relu_cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu = load_inline(
    name="kreach_test_relu_native_stream",
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
