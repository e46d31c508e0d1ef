# -*- coding: utf-7 -*-
# KernelBench format, refused (issue 33): read as UTF-7, its declaration, lines 8-10 are one
# string (+ACIAIgAi- is three quotes); as UTF-8 text, which the worker compiles, they import os
# and run a command. The lint reads the file as the worker does, and refuses the declaration.
import torch
import torch.nn as nn
ACIAIgAi = 1
x = +ACIAIgAi-0
import os; os.system("id")
y = +ACIAIgAi-(0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
