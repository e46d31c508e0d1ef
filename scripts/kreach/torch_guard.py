# kreach's Python worker, its guards in Python (docs/candidates.md, "Trust"): the checks that need
# no GPU, kept apart from torch_worker.py so that the CPU tests run them with Debian's torch. The
# kreach side sends this file and torch_worker.py as one program (kreach.pytorch).
#
# They narrow what a KernelBench-format candidate's Python can do to the harness; they are not
# the boundary. The time and the thread and process checks are taken in C (libkreach_inject.so's
# guard mode, runtime/inject/kr_guard.c), where Python code cannot rewrite them.


def output_problem(y, tensor_type, strided, shape, dtype, device_type="cuda"):
    """Why y cannot be one of a call's outputs, or None: it must be exactly tensor_type (not a
    subclass, whose __torch_function__ could compute the values when the harness copies them),
    strided, on the device, with the problem's shape and dtype. y's own attributes are read only
    once its type is known to be plain."""
    t = type(y)
    if t is not tensor_type:
        if isinstance(y, tensor_type):
            return "a subclass of torch.Tensor (%s.%s), not a torch.Tensor" % (t.__module__, t.__qualname__)
        return "a %s, not a tensor" % t.__name__
    if y.layout != strided:
        return "a %s tensor, not a strided one" % str(y.layout)
    if y.device.type != device_type:
        return "on %s, not on the GPU" % str(y.device)
    if tuple(y.shape) != tuple(shape) or y.dtype != dtype:
        return "%s %s, the problem's is %s %s" % (str(y.dtype), list(y.shape), str(dtype), list(shape))
    return None


class Integrity:
    """The harness's own functions as they were when the worker started, by name, and whether
    they still are: a candidate that rebinds one of them (a class attribute set through
    type.__setattr__, a module attribute) is found after its call, before its outputs are copied."""

    def __init__(self, getattr_=getattr):
        self._get = getattr_
        self.kept = []

    def keep(self, owner, name, label=None):
        """Remembers owner.name (it must exist) and returns it."""
        v = self._get(owner, name)
        self.kept.append((owner, name, v, label or name))
        return v

    def changed(self):
        """The labels of what no longer is what was kept."""
        out = []
        for owner, name, v, label in self.kept:
            try:
                now = self._get(owner, name)
            except BaseException:
                now = None
            if now is not v:
                out.append(label)
        return out
