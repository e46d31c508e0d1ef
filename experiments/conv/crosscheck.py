"""Compare kreach.ops.conv's outputs (written by crosscheck.lua) with PyTorch's.

usage: python3 crosscheck.py DIR
For every case: PyTorch's fp64 convolution (on the GPU if there is one) against kreach's f64
oracle (relative L2 at most 1e-12), and against kreach's f32, bf16 and f16 baselines (relative L2
at most 1e-6, 1e-2, 2e-3: the tolerances of tests/lua/gpu/conv_spec.lua); PyTorch's own f32
(TF32 off), bf16 and f16 results are printed beside them for scale. Exits 1 when a case is off.
"""
import json, sys
import torch
import torch.nn.functional as F

d = sys.argv[1]
dev = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
TOL = {"f64": 1e-12, "f32": 1e-6, "bf16": 1e-2, "f16": 2e-3}
TDT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def load(name, shape):
    with open(f"{d}/{name}", "rb") as f:
        b = f.read()
    return torch.frombuffer(bytearray(b), dtype=torch.float64).reshape(shape).to(dev)


def rel(a, b):
    den = b.double().norm()
    return ((a.double() - b.double()).norm() / (den if den > 0 else 1)).item()


cases = json.load(open(f"{d}/manifest.json"))
bad = 0
worst = {k: 0.0 for k in TOL}
for c in cases:
    i, n = c["id"], len(c["w"]) - 2
    x, w = load(f"{i}_x.bin", c["x"]), load(f"{i}_w.bin", c["w"])
    b = load(f"{i}_b.bin", [c["y"][1]]) if c["bias"] else None
    kw = dict(stride=c["stride"], padding=c["padding"], dilation=c["dilation"], groups=c["groups"])
    if c["transposed"]:
        f = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][n - 1]
        kw["output_padding"] = c["output_padding"]
    else:
        f = [F.conv1d, F.conv2d, F.conv3d][n - 1]
    ref = f(x, w, b, **kw)
    if list(ref.shape) != c["y"]:
        print(f"case {i}: PyTorch's shape {list(ref.shape)}, kreach's {c['y']}")
        bad += 1
        continue
    line = []
    for dt in ("f64", "f32", "bf16", "f16"):
        e = rel(load(f"{i}_{dt}.bin", c["y"]), ref)
        worst[dt] = max(worst[dt], e)
        own = ""
        if dt in TDT:
            t = TDT[dt]
            own = " (torch %.2g)" % rel(f(x.to(t), w.to(t), b.to(t) if b is not None else None, **kw), ref)
        ok = e <= TOL[dt]
        bad += not ok
        line.append(f"{dt} {e:.2g}{own}{'' if ok else ' OFF'}")
    print(f"case {i}: {'transposed' if c['transposed'] else 'conv'} x{c['x']} w{c['w']} y{c['y']} {kw}"
          f"{' bias' if c['bias'] else ''}: " + ", ".join(line))
print(f"crosscheck: {len(cases)} cases, {bad} off; worst relative L2 against PyTorch fp64: "
      + ", ".join(f"{k} {v:.3g}" for k, v in worst.items()))
sys.exit(1 if bad else 0)
