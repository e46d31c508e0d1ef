# kreach's Python worker (docs/timing.md, "PyTorch in the same run"): runs a problem's PyTorch
# model for a kreach worker, which owns the measurement. Started by kreach.torch as
#   python3 -B -c <this file> tf32|no-tf32 ; commands arrive on standard input, one JSON object a line, and each
# gets one JSON line back on the protocol descriptor (the original standard output; the model's
# own prints go to standard error, so they cannot forge a reply).
#
# Its one argument is "tf32" (cuDNN's TF32 on, as PyTorch ships) or "no-tf32" (fp32 convolutions
# computed in fp32, as kreach's baselines compute them).
#
# Memory is shared through CUDA IPC in one direction only: this process allocates every buffer
# the kreach worker fills or reads ("mirrors": cudaMalloc, outside PyTorch's caching allocator)
# and exports their handles; the kreach worker, its parent, maps them. (A child mapping its
# parent's memory is refused where the kernel restricts ptrace to ancestors.)
#
# Commands:
#   {"op": "load", "slot": s, "reference": source, "inputs": expr, "dtype": d, "compile": bool,
#    "params": n}  builds the Model (get_init_inputs() arguments) in dtype d, compiled with
#    torch.compile when asked; reply {"params": [[shape...], ...]} (its parameters, in order)
#   {"op": "mirror", "set": k, "args": [{"name", "kind", "shape", "dtype", "value"}]}  allocates
#    set k's buffers; reply {"handles": [hex or null per arg]} (scalars have none)
#   {"op": "call", "slot": s, "set": k, "timed": bool, "flush_bytes": n, "copy": bool}  one
#    forward call on set k (parameters bound to the set's): with timed, the L2 is flushed
#    (flush_bytes, written and read) and the call timed between two CUDA events, after a sleep
#    kernel that holds the stream while the host queues the call (the gate); with copy, the
#    outputs are copied into the set's output mirrors. reply {"ms", "host_ms", "gated"}
#   {"op": "exit"}
# Any failure replies {"error": "..."}; a CUDA error is sticky, so the kreach side ends the
# worker after one.
import json, os, sys, time, traceback

proto_out = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)  # the model's prints go to standard error
proto_in = os.fdopen(os.dup(0), "r")
devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(devnull, 0)


def reply(obj):
    proto_out.write(json.dumps(obj) + "\n")
    proto_out.flush()


try:
    import ctypes
    import torch
    if not torch.cuda.is_available():
        reply({"error": "PyTorch %s has no CUDA device here (torch.cuda.is_available() is False)" % torch.__version__})
        sys.exit(0)
    torch.cuda.init()
    torch.zeros(1, device="cuda")
except Exception as ex:  # reported, then the worker ends
    reply({"error": "cannot start PyTorch: %s: %s" % (type(ex).__name__, ex)})
    sys.exit(0)

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = sys.argv[1:2] == ["tf32"]

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64,
      "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8, "u8": torch.uint8,
      "bool": torch.bool}
RAW = {"f32": "<i4", "bf16": "<i2", "f16": "<i2", "f64": "<i8", "i64": "<i8", "i32": "<i4", "i16": "<i2",
       "i8": "|i1", "u8": "|u1", "bool": "|u1"}
SIZE = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "bool": 1}


def find_cudart():
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    raise RuntimeError("no libcudart found next to PyTorch")


rt = find_cudart()


class Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


class Raw:
    def __init__(self, ptr, shape, typestr):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
                                         "version": 3}


def mirror(shape, dtype):
    """A cudaMalloc'd tensor (not from the caching allocator) and its IPC handle in hex."""
    n = 1
    for s in shape:
        n *= s
    nbytes = max(n * SIZE[dtype], 16)
    p = ctypes.c_void_p()
    rc = rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(nbytes))
    if rc != 0:
        raise RuntimeError("cudaMalloc of %d bytes failed (error %d)" % (nbytes, rc))
    h = Handle()
    rc = rt.cudaIpcGetMemHandle(ctypes.byref(h), p)
    if rc != 0:
        raise RuntimeError("cudaIpcGetMemHandle failed (error %d)" % rc)
    raw = torch.as_tensor(Raw(p.value, (n,), RAW[dtype]), device="cuda")
    t = raw.view(DT[dtype]).view(tuple(shape))
    return t, ctypes.string_at(ctypes.addressof(h), 64).hex(), p


slots, sets, allocations = {}, {}, []
flush_buf = None
state = {"cycles_per_ms": None, "gate_ms": 0.05}


def calibrate_sleep():
    if state["cycles_per_ms"]:
        return state["cycles_per_ms"]
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(2):
        a.record(); torch.cuda._sleep(1000000); b.record(); b.synchronize()
    state["cycles_per_ms"] = 1000000 / max(a.elapsed_time(b), 1e-3)
    return state["cycles_per_ms"]


def load(c):
    mod = type(sys)("kreach_problem")
    mod.__dict__["__builtins__"] = __builtins__
    exec(compile(c["reference"], "<%s>" % c.get("name", "problem"), "exec"), mod.__dict__)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = mod.Model(*mod.get_init_inputs())
    model = model.cuda().to(DT[c["dtype"]]).eval()
    params = list(model.parameters())
    slot = {"module": mod, "model": model, "params": params, "inputs": c["inputs"], "fn": model}
    if c.get("compile"):
        slot["fn"] = torch.compile(model)
    slots[c["slot"]] = slot
    torch.cuda.empty_cache()
    return {"params": [list(p.shape) for p in params], "torch": torch.__version__}


def make_mirrors(c):
    out, handles = {"args": c["args"], "tensors": [], "scalars": {}}, []
    for a in c["args"]:
        if a["kind"] == "scalar":
            out["tensors"].append(None)
            out["scalars"][a["name"]] = a["value"]
            handles.append(None)
            continue
        t, h, p = mirror(a["shape"], a["dtype"])
        allocations.append(p)
        out["tensors"].append(t)
        handles.append(h)
    sets[c["set"]] = out
    return {"handles": handles}


def forward_args(slot, s):
    names = dict(slot["module"].__dict__)
    for a, t in zip(s["args"], s["tensors"]):
        if a["kind"] == "input":
            names[a["name"]] = t
    names.update(s["scalars"])
    return eval(slot["inputs"], names)


def bind_params(slot, s):
    ps = [t for a, t in zip(s["args"], s["tensors"]) if a["kind"] == "param"]
    for p, t in zip(slot["params"], ps):
        p.data = t


def flush(nbytes):
    global flush_buf
    n = int(nbytes) // 4
    if flush_buf is None or flush_buf.numel() != n:
        flush_buf = torch.empty(n, dtype=torch.int32, device="cuda")
        flush_buf.zero_()
    flush_buf.add_(1)  # every line read and written


def call(c):
    slot, s = slots[c["slot"]], sets[c["set"]]
    bind_params(slot, s)
    args = forward_args(slot, s)
    timed = c.get("timed", False)
    res = {}
    with torch.no_grad():
        if timed:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if c.get("flush_bytes"):
                flush(int(c["flush_bytes"]))
            cpm = calibrate_sleep()
            torch.cuda._sleep(int(state["gate_ms"] * cpm))
            h0 = time.perf_counter()
            a.record()
            y = slot["fn"](*args)
            b.record()
            host_ms = (time.perf_counter() - h0) * 1e3
            b.synchronize()
            res["ms"] = a.elapsed_time(b)
            res["host_ms"] = host_ms
            res["gated"] = host_ms < state["gate_ms"]
            # the next gate holds a little longer than this call took to queue
            state["gate_ms"] = min(50.0, max(0.05, 1.5 * host_ms))
        else:
            y = slot["fn"](*args)
        if c.get("copy"):
            ys = list(y) if isinstance(y, (tuple, list)) else [y]
            outs = [(a, t) for a, t in zip(s["args"], s["tensors"]) if a["kind"] == "output"]
            if len(ys) != len(outs):
                raise RuntimeError("the model returned %d outputs, the problem has %d" % (len(ys), len(outs)))
            for yi, (a, t) in zip(ys, outs):
                if not torch.is_tensor(yi):
                    raise RuntimeError("output '%s' is a %s, not a tensor" % (a["name"], type(yi).__name__))
                if tuple(yi.shape) != tuple(t.shape) or yi.dtype != t.dtype:
                    raise RuntimeError("output '%s' is %s %s, the problem's is %s %s" % (
                        a["name"], str(yi.dtype), list(yi.shape), str(t.dtype), list(t.shape)))
                t.copy_(yi)
    torch.cuda.synchronize()
    return res


OPS = {"load": load, "mirror": make_mirrors, "call": call}
reply({"ok": True, "torch": torch.__version__, "cuda": torch.version.cuda,
       "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(0),
       "cudnn_tf32": torch.backends.cudnn.allow_tf32})
for line in proto_in:
    try:
        c = json.loads(line)
    except ValueError as ex:
        reply({"error": "not a JSON command: %s" % ex})
        continue
    if c.get("op") == "exit":
        break
    try:
        reply(OPS[c["op"]](c))
    except Exception as ex:
        tb = traceback.format_exc(limit=-3)
        reply({"error": "%s: %s" % (type(ex).__name__, ex), "traceback": tb[-2000:]})
proto_out.flush()
