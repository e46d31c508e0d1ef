"""The harness shared by kreach's workload programs (experiments/workloads/*.py).

Each workload is an ordinary PyTorch program that kreach profiles from the outside
(`kreach profile --steps step -- python3 experiments/workloads/<x>.py ...`). This module gives
them one command line, one precision policy, one step loop and one output format:

- options: --steps, --warmup, --batch, --seq, --precision, --dropout, --compile, --mode,
  --device, --tiny, --seed, --optimizer-impl, --data-batches, --torch-profile (and each
  workload's own knobs);
- each measured step runs inside an NVTX range named `step` (warm-up steps inside `warmup`),
  with torch.cuda.synchronize() before the range is popped, so the range covers the step's GPU
  work;
- the knobs are written as one JSON object to $KREACH_PROFILE_KNOBS (when set) and printed as
  `knobs <json>`, then `warmup <i> <ms>` and `step <i> <ms>` lines, then `summary <json>`.

Exit statuses: 0 ok, 2 bad options, 77 a prerequisite is missing (PyTorch, torchvision, a CUDA
device), 1 anything else (an uncaught exception, with its traceback).
"""
import argparse
import contextlib
import json
import math
import os
import platform
import statistics
import sys
import time

# No workload ever downloads anything: weights are random and configurations are built in code.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

EXIT_USAGE = 2
EXIT_SKIP = 77

PRECISIONS = ("fp32", "tf32", "autocast-bf16", "bf16")
OPTIMIZER_IMPLS = ("default", "foreach", "fused", "forloop")


def die(msg, code=EXIT_USAGE):
    """Print `<program>: <msg>` on stderr and exit with `code` (2: usage, 77: missing prerequisite)."""
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "workload"
    print(f"{prog}: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def import_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        die(f"PyTorch is not installed ({e})", EXIT_SKIP)
    return torch


def _int_at_least(lo):
    def parse(s):
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {s!r}")
        if v < lo:
            raise argparse.ArgumentTypeError(f"expected an integer >= {lo}, got {v}")
        return v
    return parse


positive_int = _int_at_least(1)
nonneg_int = _int_at_least(0)


def probability(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {s!r}")
    if not (0.0 <= v < 1.0):
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1), got {v}")
    return v


def positive_float(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {s!r}")
    if not (v > 0.0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {v}")
    return v


def make_parser(workload, description, *, has_seq, default_precision="autocast-bf16",
                dropout_help="dropout probability"):
    """The common options. Defaults that depend on --tiny or --mode are None here and resolved
    by the workload (and recorded in the knobs as resolved)."""
    p = argparse.ArgumentParser(prog=f"{workload}", description=description)
    p.add_argument("--mode", choices=("train", "infer"), default="train",
                   help="train: forward, loss, backward, optimizer step; infer: forward under no_grad (default train)")
    p.add_argument("--steps", type=positive_int, default=10, help="measured steps (default 10)")
    p.add_argument("--warmup", type=nonneg_int, default=5, help="warm-up steps, not marked `step` (default 5)")
    p.add_argument("--batch", type=positive_int, default=None, help="batch size (default: the workload's)")
    if has_seq:
        p.add_argument("--seq", type=positive_int, default=None, help="sequence length (default: the workload's)")
    p.add_argument("--precision", choices=PRECISIONS, default=default_precision,
                   help="fp32 (TF32 off), tf32 (fp32 with TF32 matmul and cuDNN), autocast-bf16 "
                        f"(torch.autocast), bf16 (model and inputs in bf16) (default {default_precision})")
    p.add_argument("--dropout", type=probability, default=None, help=dropout_help)
    p.add_argument("--compile", action="store_true", help="torch.compile the model (default: eager)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="default cuda")
    p.add_argument("--tiny", action="store_true", help="tiny sizes, for a CPU smoke test")
    p.add_argument("--seed", type=int, default=1234, help="seed of the weights and inputs (default 1234)")
    p.add_argument("--optimizer-impl", choices=OPTIMIZER_IMPLS, default="default",
                   help="the optimizer's implementation: PyTorch's default (foreach on CUDA), or forced "
                        "foreach, fused or forloop (default: default)")
    p.add_argument("--data-batches", type=positive_int, default=2,
                   help="random input batches made on the device before the steps and used in turn (default 2)")
    p.add_argument("--torch-profile", metavar="FILE", default=None,
                   help="run the same steps under torch.profiler (CPU and CUDA activities, "
                        "record_function('step') around each measured step) and export a Chrome trace to FILE")
    return p


class Env:
    """What setup() resolved: the torch module, the device, the precision policy."""

    def __init__(self, torch, args):
        self.torch = torch
        self.args = args
        self.device = torch.device(args.device)
        self.cuda = self.device.type == "cuda"
        self.autocast = args.precision == "autocast-bf16"
        self.param_dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32

    def autocast_ctx(self):
        if not self.autocast:
            return contextlib.nullcontext()
        return self.torch.autocast(device_type=self.device.type, dtype=self.torch.bfloat16)

    def build_ctx(self):
        """Modules built inside this are created on the device directly where torch can (>= 2.0),
        which keeps a 96 GB embedding table or a 1B-parameter model off the host."""
        if self.cuda and hasattr(self.torch.device, "__enter__"):
            return self.device
        return contextlib.nullcontext()

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def compile(self, model):
        if not self.args.compile:
            return model
        if not hasattr(self.torch, "compile"):
            die(f"--compile needs torch >= 2.0 (this is {self.torch.__version__})")
        return self.torch.compile(model)

    def optimizer_kwargs(self):
        impl = self.args.optimizer_impl
        if impl == "default":
            return {}
        if impl == "forloop":
            return {"foreach": False}
        if impl == "foreach":
            return {"foreach": True}
        return {"fused": True}


def setup(torch, args):
    if args.device == "cuda" and not torch.cuda.is_available():
        die("no CUDA device (use --device cpu for a smoke test)", EXIT_SKIP)
    if args.torch_profile:
        d = os.path.dirname(os.path.abspath(args.torch_profile))
        if not os.path.isdir(d):
            die(f"--torch-profile: no such directory: {d}")
    tf32 = args.precision == "tf32"
    # The legacy flags, on purpose: they are what the brief names and what most programs set.
    # cuDNN's flag is True by PyTorch's default, so fp32 must turn it off explicitly.
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.manual_seed(args.seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(args.seed)
    return Env(torch, args)


def param_count(model):
    # parameters() yields a tied weight once.
    return sum(p.numel() for p in model.parameters())


def base_knobs(env, workload, program):
    torch, args = env.torch, env.args
    if env.cuda:
        device_name = torch.cuda.get_device_name(env.device)
    else:
        device_name = platform.processor() or platform.machine() or "cpu"
    return {
        "workload": workload,
        "program": program,
        "argv": sys.argv[1:],
        "mode": args.mode,
        "precision": args.precision,
        "matmul_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn_tf32": bool(torch.backends.cudnn.allow_tf32),
        "compile": bool(args.compile),
        "steps": args.steps,
        "warmup": args.warmup,
        "seed": args.seed,
        "tiny": bool(args.tiny),
        "device": args.device,
        "device_name": device_name,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "python_version": platform.python_version(),
        "optimizer_impl": args.optimizer_impl if args.mode == "train" else None,
        "data_batches": args.data_batches,
        "inputs": "random, made on the device before the steps",
    }


def _write_knobs(knobs):
    line = json.dumps(knobs, sort_keys=False)
    path = os.environ.get("KREACH_PROFILE_KNOBS")
    if path:
        with open(path, "w") as f:
            f.write(line + "\n")
    print("knobs " + line, flush=True)


def _peak_memory(env):
    torch = env.torch
    if env.cuda:
        return {"peak_mem_allocated_bytes": int(torch.cuda.max_memory_allocated(env.device)),
                "peak_mem_reserved_bytes": int(torch.cuda.max_memory_reserved(env.device))}
    try:
        import resource
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    except (ImportError, OSError):
        rss = None
    return {"peak_host_rss_bytes": rss}


def run(env, knobs, step, *, samples_per_step, tokens_per_step=None):
    """Run the warm-up and measured steps of `step` (a function of the step index that returns
    the loss tensor, or None), print the step times and the summary. Under --torch-profile the
    same steps run inside torch.profiler and a Chrome trace is exported."""
    torch, args = env.torch, env.args
    _write_knobs(knobs)

    prof = None
    record = lambda name: contextlib.nullcontext()  # noqa: E731
    if args.torch_profile:
        from torch.profiler import ProfilerActivity, profile, record_function
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if env.cuda else [])
        prof = profile(activities=activities)
        record = record_function

    def one(i, label):
        t0 = time.perf_counter()
        if env.cuda:
            torch.cuda.nvtx.range_push(label)
        with record(label):
            out = step(i)
            env.sync()
        if env.cuda:
            torch.cuda.nvtx.range_pop()
        return (time.perf_counter() - t0) * 1e3, out

    env.sync()
    times = []
    last = None
    with (prof if prof is not None else contextlib.nullcontext()):
        for i in range(args.warmup):
            ms, last = one(i, "warmup")
            print(f"warmup {i} {ms:.3f}", flush=True)
        for i in range(args.steps):
            ms, last = one(args.warmup + i, "step")
            times.append(ms)
            print(f"step {i} {ms:.3f}", flush=True)
    if prof is not None:
        prof.export_chrome_trace(args.torch_profile)

    loss = None
    if last is not None and torch.is_tensor(last) and last.numel() == 1:
        loss = float(last.detach().float().item())
    med = statistics.median(times)
    summary = {
        "workload": knobs["workload"],
        "mode": args.mode,
        "steps": len(times),
        "median_step_ms": round(med, 4),
        "mean_step_ms": round(statistics.fmean(times), 4),
        "min_step_ms": round(min(times), 4),
        "max_step_ms": round(max(times), 4),
        "samples_per_s": round(samples_per_step / (med / 1e3), 2),
        "tokens_per_s": round(tokens_per_step / (med / 1e3), 1) if tokens_per_step else None,
        "loss": loss if loss is None or math.isfinite(loss) else str(loss),
        "torch_profile": args.torch_profile,
    }
    summary.update(_peak_memory(env))
    print("summary " + json.dumps(summary), flush=True)
    if loss is not None and not math.isfinite(loss):
        print(f"warning: the last loss is {loss}", file=sys.stderr, flush=True)
    return summary


def step_function(env, data, forward, opt=None, loss=None, loss_in_autocast=False):
    """The function one step runs. With an optimizer, a training step: the forward pass of a
    batch of `data` (taken in turn) under the precision policy's autocast, the loss inside it or
    after it, backward, the optimizer step, gradients dropped. Without one, an inference step:
    the forward pass, no gradients. forward(batch) -> output; loss(output, batch) -> loss."""
    torch = env.torch
    if opt is None:
        def infer(i):
            with torch.no_grad(), env.autocast_ctx():
                forward(data[i % len(data)])
            return None
        return infer

    def train(i):
        batch = data[i % len(data)]
        with env.autocast_ctx():
            out = forward(batch)
            value = loss(out, batch) if loss_in_autocast else None
        if value is None:
            value = loss(out, batch)
        value.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return value
    return train


def input_pool(env, make):
    """--data-batches input batches, each made by make(gen) with one generator seeded with --seed
    on the device, used in turn by step i as pool[i % n]."""
    gen = env.torch.Generator(device=env.device)
    gen.manual_seed(env.args.seed)
    return [make(gen) for _ in range(env.args.data_batches)]


def token_pool(env, vocab, batch, seq):
    """input_pool of language-model batches: (tokens, next tokens), each batch x seq, uniform
    over the vocabulary."""
    def make(gen):
        toks = env.torch.randint(0, vocab, (batch, seq + 1), generator=gen, device=env.device)
        return toks[:, :-1].contiguous(), toks[:, 1:].contiguous()
    return input_pool(env, make)


def decay_groups(model, weight_decay):
    """AdamW parameter groups as nanoGPT and Hugging Face's Trainer make them: weight decay on
    matrices (dim >= 2), none on biases and norm weights."""
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def causal_attention(torch, q, k, v, *, dropout_p, impl, n_rep=1, native_gqa=False, future=None):
    """Causal attention on (B, H, T, D) queries and (B, H_kv, T, D) keys and values.

    impl 'sdpa': F.scaled_dot_product_attention (flash / memory-efficient / cuDNN, PyTorch
    picks); with GQA, either enable_gqa=True (native_gqa) or keys and values repeated first,
    as Hugging Face's repeat_kv does. impl 'eager': the written-out form (matmul, mask, softmax,
    dropout, matmul) of nanoGPT's and Hugging Face's eager attention; `future` is a boolean
    (T_max, T_max) buffer, True above the diagonal, kept by the model as nanoGPT keeps its `bias`."""
    F = torch.nn.functional
    if n_rep > 1 and not (impl == "sdpa" and native_gqa):
        b, hkv, t, d = k.shape
        k = k[:, :, None, :, :].expand(b, hkv, n_rep, t, d).reshape(b, hkv * n_rep, t, d)
        v = v[:, :, None, :, :].expand(b, hkv, n_rep, t, d).reshape(b, hkv * n_rep, t, d)
    if impl == "sdpa":
        if native_gqa and n_rep > 1:
            return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
    t = q.size(-2)
    att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
    if future is None:
        future = causal_future_mask(torch, t, q.device)
    att = att.masked_fill(future[:t, :t], float("-inf"))
    att = F.softmax(att, dim=-1, dtype=torch.float32).to(q.dtype)
    att = F.dropout(att, p=dropout_p, training=dropout_p > 0)
    return torch.matmul(att, v)


def resolve_attention(torch, requested):
    """'sdpa' where this torch has it (>= 2.0), else 'eager'; returns (impl, note)."""
    has = hasattr(torch.nn.functional, "scaled_dot_product_attention")
    if requested == "sdpa" and not has:
        return "eager", f"sdpa is not in torch {torch.__version__}: eager attention used"
    return requested, None


def causal_future_mask(torch, t, device):
    return torch.ones(t, t, dtype=torch.bool, device=device).triu_(1)
