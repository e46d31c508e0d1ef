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
# The guard (docs/candidates.md, "Trust"): the CUDA driver loads libkreach_inject.so into this
# process (CUDA_INJECTION64_PATH) in its guard mode (KREACH_GUARD_TOKEN, taken out of the
# environment here before anything else runs). Around every call, and around a candidate's load,
# the library writes one report line of its own to the protocol descriptor, before the reply:
# {"guard": token, "seq", "threads_new", "children", and for a timed call "event_ms" (CUDA events
# it records on the caller's stream), "span_ms" (every kernel, memcpy and memset on any stream,
# first start to last end, the gate left out), "other_streams", "dropped"}. A timed call's time
# is taken from that line on the kreach side, not from this process's reply. The worker itself
# lives in main()'s closure, not in __main__; a candidate's module gets its own globals and a copy
# of the builtins; the functions the harness uses are checked after each call (torch_guard.py).
#
# Commands:
#   {"op": "load", "slot": s, "reference": source, "inputs": expr, "dtype": d, "compile": bool,
#    "params": n}  builds the Model (get_init_inputs() arguments) in dtype d, compiled with
#    torch.compile when asked; reply {"params": [[shape...], ...]} (its parameters, in order)
#   {"op": "mirror", "set": k, "args": [{"name", "kind", "shape", "dtype", "value"}],
#    "release": s}  allocates set k's buffers; reply {"handles": [hex or null per arg]}
#    (scalars have none). With release (a slot not yet bound to a set), that slot's model's own
#    parameters are freed first, as binding would free them, so that a model's parameters and
#    their mirrors are never on the device together (dlrm-bench/4 at f64: 52 GB each). A failure
#    frees what it had allocated.
#   {"op": "call", "slot": s, "set": k, "timed": bool, "flush_bytes": n, "copy": bool}  one
#    forward call on set k (parameters bound to the set's): with timed, the L2 is flushed
#    (flush_bytes, written and read, and finished) and the call timed by the guard (its report
#    line comes first), after a sleep kernel that holds the stream while the host queues the
#    call (the gate); with copy, the outputs are copied into the set's output mirrors.
#    reply {"host_ms", "gated"} when timed, else {}
#    With poison (a 32-bit pattern), every free block of PyTorch's caching allocator is filled
#    with it first, after blocks of the outputs' sizes were taken and given back, so that an
#    output a candidate allocates with torch.empty and leaves partly unwritten shows the
#    pattern and not the last correct answer.
#   {"op": "candidate", "slot": s, "source": text, "name": n, "reference": source, "inputs": expr,
#    "dtype": d, "extensions": dir, "triton": dir, "seal": bool}  a KernelBench-format
#    candidate: the problem's module gives get_init_inputs(); with seal, this process applies
#    the Landlock ruleset it was started with (descriptor 3) first; then the candidate's source
#    runs as a module (its load_inline builds land in the extensions directory, Triton's cache
#    in the triton one) and ModelNew(*get_init_inputs()) is built in dtype d; reply as load.
#   {"op": "drop", "set": k, "slot": s}  frees set k's buffers (the kreach side unmapped them)
#    and forgets slot s where given; reply {}
#   {"op": "exit"}
# Any failure replies {"error": "...", "kind": k}: k is "build" (an extension or a Triton kernel
# that does not compile; "log" holds the compiler's output), "environment" (this machine cannot
# build extensions: no ninja, no CUDA toolkit), "cuda" (a CUDA error: sticky, so the kreach side
# ends the worker after one) or "python" (any other exception).
import builtins, ctypes, json, linecache, os, sys, time, traceback


def main():
    # nothing of the harness stays where sys.modules["__main__"] leads: this function and the
    # guards of torch_guard.py (sent before this file) live on in its closure only
    g = globals()
    g.pop("main", None)
    output_problem, Integrity = g.pop("output_problem"), g.pop("Integrity")
    # ended with the kreach worker that started it, whatever it is doing (PR_SET_PDEATHSIG, SIGKILL)
    ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)
    if os.getppid() == 1:
        sys.exit(0)

    # the interpreter's own bin/ first on PATH: a virtual environment's ninja (load_inline's
    # builds) is found when KREACH_PYTHON names its python3 without the environment being active
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    # torch.compile compiles in this process, with no pool of worker processes: the guard counts
    # any child of this process as one a candidate left running
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"

    proto_out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the model's prints go to standard error
    proto_in = os.fdopen(os.dup(0), "r")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    dumps = json.dumps
    write, flush = proto_out.write, proto_out.flush

    def reply(obj):
        write(dumps(obj) + "\n")
        flush()

    try:
        import torch
        if not torch.cuda.is_available():
            reply({"error": "PyTorch %s has no CUDA device here (torch.cuda.is_available() is False)" % torch.__version__})
            sys.exit(0)
        torch.cuda.init()
        torch.zeros(1, device="cuda")
    except Exception as ex:  # reported, then the worker ends
        reply({"error": "cannot start PyTorch: %s: %s" % (type(ex).__name__, ex)})
        sys.exit(0)

    # the guard: the driver loaded it at cuInit, which read the token; no Python code keeps it.
    # This worker runs only under it: every call's report is the guard's.
    if os.environ.pop("KREACH_GUARD_TOKEN", None) is None:
        reply({"error": "the Python worker runs only under kreach's guard (KREACH_GUARD_TOKEN is not set)"})
        sys.exit(0)
    lib_path = os.environ.get("CUDA_INJECTION64_PATH", "")
    try:
        lib = ctypes.CDLL(lib_path, mode=getattr(os, "RTLD_NOLOAD", 4) | ctypes.RTLD_GLOBAL)
    except OSError as ex:
        reply({"error": "the guard library %s is not loaded: %s" % (lib_path, ex)})
        sys.exit(0)
    lib.kr_guard_why.restype = ctypes.c_char_p
    for f in (lib.kr_guard_begin, lib.kr_guard_mark, lib.kr_guard_end):
        f.restype = ctypes.c_int
    lib.kr_guard_begin.argtypes = [ctypes.c_ulonglong, ctypes.c_int]
    lib.kr_guard_mark.argtypes = [ctypes.c_ulonglong]
    lib.kr_guard_end.argtypes = [ctypes.c_ulonglong, ctypes.c_int]
    if lib.kr_guard_attach(proto_out.fileno()) != 0:
        reply({"error": "the guard is not running: %s" % lib.kr_guard_why().decode("utf-8", "replace")})
        sys.exit(0)
    guard_begin, guard_mark, guard_end = lib.kr_guard_begin, lib.kr_guard_mark, lib.kr_guard_end

    # what candidates import, imported now: threads their imports start exist before a candidate
    # loads, and are not taken for ones it left running (the guard's check of the load)
    for name in ("torch.utils.cpp_extension", "triton", "triton.language"):
        try:
            __import__(name)
        except Exception:
            pass

    torch.backends.cuda.matmul.allow_tf32 = False
    CUDNN_TF32 = sys.argv[1:2] == ["tf32"]
    torch.backends.cudnn.allow_tf32 = CUDNN_TF32

    DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64,
          "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8, "u8": torch.uint8,
          "bool": torch.bool}
    RAW = {"f32": "<i4", "bf16": "<i2", "f16": "<i2", "f64": "<i8", "i64": "<i8", "i32": "<i4", "i16": "<i2",
           "i8": "|i1", "u8": "|u1", "bool": "|u1"}
    SIZE = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "bool": 1}

    # what the harness calls, as it is now: checked after each call (Integrity), and called
    # through these names, not looked up again
    keep = Integrity()
    Tensor, TensorBase = torch.Tensor, torch.Tensor.__mro__[1]
    copy_ = keep.keep(TensorBase, "copy_", "torch.Tensor.copy_")
    keep.keep(Tensor, "copy_", "torch.Tensor.copy_")
    keep.keep(Tensor, "add_", "torch.Tensor.add_")
    sync = keep.keep(torch.cuda, "synchronize", "torch.cuda.synchronize")
    sleep = keep.keep(torch.cuda, "_sleep", "torch.cuda._sleep")
    current_stream = keep.keep(torch.cuda, "current_stream", "torch.cuda.current_stream")
    set_stream = keep.keep(torch.cuda, "set_stream", "torch.cuda.set_stream")
    no_grad = keep.keep(torch, "no_grad", "torch.no_grad")
    Event = keep.keep(torch.cuda, "Event", "torch.cuda.Event")
    keep.keep(Event, "record", "torch.cuda.Event.record")
    keep.keep(Event, "elapsed_time", "torch.cuda.Event.elapsed_time")
    keep.keep(Event, "synchronize", "torch.cuda.Event.synchronize")
    perf_counter = keep.keep(time, "perf_counter", "time.perf_counter")
    keep.keep(type(guard_begin), "__call__", "the guard's ctypes calls")
    keep.keep(json, "dumps", "json.dumps")
    no_torch_function = torch._C.DisableTorchFunction
    strided = torch.strided
    # a dispatch mode sits below torch functions (which the copy turns off): one left active
    # could run deferred work when the harness copies the outputs
    dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", None)
    home_stream = current_stream()
    home_ptr = home_stream.cuda_stream
    real_builtins = builtins.__dict__

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
    state = {"cycles_per_ms": None, "gate_ms": 0.05, "flush_buf": None}

    def calibrate_sleep():
        if state["cycles_per_ms"]:
            return state["cycles_per_ms"]
        a, b = Event(enable_timing=True), Event(enable_timing=True)
        for _ in range(2):
            a.record(); sleep(1000000); b.record(); b.synchronize()
        state["cycles_per_ms"] = 1000000 / max(a.elapsed_time(b), 1e-3)
        return state["cycles_per_ms"]

    def module_from(source, name, filename):
        # its source where inspect finds it (Triton's @jit reads a kernel's source lines, and the
        # file itself is out of a sealed worker's reach)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        mod = type(sys)(name)
        # its own builtins: a candidate that rebinds one rebinds its copy, not the harness's
        mod.__dict__["__builtins__"] = dict(real_builtins)
        mod.__dict__["__file__"] = filename
        sys.modules[name] = mod  # what dataclasses, pickling and Triton's source lookups expect
        exec(compile(source, filename, "exec", dont_inherit=True), mod.__dict__)
        return mod

    def load(c, build=None):
        """The problem's Model, or with build (a function of the problem's module that returns the
        candidate's), the candidate's ModelNew; built with get_init_inputs()'s arguments."""
        mod = module_from(c["reference"], "kreach_problem", "<%s>" % c.get("name", "problem"))
        torch.manual_seed(0)
        init = mod.get_init_inputs()
        with torch.device("cuda"):
            model = build(mod).ModelNew(*init) if build else mod.Model(*init)
        # left in training mode, as KernelBench's harness runs both the reference and ModelNew: its
        # BatchNorm (problem 33) normalises with the batch's statistics, not the running ones
        model = model.cuda().to(DT[c["dtype"]])
        params = list(model.parameters())
        # the problem's model runs with cuDNN's TF32 as asked; a candidate never does (it is judged
        # against the fp64 oracle at fp32's thresholds)
        slot = {"module": mod, "model": model, "params": params, "inputs": c["inputs"], "fn": model,
                "tf32": CUDNN_TF32 and build is None, "candidate": build is not None}
        if c.get("compile"):
            slot["fn"] = torch.compile(model)
        slots[c["slot"]] = slot
        torch.cuda.empty_cache()
        return {"params": [list(p.shape) for p in params], "torch": torch.__version__}

    def seal_self():
        """Applies the Landlock ruleset on descriptor 3 (made by the kreach worker) to this process."""
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(446, 3, 0) != 0:  # landlock_restrict_self(ruleset 3, 0)
            e = ctypes.get_errno()
            raise OSError(e, "landlock_restrict_self on descriptor 3 failed: %s" % os.strerror(e))
        os.close(3)
        state["sealed"] = True

    def tampered():
        """Why the harness cannot trust this process any more, or None: a function it uses was
        rebound, or a torch dispatch mode was left active."""
        changed = keep.changed()
        if changed:
            return "the candidate rebound the harness's %s" % ", ".join(changed)
        if dispatch_modes and dispatch_modes() != 0:
            return "the candidate left a torch dispatch mode active"
        return None

    def candidate(c):
        # the problem's module first (its get_init_inputs), outside the candidate's reach
        if c.get("extensions"):
            os.environ["TORCH_EXTENSIONS_DIR"] = c["extensions"]
        if c.get("triton"):
            os.environ["TRITON_CACHE_DIR"] = c["triton"]
        if c.get("seal"):
            seal_self()

        def build(problem_module):
            mod = module_from(c["source"], "kreach_candidate", c.get("name", "candidate.py"))
            if "ModelNew" not in mod.__dict__:
                raise NameError("the candidate defines no ModelNew")
            return mod
        guard_begin(0, 0)
        try:
            r = load(c, build=build)
        finally:
            # its report (the threads and processes the load left) precedes any reply
            guard_end(0, 0)
        r["sealed"] = state.get("sealed", False)
        why = tampered()
        if why:
            raise Tampered(why)
        return r

    def poison_free(pattern, sizes):
        """Fills every free block of the caching allocator with a 32-bit pattern, after taking and
        giving back blocks of the given sizes (so that allocations of those sizes find poison)."""
        held = [torch.empty(n, dtype=torch.uint8, device="cuda") for n in sizes]
        del held
        for seg in torch.cuda.memory_snapshot():
            for b in seg.get("blocks", []):
                if b.get("state") == "inactive" and b["size"] >= 4:
                    n = b["size"] // 4
                    t = torch.as_tensor(Raw(b["address"], (n,), "<i4"), device="cuda")
                    t.fill_(pattern)

    def make_mirrors(c):
        out, handles = {"args": c["args"], "tensors": [], "scalars": {}, "ptrs": []}, []
        slot = slots.get(c["release"]) if c.get("release") is not None else None
        if slot is not None and not slot.get("bound"):
            for p in slot["params"]:
                p.data = torch.empty(0, dtype=p.dtype, device=p.device)
            torch.cuda.empty_cache()
        try:
            for a in c["args"]:
                if a["kind"] == "scalar":
                    out["tensors"].append(None)
                    out["scalars"][a["name"]] = a["value"]
                    handles.append(None)
                    continue
                t, h, p = mirror(a["shape"], a["dtype"])
                allocations.append(p)
                out["ptrs"].append(p)
                out["tensors"].append(t)
                handles.append(h)
        except BaseException:
            out["tensors"] = []
            for p in out["ptrs"]:
                allocations[:] = [q for q in allocations if q is not p]
                rt.cudaFree(p)
            raise
        sets[c["set"]] = out
        return {"handles": handles}

    def drop(c):
        """Frees set k's buffers (kreach has unmapped them first) and forgets slot s, where given,
        so that one worker can go through many problems."""
        sync()
        s = sets.pop(c["set"], None)
        if s is not None:
            s["tensors"] = []
            for p in s["ptrs"]:
                allocations[:] = [q for q in allocations if q is not p]
                rc = rt.cudaFree(p)
                if rc != 0:
                    raise RuntimeError("cudaFree failed (error %d)" % rc)
        if c.get("slot") is not None:
            slots.pop(c["slot"], None)
        torch.cuda.empty_cache()
        return {}

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
        if not slot.get("bound"):
            # the model's own parameters are gone: give their memory back to the device (an
            # embedding table can be tens of GB) rather than keep it in the caching allocator
            slot["bound"] = True
            torch.cuda.empty_cache()

    def flush_l2(nbytes):
        n = int(nbytes) // 4
        buf = state["flush_buf"]
        if buf is None or buf.numel() != n:
            buf = state["flush_buf"] = torch.empty(n, dtype=torch.int32, device="cuda")
            buf.zero_()
        buf.add_(1)  # every line read and written

    def call(c):
        slot, s = slots[c["slot"]], sets[c["set"]]
        bind_params(slot, s)
        args = forward_args(slot, s)
        torch.backends.cudnn.allow_tf32 = slot["tf32"]
        timed = bool(c.get("timed", False))
        res = {}
        if c.get("poison") is not None:
            sizes = [t.numel() * t.element_size() for a, t in zip(s["args"], s["tensors"]) if a["kind"] == "output"]
            poison_free(int(c["poison"]), sizes)
        # every call starts on the worker's own stream, whatever an earlier one set
        if current_stream().cuda_stream != home_ptr:
            set_stream(home_stream)
        with no_grad():
            if timed:
                if c.get("flush_bytes"):
                    flush_l2(int(c["flush_bytes"]))
                cpm = calibrate_sleep()
                sync()  # the flush done: the window holds the call's work alone
            guard_begin(home_ptr, int(timed))
            h0 = perf_counter()
            if timed:
                # the gate holds the stream while the call queues: from its own launch on (the
                # device is idle, so it starts at once), the first event's record included
                sleep(int(state["gate_ms"] * cpm))
                guard_mark(home_ptr)
            try:
                y = slot["fn"](*args)
            finally:
                host_ms = (perf_counter() - h0) * 1e3
                guard_end(home_ptr, int(timed))  # its report precedes this call's reply
            if timed:
                res["host_ms"] = host_ms
                res["gated"] = host_ms < state["gate_ms"]
                # the next gate holds twice as long as this call took to queue (at least 0.1 ms):
                # a longer gate costs wall time only; one that ends first puts the host's
                # queueing into the call's time (the device is idle when the gate starts, with no
                # L2 flush still running ahead of it)
                state["gate_ms"] = min(50.0, max(0.1, 2.0 * host_ms))
            why = tampered()
            if why:
                raise Tampered(why)
            if c.get("copy"):
                # a tuple or list subclass's own __iter__ or __getitem__ is not called
                if isinstance(y, tuple):
                    ys = [tuple.__getitem__(y, i) for i in range(tuple.__len__(y))]
                elif isinstance(y, list):
                    ys = [list.__getitem__(y, i) for i in range(list.__len__(y))]
                else:
                    ys = [y]
                outs = [(a, t) for a, t in zip(s["args"], s["tensors"]) if a["kind"] == "output"]
                if len(ys) != len(outs):
                    raise RuntimeError("the model returned %d outputs, the problem has %d" % (len(ys), len(outs)))
                for yi, (a, t) in zip(ys, outs):
                    bad = output_problem(yi, Tensor, strided, t.shape, t.dtype)
                    if bad:
                        raise BadOutput("output '%s' is %s" % (a["name"], bad))
                # a plain copy: no Python-level override runs (the types are exact, and torch
                # functions are off)
                with no_torch_function():
                    for yi, (a, t) in zip(ys, outs):
                        copy_(t, yi)
        sync()
        return res

    class Tampered(Exception):
        """The candidate reached the harness (kind "tampered")."""

    class BadOutput(Exception):
        """An output that is not a plain tensor of the problem's shape and dtype (kind "output")."""

    OPS = {"load": load, "mirror": make_mirrors, "call": call, "candidate": candidate, "drop": drop}

    def classify(ex):
        """What kind of failure an exception is (see the commands above), and a build's log."""
        name, msg = type(ex).__name__, str(ex)
        if type(ex) is Tampered:
            return "tampered", None
        if type(ex) is BadOutput:
            return "output", None
        if "Ninja is required" in msg or "CUDA_HOME environment variable is not set" in msg:
            return "environment", None
        if "Error building extension" in msg or name in ("CompilationError", "CalledProcessError") \
                or type(ex).__module__.startswith("triton.compiler"):
            return "build", msg
        if name in ("AcceleratorError", "OutOfMemoryError") or "CUDA error" in msg or "CUDA out of memory" in msg:
            return "cuda", None
        return "python", None

    reply({"ok": True, "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(0),
           "cudnn_tf32": torch.backends.cudnn.allow_tf32, "guarded": True})
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
        except BaseException as ex:  # SystemExit and KeyboardInterrupt from a candidate too
            kind, log = classify(ex)
            tb = traceback.format_exc(limit=-3)
            r = {"error": "%s: %s" % (type(ex).__name__, str(ex)[:4000]), "traceback": tb[-2000:], "kind": kind}
            if log:
                r["log"] = log[-20000:]
            reply(r)
    proto_out.flush()


main()
