# KernelBench format, refused: reaches the host through os, subprocess and exec.
import os
import subprocess
import torch
import torch.nn as nn

exec("print('hello')")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        subprocess.run(["id"])
        self.k = torch.__builtins__

    def forward(self, x):
        os.system("true")
        return torch.relu(x)
