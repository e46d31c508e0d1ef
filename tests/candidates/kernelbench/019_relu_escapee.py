# KernelBench format, adversarial: a correct ReLU whose load_inline extension also leaves a
# process behind, from native code the lint cannot read. It double-forks; the grandchild starts
# a session of its own (out of the worker's process group, which a kill reaches), names itself
# kr_escapee, keeps the worker's standard output and error open and sleeps. Without kreach's
# reaper the worker's output never ended and the process outlived the evaluation; under it the
# process ends with the worker (tests/lua/gpu/kernelbench_candidates_spec.lua checks that no
# kr_escapee is left).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    const int block = 256;
    const int64_t grid = (n + block - 1) / block;
    relu_kernel<<<(unsigned)grid, block>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}

int64_t escape() {
    pid_t c = fork();
    if (c == 0) {
        if (fork() == 0) {
            setsid();
            prctl(PR_SET_NAME, "kr_escapee", 0, 0, 0);
            for (int i = 0; i < 600; i++) sleep(1);
        }
        _exit(0);
    }
    if (c > 0) waitpid(c, nullptr, 0);
    return (int64_t)c;
}
"""

relu_cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);\nint64_t escape();"

relu = load_inline(
    name="kreach_test_relu_escapee",
    cpp_sources=relu_cpp_source,
    cuda_sources=relu_source,
    functions=["relu_cuda", "escape"],
    verbose=False,
)

relu.escape()


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu.relu_cuda(x)
