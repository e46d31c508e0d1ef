"""PyTorch's side of experiments/dlrm/measure.lua's cross-check: experiments/workloads/dlrm.py's
DLRM model (sparse embedding gradients, plain SGD, BCE) built on the parameters and data batches
the Lua step wrote (a directory with manifest.json and raw little-endian tensors), run for
--steps steps; prints one JSON line: the loss after each step's forward, and the median time of
a step on the GPU (CUDA events around each of --timed further steps, after the checked ones).
With --device cpu (the CPU tests: the Lua step on kreach's host device) it runs on the CPU and
times nothing.

    python3 experiments/dlrm/torch_step.py --state DIR --steps 10 [--device cpu]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads"))
import dlrm  # noqa: E402

DTYPES = {"f32": "float32", "i64": "int64"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--state", required=True, help="the directory measure.lua wrote")
    p.add_argument("--steps", type=int, default=10, help="steps whose losses are compared (default 10)")
    p.add_argument("--timed", type=int, default=20, help="steps timed after them (default 20; none on the CPU)")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="where the model runs (default cuda)")
    a = p.parse_args()
    dev = a.device
    import torch

    with open(os.path.join(a.state, "manifest.json")) as f:
        m = json.load(f)
    cfg = dlrm.CONFIGS[m["config"]]

    def load(t):
        dt = getattr(torch, DTYPES[t["dtype"]])
        n = 1
        for s in t["shape"]:
            n *= s
        x = torch.from_file(os.path.join(a.state, t["file"]), shared=False, size=n, dtype=dt)
        return x.view(*t["shape"]).to(dev)

    model, _ = dlrm.build_model(torch, m["rows"], cfg["dim"], cfg["bot"], cfg["top"], True, "dot")
    model = model.to(dev)
    state = model.state_dict()
    with torch.no_grad():
        for t in m["params"]:
            if t["name"] not in state:
                sys.exit(f"torch_step.py: the model has no parameter {t['name']}")
            v = load(t)
            if tuple(state[t["name"]].shape) != tuple(v.shape):
                sys.exit(f"torch_step.py: {t['name']} is {tuple(state[t['name']].shape)} in the model, {tuple(v.shape)} in the file")
            state[t["name"]].copy_(v)
    batches = []
    for b in m["batches"]:
        batches.append((load(b["dense"]), [load(x) for x in b["idx"]], load(b["target"]).view(-1, 1)))
    B = m["batch"]
    offsets = torch.arange(0, B, dtype=torch.long, device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=m["lr"])

    def step(i):
        dense, idx, y = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        out = model(dense, offsets, idx)
        loss = torch.nn.functional.binary_cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        return loss

    losses = [step(i).item() for i in range(a.steps)]
    times = []
    for i in range(a.timed if dev == "cuda" else 0):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        step(a.steps + i)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    times.sort()
    print(json.dumps({"losses": losses, "step_ms": times[len(times) // 2] if times else None, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
