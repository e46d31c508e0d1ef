# KernelBench format, adversarial (issue 33, attack 1: a lazy result): forward does no work and
# returns an empty tensor of a torch.Tensor subclass whose __torch_function__ computes the ReLU
# only when the harness copies the output out, after the timed window has closed. The values
# copied are exactly right; the time would be that of torch.empty_like. kreach accepts only plain
# torch.Tensors as outputs (invalid_candidate), whatever the lint says.
import torch
import torch.nn as nn


class LazyReLU(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.copy_ and len(args) > 1 and isinstance(args[1], LazyReLU) \
                and not isinstance(args[0], LazyReLU):
            # args[0] is the harness's plain output buffer: the work happens now
            return args[0].copy_(torch.relu(args[1].pending))
        return super().__torch_function__(func, types, args, kwargs)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x).as_subclass(LazyReLU)
        y.pending = x
        return y
