# KernelBench format, adversarial (issue 33, attack 4: a side stream from Python): a stream
# reached through operator.attrgetter("cuda.Stream")(torch), with no banned name; forward queues
# the ReLU there without joining the caller's stream, so the work is not held by the timed call's
# gate and can run before the first event. kreach's guard takes the span of every stream (CUPTI)
# and times the call by it, with a warning, whatever the lint says.
import operator
import torch
import torch.nn as nn

_side = operator.attrgetter("cuda.Stream")(torch)()
_on = operator.attrgetter("cuda.stream")(torch)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with _on(_side):
            y = torch.relu(x)
        return y
