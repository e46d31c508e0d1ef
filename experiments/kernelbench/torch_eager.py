"""Time PyTorch eager on KernelBench-format problem files, the way the reference table
(data/h200_torch_eager_level1.tsv) was measured: 3 warm-up forward calls, then the median of
20 calls each between two CUDA events, no L2 flush, TF32 off for matmul.

Used to put a same-machine, same-session PyTorch time beside kreach's baseline times, since the
reference table was measured on another H200 at another time.

usage: python3 torch_eager.py DIR [--dtypes f32,bf16] [--cudnn-tf32 on|off] [--only ID,...]
(DIR from `kreach export --format kernelbench`). --cudnn-tf32 off times convolutions as kreach's
baselines compute them (fp32 FMA, no TF32); on (the default) is PyTorch as it ships.
Prints one tab-separated line per problem and dtype: id, name, dtype, median ms, min ms, and the
number of GPU operations (kernels, copies, fills) one forward call runs (counted with torch.profiler), which tells
whether PyTorch does the work in one kernel or in several.
"""
import argparse, glob, importlib.util, os, statistics, sys
import torch

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--dtypes", default="f32,bf16")
ap.add_argument("--cudnn-tf32", choices=["on", "off"], default="on")
ap.add_argument("--only", default="", help="comma-separated problem ids")
a = ap.parse_args()
only = {int(x) for x in a.only.split(",") if x}
DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = a.cudnn_tf32 == "on"
torch.set_default_device("cuda")
for path in sorted(glob.glob(os.path.join(a.dir, "*.py"))):
    name = os.path.basename(path)[:-3]
    if only and int(name.split("_")[0]) not in only:
        continue
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    for d in a.dtypes.split(","):
        try:
            torch.manual_seed(1)
            model = m.Model(*m.get_init_inputs()).to(DT[d])
            xs = [x.to(DT[d]) if torch.is_tensor(x) and x.is_floating_point() else x for x in m.get_inputs()]
            with torch.no_grad():
                for _ in range(3):
                    model(*xs)
                ts = []
                for _ in range(20):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record(); model(*xs); e.record(); e.synchronize()
                    ts.append(s.elapsed_time(e))
                try:
                    from torch.profiler import profile, ProfilerActivity
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        model(*xs)
                        torch.cuda.synchronize()
                    kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
                except Exception as ex:
                    kernels = f"- ({type(ex).__name__})"
            print(f"{name.split('_')[0]}\t{name}\t{d}\t{statistics.median(ts):.4f}\t{min(ts):.4f}\t{kernels}", flush=True)
        except Exception as ex:  # report and go on
            print(f"{name.split('_')[0]}\t{name}\t{d}\tFAILED\t{type(ex).__name__}: {str(ex)[:200]}", flush=True)
        finally:
            model = xs = None
            torch.cuda.empty_cache()
