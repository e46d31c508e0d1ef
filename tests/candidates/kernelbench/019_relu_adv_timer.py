# KernelBench format, adversarial (issue 33, attack 2: the timer rewritten by reflection, with no
# banned name): torch.cuda.Event.elapsed_time is replaced through type.__setattr__ by one that
# reports 60% of the real time; the ReLU itself is PyTorch's. kreach's guard records its own
# CUDA events in C, so the reported time is not the candidate's to change, whatever the lint
# says: its speedup over PyTorch eager stays near 1.
import torch
import torch.nn as nn

_real = torch.cuda.Event.elapsed_time
type.__setattr__(torch.cuda.Event, "elapsed_time", lambda a, b: _real(a, b) * 0.6)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
