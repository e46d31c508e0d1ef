# KernelBench format, invalid for problem 41: its get_init_inputs gives five constructor
# arguments (kernel_size, stride, padding, dilation, return_indices); this ModelNew takes two.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride)

    def forward(self, x):
        return self.pool(x)
