"""Time PyTorch eager's convolutions on KernelBench level 1's shapes, as time.lua times
kreach's baseline: 3 warm-up calls, then the median and the fastest of 20 calls, each between two
CUDA events, no L2 flush. cuDNN's TF32 is off unless --tf32 (PyTorch's default is on), so f32
is fp32 FMA as in kreach's baseline; bf16 uses tensor cores.

usage: python3 torch_time.py [--dtypes f32,bf16] [--tf32] ID...
Prints: id, dtype, median ms, min ms, TFLOP/s (2 per multiply-add).
"""
import argparse, statistics
import torch
import torch.nn.functional as F

# id -> (transposed, x shape, w shape, options); as experiments/conv/shapes.lua (86's two
# convolutions are 86, the depthwise one, and 860, the pointwise one)
SHAPES = {
    50: (False, [256, 3, 224, 224], [96, 3, 11, 11], dict(stride=4, padding=2, bias=True)),
    54: (False, [16, 3, 64, 64, 64], [64, 3, 3, 3, 3], {}),
    55: (False, [8, 64, 512, 1024], [128, 64, 3, 3], {}),
    56: (False, [8, 64, 512, 256], [128, 64, 5, 7], {}),
    57: (True, [8, 64, 1024, 1024], [64, 64, 3, 3], {}),
    58: (True, [16, 32, 16, 32, 64], [32, 16, 3, 5, 7], {}),
    59: (False, [16, 3, 256, 256, 10], [64, 3, 3, 3, 1], {}),
    60: (False, [16, 3, 64, 64, 64], [64, 3, 3, 5, 7], {}),
    61: (True, [8, 48, 64, 64, 64], [48, 48, 3, 3, 3], {}),
    62: (False, [8, 32, 512, 512], [64, 32, 5, 9], {}),
    63: (False, [16, 16, 1024, 1024], [128, 16, 3, 3], {}),
    64: (True, [64, 128, 65536], [128, 128, 3], {}),
    65: (True, [8, 64, 512, 512], [64, 64, 3, 7], {}),
    66: (False, [8, 3, 16, 128, 128], [64, 3, 3, 5, 7], {}),
    67: (False, [32, 64, 131072], [128, 64, 3], {}),
    68: (True, [16, 32, 64, 64, 64], [32, 64, 3, 5, 5], {}),
    69: (True, [64, 64, 128, 256], [64, 128, 3, 5], {}),
    70: (True, [8, 48, 96, 96, 96], [48, 24, 3, 3, 3], {}),
    71: (True, [8, 32, 512, 1024], [32, 32, 3, 3], {}),
    72: (True, [8, 32, 12, 24, 48], [32, 8, 3, 5, 7], dict(stride=2, padding=(1, 2, 3), output_padding=1, groups=4)),
    73: (True, [4, 32, 32, 64, 128], [32, 32, 3, 3, 3], dict(stride=2, padding=1)),
    74: (True, [32, 32, 131072], [32, 64, 5], dict(dilation=3)),
    75: (True, [16, 32, 128, 256], [32, 16, 3, 5], dict(stride=(2, 3), padding=(1, 2), dilation=(2, 1), groups=4)),
    76: (False, [64, 64, 524280], [128, 64, 3], dict(stride=3, dilation=4)),
    77: (True, [16, 32, 16, 32, 32], [32, 64, 3, 3, 3], dict(stride=2, padding=1, dilation=2)),
    78: (True, [8, 32, 512, 1024], [32, 32, 3, 7], dict(padding=(1, 3))),
    79: (True, [16, 32, 131072], [32, 64, 3], dict(stride=2, padding=1, dilation=2)),
    80: (False, [8, 32, 512, 512], [64, 32, 5, 9], dict(padding=(2, 4), dilation=(2, 3))),
    81: (True, [16, 32, 64, 128], [32, 64, 3, 3], dict(stride=5, padding=1, dilation=2)),
    82: (False, [16, 64, 512, 512], [64, 1, 3, 3], dict(groups=64)),
    83: (False, [64, 8, 512, 512], [8, 1, 3, 1], dict(groups=8)),
    84: (False, [64, 128, 256, 512], [128, 1, 3, 3], dict(groups=128)),
    85: (False, [32, 128, 128, 256], [128, 1, 3, 7], dict(groups=128)),
    86: (False, [16, 64, 512, 512], [64, 1, 3, 3], dict(padding=1, groups=64)),
    860: (False, [16, 64, 512, 512], [128, 64, 1, 1], {}),
    87: (False, [16, 64, 1024, 1024], [128, 64, 1, 1], {}),
}
DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}

ap = argparse.ArgumentParser()
ap.add_argument("ids", nargs="*", help="problem ids, or all")
ap.add_argument("--dtypes", default="f32,bf16")
ap.add_argument("--tf32", action="store_true")
a = ap.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = a.tf32
print("id\tdtype\tmedian_ms\tmin_ms\ttflops\t(cudnn %s, tf32 %s)" % (torch.backends.cudnn.version(), a.tf32), flush=True)
ids = sorted(SHAPES) if a.ids == ["all"] else [int(i) for i in a.ids] or [55, 63, 87]
for pid in ids:
    tr, xs, ws, o = SHAPES[pid]
    o = dict(o)
    has_bias = o.pop("bias", False)
    n = len(ws) - 2
    groups = o.get("groups", 1)
    fan_in = 1
    for s in ws[1:]:
        fan_in *= s
    bound = fan_in ** -0.5
    for d in a.dtypes.split(","):
        torch.manual_seed(pid)
        x = torch.rand(xs, device="cuda", dtype=DT[d])
        w = (torch.rand(ws, device="cuda", dtype=torch.float32) * 2 - 1).mul_(bound).to(DT[d])
        co = ws[1] * groups if tr else ws[0]
        b = ((torch.rand(co, device="cuda") * 2 - 1) * bound).to(DT[d]) if has_bias else None
        f = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][n - 1] if tr else [F.conv1d, F.conv2d, F.conv3d][n - 1]
        with torch.no_grad():
            for _ in range(3):
                y = f(x, w, b, **o)
            ts = []
            for _ in range(20):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record(); y = f(x, w, b, **o); e.record(); e.synchronize()
                ts.append(s.elapsed_time(e))
        kk = 1
        for s in ws[2:]:
            kk *= s
        macs = (x.numel() * (ws[1]) * kk) if tr else (y.numel() * ws[1] * kk)
        med = statistics.median(ts)
        print(f"{pid}\t{d}\t{med:.3f}\t{min(ts):.3f}\t{2 * macs / med / 1e9:.2f}", flush=True)
        del x, w, y, b
        torch.cuda.empty_cache()
