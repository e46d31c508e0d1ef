# KernelBench format, adversarial: writes only the first half of a torch.empty output. The rest
# holds whatever the caching allocator last put in that memory (often the last correct answer).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        flat_x, flat_y = x.view(-1), y.view(-1)
        half = flat_x.numel() // 2
        flat_y[:half] = torch.relu(flat_x[:half])
        return y
