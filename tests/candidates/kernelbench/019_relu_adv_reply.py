# KernelBench format, adversarial (issue 33, attack 3: the worker reached through a string):
# operator.attrgetter("sys.modules")(torch)["__main__"] is the Python worker's main module. The
# candidate rebinds every function there named `reply` (the old worker's protocol writer) and
# every module-level `json.dumps` it can find so that each "ms" the worker sends is 60% of the
# real one. kreach's times come from the guard's own line (C, with a token Python never holds),
# so the reported time is unaffected, whatever the lint says.
import operator
import torch
import torch.nn as nn

_modules = operator.attrgetter("sys.modules")(torch)
_main = _modules["__main__"]
_json = _modules["json"]
_dumps = _json.dumps


def _forged(obj, *a, **k):
    if isinstance(obj, dict) and "ms" in obj:
        obj = dict(obj)
        obj["ms"] = obj["ms"] * 0.6
    return _dumps(obj, *a, **k)


_json.dumps = _forged
_ns = operator.attrgetter("__dict__")(_main)
if "reply" in _ns:
    _real_reply = _ns["reply"]
    _ns["reply"] = lambda obj: _real_reply(dict(obj, ms=obj["ms"] * 0.6) if "ms" in obj else obj)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
