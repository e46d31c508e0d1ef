# KernelBench format, correct: row softmax as a load_inline CUDA extension (one block a row,
# the maximum and the sum reduced in shared memory, then one pass that writes).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    extern __shared__ float red[];
    const float* row = x + (int64_t)blockIdx.x * cols;
    float* out = y + (int64_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(row[j] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    const float inv = 1.f / red[0];
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) out[j] = expf(row[j] - m) * inv;
}

torch::Tensor softmax_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int threads = 256;
    softmax_rows<<<(unsigned)x.size(0), threads, threads * sizeof(float)>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    return y;
}
"""

softmax = load_inline(
    name="kreach_test_softmax",
    cpp_sources="torch::Tensor softmax_cuda(torch::Tensor x);",
    cuda_sources=softmax_source,
    functions=["softmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax.softmax_cuda(x.contiguous())
