# kreach's PyTorch-on-the-CPU runner: a problem's PyTorch model (its KernelBench export), run in
# float64 on the CPU on kreach's own inputs and parameters, for kreach.judge.oracle.torch_check on the
# host device (KREACH_DEVICE=host, no GPU: the GPU path shares buffers with
# scripts/kreach/torch_worker.py through CUDA IPC instead).
#
# usage: python3 -c <this file>, then one directory DIR a line on stdin, answered by one JSON
# line: {"ok": true} or {"error": "..."} (torch is imported once, for every problem).
# DIR/spec.json: {"inputs": expr, "args": [{"name", "kind", "shape", "dtype", "value"}]}; DIR/m.py
# the export; DIR/a<i>.bin the raw bytes of input or param i (1-based, the problem's order). The
# model is built with get_init_inputs() (seed 0), cast to float64 (left in training mode), its parameters replaced by the
# params in order (their shapes must be the problem's), and called once under no_grad with the
# inputs as the `inputs` expression orders them. Writes DIR/out<i>.bin for each output i.
import importlib.util, json, os, sys, traceback
try:
    import torch
except ImportError as ex:  # each request answered with why, so that kreach names the interpreter
    why = ("%s has no PyTorch (%s): name a python3 that has it with KREACH_PYTHON (Debian: python3-torch)"
           % (sys.executable, ex))
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps({"error": why}) + "\n")
            sys.stdout.flush()
    sys.exit(0)

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64,
      "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8, "u8": torch.uint8,
      "bool": torch.bool}


def main(d):
    spec = json.load(open(os.path.join(d, "spec.json")))
    ms = importlib.util.spec_from_file_location("kreach_problem", os.path.join(d, "m.py"))
    mod = importlib.util.module_from_spec(ms)
    ms.loader.exec_module(mod)
    torch.manual_seed(0)
    # training mode, as KernelBench runs it (BatchNorm with the batch's statistics)
    model = mod.Model(*mod.get_init_inputs()).to(torch.float64)
    names = dict(mod.__dict__)
    params, outs = [], []
    for i, a in enumerate(spec["args"], 1):
        if a["kind"] == "scalar":
            names[a["name"]] = a["value"]
            continue
        if a["kind"] == "output":
            outs.append((i, a))
            continue
        raw = bytearray(open(os.path.join(d, "a%d.bin" % i), "rb").read())
        t = torch.frombuffer(raw, dtype=DT[a["dtype"]]).reshape(tuple(a["shape"])) if raw else \
            torch.empty(tuple(a["shape"]), dtype=DT[a["dtype"]])
        if a["kind"] == "input":
            names[a["name"]] = t
        else:
            params.append((a, t))
    mp = list(model.parameters())
    if [list(p.shape) for p in mp] != [list(a["shape"]) for a, _ in params]:
        raise RuntimeError("the model's parameters %s are not the problem's params %s" % (
            [list(p.shape) for p in mp], [list(a["shape"]) for a, _ in params]))
    with torch.no_grad():
        for p, (_, t) in zip(mp, params):
            p.copy_(t)
        y = model(*eval(spec["inputs"], names))
    ys = list(y) if isinstance(y, (tuple, list)) else [y]
    if len(ys) != len(outs):
        raise RuntimeError("the model returned %d outputs, the problem has %d" % (len(ys), len(outs)))
    for yi, (i, a) in zip(ys, outs):
        if tuple(yi.shape) != tuple(a["shape"]) or yi.dtype != DT[a["dtype"]]:
            raise RuntimeError("output '%s' is %s %s, the problem's is %s %s" % (
                a["name"], yi.dtype, list(yi.shape), a["dtype"], a["shape"]))
        b = yi.contiguous().reshape(-1).view(torch.uint8)
        with open(os.path.join(d, "out%d.bin" % i), "wb") as f:
            f.write(b.numpy().tobytes())


for line in sys.stdin:  # one directory a line, one JSON answer a line
    d = line.rstrip("\n")
    if not d:
        continue
    try:
        main(d)
        reply = {"ok": True}
    except Exception as ex:  # reported to kreach, which raises it with the problem's name
        reply = {"error": "%s: %s" % (type(ex).__name__, ex), "traceback": traceback.format_exc()[-2000:]}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
