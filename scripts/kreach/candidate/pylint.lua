-- kreach.candidate.pylint: candidates in KernelBench's format: a Python file that defines a
-- `ModelNew` (an nn.Module, usually building a CUDA extension with load_inline, sometimes
-- Triton). This module is the part that needs no GPU: the static lint (docs/candidates.md,
-- "KernelBench-format candidates"). The file is decoded as UTF-8 (the text the worker runs) and
-- parsed by python3's `ast` module, never run: its syntax, that it defines ModelNew, that
-- ModelNew's constructor takes the problem's constructor arguments, and M.RULES: it imports only
-- what KernelBench candidates use and uses only the constructs they use, so no escape hatch
-- (exec, __import__, ...) and no reflection (dunders, type, getattr and attrgetter, super other
-- than for __init__, special methods, tensor subclasses, loaders, monkeypatching). Each refusal
-- names its line and its rule. The lint is not the boundary (docs/candidates.md, "Trust").
-- Judging one on the GPU is kreach.candidate.python's (in the Python worker); kreach check and eval
-- run this lint first.
local core = require "kreach.core"
local fs = require "kreach.core.fs"
local json = require "kreach.json"
local kinds = require "kreach.kinds"
local proc = require "kreach.core.proc"
local pytorch = require "kreach.pytorch"
local text = require "kreach.text"
local verdict = require "kreach.verdict"

local M = {}

M.MAX_FILE_BYTES = 4 * 1024 * 1024
M.TIMEOUT_S = 30

-- The lint's rules, in the order docs/candidates.md lists them: an id each refusal carries, and
-- the reason printed with it. The words each rule refuses are the lists below.
M.RULES = {
  { id = "coding", reason = "the file is read as the worker runs it: UTF-8 text, with no other coding" },
  { id = "import", reason = "a candidate imports only what KernelBench candidates use" },
  { id = "module", reason = "through it Python code reaches the worker (sys.modules) or the host" },
  { id = "name", reason = "it runs code kreach cannot read, or reaches past the module's own names" },
  { id = "string-attribute", reason = "an attribute named by a string is one the lint cannot read" },
  { id = "dunder", reason = "reflection: it reaches objects past the names the module imports" },
  { id = "type-value", reason = "type and object make classes, and rewrite any class's attributes" },
  { id = "super", reason = "only super().__init__(...) (or super(ModelNew, self).__init__(...)) is needed" },
  { id = "class-dunder", reason = "a special method changes what PyTorch or Python do with its objects" },
  { id = "subclass", reason = "a tensor subclass computes lazily or replaces PyTorch's operations" },
  { id = "loader", reason = "it loads code or pickles from files kreach cannot read" },
  { id = "stream", reason = "work on a stream of its own is not held by the timed call's gate" },
  { id = "annotation", reason = "an annotation evaluated at run time is code the lint cannot read" },
  { id = "private", reason = "a library's private helpers import, load or run code named by a string" },
  { id = "patch", reason = "it rewrites a module's or a class's attributes (the worker's timing among them)" },
}
local RULE = {}
for _, r in ipairs(M.RULES) do RULE[r.id] = r end

-- import: the module roots a candidate may import (the first name of a dotted import).
M.ALLOWED_IMPORTS = { "torch", "triton", "math", "typing", "functools", "itertools", "collections",
                      "dataclasses", "numbers", "operator", "enum", "abc", "__future__", "numpy" }
-- name: names a candidate may not call or read (as a name, imported from an allowed module, or
-- as an attribute: a module may hold the builtins, as enum holds them as enum.bltns): each runs or
-- loads code kreach cannot see, or reaches past the module's own namespace
M.FORBIDDEN_NAMES = { "exec", "eval", "compile", "__import__", "open", "breakpoint", "input",
                      "globals", "locals", "vars", "memoryview" }
-- name: but these are allowed as attributes, objects' methods of the same name: torch.compile (the
-- builtin's code object runs only through exec, eval or types.FunctionType, each refused); and
-- these only called with no argument, which the builtin needs: nn.Module.eval()
M.NAME_ATTRIBUTES = { "compile" }
M.NAME_METHODS_BARE = { "eval" }
-- name: attributes that run a process
M.FORBIDDEN_ATTRIBUTES = { "system", "popen" }
-- stream: streams of its own: work queued on another stream is not held by the timed call's
-- gate, so it runs before the first event (docs/candidates.md, "Trust"); and the worker's gate
-- itself
M.STREAM_ATTRIBUTES = { "Stream", "ExternalStream", "StreamContext", "stream", "set_stream", "_sleep", "_C" }
-- module: modules a candidate may not reach under any name: as an import's part, a name imported
-- from an allowed module (`from torch import sys`: torch's own namespace holds sys and os), or an
-- attribute (`torch.os`). Through them Python code reaches the worker itself (sys.modules holds
-- the worker's __main__, whose replies carry the timings) or the host (os.fork and setsid leave
-- the worker's process group; numpy.ctypeslib and numpy.f2py load and build native code;
-- torch.fx resolves a graph's targets, strings, as attribute paths: get_attr("sys.modules");
-- enum holds builtins as enum.bltns).
M.FORBIDDEN_MODULES = { "sys", "os", "posix", "subprocess", "ctypes", "importlib", "builtins", "gc",
                        "inspect", "types", "io", "shutil", "socket", "pathlib", "signal",
                        "multiprocessing", "threading", "_thread", "pickle", "marshal", "code",
                        "codeop", "runpy", "atexit", "weakref", "tempfile", "sysconfig", "site",
                        "ctypeslib", "f2py", "distutils", "fx", "bltns" }
-- string-attribute: the names (builtins, refused as attributes too) and attributes (operator's)
-- that look an attribute up by a string; a match statement's class pattern with keywords (`case
-- C(sys=s)`) is refused too
M.STRING_ATTRIBUTE_NAMES = { "getattr", "setattr", "delattr" }
M.STRING_ATTRIBUTE_ATTRIBUTES = { "attrgetter", "methodcaller" }
-- dunder: the only dunders a candidate may name: attributes, names, and strings
M.ALLOWED_DUNDERS = { attributes = { "__init__", "__name__", "__version__" }, names = { "__name__", "__all__" },
                      strings = { "__main__" } }
-- type-value: besides the names `type` and `object` (object stays allowed as a base class), the
-- other ways to a metaclass or to a class made from strings
M.TYPE_WORDS = { "ABCMeta", "EnumMeta", "EnumType", "make_dataclass", "new_class", "mro" }
-- subclass: what makes a tensor of a class of the candidate's own from a tensor
M.SUBCLASS_WORDS = { "as_subclass", "_make_subclass", "_make_wrapper_subclass" }
-- loader: attributes (and imported names) that load code, libraries or pickles from files; `load`
-- is allowed only as Triton's (triton.language.load, `tl.load`), so torch.load, numpy.load,
-- torch.jit.load and torch.utils.cpp_extension.load (file sources; load_inline stays allowed)
-- are refused under any alias; and the keywords that turn unpickling on
M.LOADER_WORDS = { "load", "load_library", "from_file", "fromfile", "memmap", "hub", "package", "serialization" }
M.LOADER_KEYWORDS = { "allow_pickle", "weights_only" }
-- annotation: what evaluates annotations (string annotations are linted as code, and must be a
-- type's name: `"torch.Tensor"`, `"Optional[int]"`)
M.ANNOTATION_WORDS = { "get_type_hints", "ForwardRef", "_eval_type", "evaluate_forward_ref", "get_annotations" }
-- patch: an attribute may be assigned or deleted only through a function's parameter (`self.w =
-- ...`, `ctx.alpha = ...`) or a local name bound to something new (a call's result), and under
-- these module prefixes (settings, not code): `torch.backends.cudnn.benchmark = True`
M.PATCHABLE = { "torch.backends." }
-- private: a library's private name (`_x`, not a dunder) is used only as one of torch's own
-- operations, called (`torch._scaled_mm(a, b)`), under torch.ops (`torch.ops.aten._softmax`), or
-- as one of these helpers generated code copies from PyTorch's layers; not as a namespace
-- (`torch._utils._import_dotted_name("os")`, `torch._dynamo.config`), a value, or deeper in a
-- module (`numpy.core._ufunc_reconstruct("os", "system")`,
-- `torch.fx.graph_module._exec_with_source(src, g)`). A name of the candidate's own (`self._w`,
-- `_cache`) is not a library's.
M.PRIVATE_ALLOWED = { "_calculate_fan_in_and_fan_out", "_calculate_correct_fan", "_single", "_pair", "_triple",
                      "_quadruple", "_ntuple", "_reverse_repeat_tuple" }
M.PRIVATE_PREFIXES = { "torch.ops." }

-- The checker, run as `python3 -I -S -c CHECKER <file> <config JSON>` with the file's bytes on
-- its standard input (their length, a newline, the bytes: read once, on kreach's side, so that
-- what is checked is what was read): one JSON line on standard output ({refusals = {{line, rule,
-- what}...}, imports, model_new, syntax_error}). <file> only names it in messages.
local CHECKER = [==[
import ast, json, re, sys

path, cfg = sys.argv[1], json.loads(sys.argv[2])
C = {k: set(v) for k, v in cfg.items() if isinstance(v, list)}
out = {"refusals": [], "imports": [], "model_new": None}
seen = set()

def refuse(node, rule, what, line=None):
    line = line if line is not None else getattr(node, "lineno", 0)
    if (line, rule, what) not in seen:
        seen.add((line, rule, what))
        out["refusals"].append({"line": line, "rule": rule, "what": what})

def done():
    print(json.dumps(out)); sys.exit(0)

DUNDER = re.compile(r"^__\w+__$")
def dunder(s):
    return isinstance(s, str) and DUNDER.match(s) is not None

# coding: exactly the text the worker runs, UTF-8, which compiles it as a str (ignoring a coding
# declaration); the parser below gets that str too, so it cannot decode the bytes otherwise
size = int(sys.stdin.buffer.readline())
raw = sys.stdin.buffer.read(size)
try:
    text = raw.decode("utf-8")
except UnicodeDecodeError as e:
    refuse(None, "coding", "text that is not UTF-8 (byte %d)" % (e.start + 1), raw.count(b"\n", 0, e.start) + 1)
    done()
if text.startswith("\ufeff"):
    refuse(None, "coding", "a byte-order mark", 1)
    text = text[1:]
COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
for lines in (text.splitlines()[:2], re.split(r"\r\n|\r|\n", text)[:2]):
    for i, l in enumerate(lines):
        m = COOKIE.match(l)
        if m and m.group(1).lower().replace("_", "-") not in ("utf-8", "utf8"):
            refuse(None, "coding", "the coding declaration '%s' (the file is run as UTF-8)" % m.group(1), i + 1)

try:
    tree = ast.parse(text, filename=path)
except SyntaxError as e:
    out["syntax_error"] = {"line": e.lineno or 0, "msg": e.msg or "invalid syntax"}
    done()
except (ValueError, RecursionError, MemoryError) as e:
    out["syntax_error"] = {"line": 0, "msg": "%s: %s" % (type(e).__name__, e)}
    done()

def link(root):
    for n in ast.walk(root):
        for c in ast.iter_child_nodes(n):
            c.parent = n
tree.parent = None
link(tree)

# the dotted module path a name stands for, from the file's imports (`tl` -> triton.language)
alias = {}
for n in ast.walk(tree):
    if isinstance(n, ast.Import):
        for a in n.names:
            if a.asname: alias[a.asname] = a.name
            else: alias[a.name.split(".")[0]] = a.name.split(".")[0]
    elif isinstance(n, ast.ImportFrom) and not n.level:
        for a in n.names:
            alias[a.asname or a.name] = (n.module or "") + "." + a.name

def root_of(e):
    while True:
        if isinstance(e, (ast.Attribute, ast.Subscript)): e = e.value
        elif isinstance(e, ast.Call): e = e.func
        else: return e

def dotted(e):
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr); e = e.value
    if not isinstance(e, ast.Name): return None
    base = alias.get(e.id, e.id)
    return ".".join([base] + parts[::-1])

def scope_of(n):
    p = n.parent
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
        p = p.parent
    return p

FN = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# match statements' nodes (Python 3.10 on; an older python3 has none to find)
MATCH_CLASS = getattr(ast, "MatchClass", ())
MATCH_NAMES = tuple(getattr(ast, k) for k in ("MatchAs", "MatchStar") if hasattr(ast, k))
NEW = (ast.Call, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.JoinedStr, ast.ListComp, ast.SetComp,
       ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.Await)
local_cache = {}
def locals_of(fn):
    # {name: whether it may alias something outside} for a function's own names: its parameters
    # (not aliases) and the names it binds; a name bound to an existing object (a name, an
    # attribute, a tuple of them) may alias a module's or a class's
    if fn in local_cache: return local_cache[fn]
    a = fn.args
    names = {x.arg: False for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x}
    # a parameter whose default is an existing object (`def f(E=torch.cuda.Event)`) may alias it
    pos = a.posonlyargs + a.args
    for x, d in list(zip(pos[len(pos) - len(a.defaults):], a.defaults)) + list(zip(a.kwonlyargs, a.kw_defaults)):
        if d is not None and not isinstance(d, NEW): names[x.arg] = True
    outer = set()
    def bind(t, value):
        # only the names a target binds (not `self` in `self.w = ...`)
        if isinstance(t, ast.Name): names[t.id] = names.get(t.id, False) or not isinstance(value, NEW)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts: bind(e, value)
        elif isinstance(t, ast.Starred): bind(t.value, value)
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while todo:
        s = todo.pop()
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.setdefault(s.name, False); continue
        if isinstance(s, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(s, (ast.Global, ast.Nonlocal)): outer.update(s.names)
        elif isinstance(s, ast.Assign):
            for t in s.targets: bind(t, s.value)
        elif isinstance(s, (ast.AugAssign, ast.AnnAssign)): bind(s.target, s.value if s.value is not None else ast.Constant(None))
        elif isinstance(s, ast.NamedExpr): bind(s.target, s.value)
        elif isinstance(s, (ast.For, ast.AsyncFor)): bind(s.target, s.iter)
        elif isinstance(s, ast.withitem) and s.optional_vars is not None: bind(s.optional_vars, s.context_expr)
        elif isinstance(s, ast.ExceptHandler) and s.name: names.setdefault(s.name, False)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for x in s.names: names[(x.asname or x.name).split(".")[0]] = True
        elif isinstance(s, MATCH_NAMES) and s.name: names[s.name] = True
        todo.extend(ast.iter_child_nodes(s))
    for o in outer: names.pop(o, None)
    local_cache[fn] = names
    return names

def patch_ok(target):
    d = dotted(target)
    if d and any(d.startswith(p) for p in C["patchable"]): return True
    r = root_of(target)
    if not isinstance(r, ast.Name): return False
    s = scope_of(target)
    if not isinstance(s, FN): return False
    kind = locals_of(s).get(r.id)
    return kind is False

def super_ok(n):
    c = n.parent
    if not (isinstance(c, ast.Call) and c.func is n and not c.keywords and len(c.args) in (0, 2)): return False
    if not all(isinstance(x, ast.Name) for x in c.args): return False
    a = c.parent
    if not (isinstance(a, ast.Attribute) and a.attr == "__init__"): return False
    return isinstance(a.parent, ast.Call) and a.parent.func is a

def private(n):
    """Whether the attribute n is a library's private name used as the rule `private` refuses."""
    a = n.attr
    if not a.startswith("_") or dunder(a) or a in C["private_allowed"]: return False
    d, r = dotted(n), root_of(n)
    if d is None or not isinstance(r, ast.Name) or r.id not in alias: return False
    if any(d.startswith(p) for p in C["private_prefixes"]): return False
    p = n.parent
    return not (d == "torch." + a and isinstance(p, ast.Call) and p.func is n)

def unparse(e):
    try: s = ast.unparse(e)
    except Exception: s = "?"
    return s if len(s) <= 60 else s[:57] + "..."

ANNOTATION_NODES = (ast.Expression, ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Constant,
                    ast.BinOp, ast.BitOr, ast.Load)

def method_of_its_own(n, w):
    """Whether the attribute n, named like a builtin, is an object's method of that name:
    torch.compile (the builtin's code object runs only through exec, eval or types.FunctionType,
    each refused), and nn.Module.eval() called with no argument (the builtin needs one)."""
    if w in C["name_attributes"]: return True
    if w in C["name_methods_bare"]:
        p = getattr(n, "parent", None)
        return isinstance(p, ast.Call) and p.func is n and not p.args and not p.keywords
    return False

def word(n, w, mod=None):
    """The rule refusing an identifier used as an attribute (n) or imported from mod, or None."""
    if w in C["modules"]: return "module"
    if dunder(w) and w not in C["dunder_attributes"]: return "dunder"
    # a builtin's name as an attribute too: a module may hold a builtin (enum.bltns.exec)
    if w in C["attributes"] or (w in C["names"] and (mod is not None or not method_of_its_own(n, w))): return "name"
    if w in C["stream"]: return "stream"
    if w in C["string_attribute_attributes"] or w in C["string_attribute_names"]: return "string-attribute"
    if w in C["type_words"]: return "type-value"
    if w in C["subclass"]: return "subclass"
    if w in C["annotation"]: return "annotation"
    if w == "load":
        base = mod if mod is not None else (dotted(n.value) if isinstance(n, ast.Attribute) else None)
        if base != "triton.language": return "loader"
    elif w in C["loader"]: return "loader"
    return None

def imported_rule(n, w, mod):
    """The rule refusing the name w imported from the module mod, or the part w of a module's
    path after mod (`import torch.cuda.Stream`, `from torch._C import x`), or None: a part that
    is no module fails Python's import, but is refused as its name is anywhere."""
    rule = word(n, w, mod)
    if rule is None and w in C["type_names"]: rule = "type-value"
    if rule is None and w.startswith("_") and not dunder(w) and w not in C["private_allowed"]: rule = "private"
    return rule

def path_rule(n, parts):
    """The rule refusing a module path (its parts after an allowed root), and what it refuses."""
    for i in range(1, len(parts)):
        rule = imported_rule(n, parts[i], ".".join(parts[:i]))
        if rule:
            kind = {"module": "the module", "private": "the private module"}.get(rule, "the name")
            return rule, "%s '%s'" % (kind, parts[i])
    return None, None

def check(root, line=None):
    for n in ast.walk(root):
        at = line
        if isinstance(n, ast.Import):
            for a in n.names:
                if line is None: out["imports"].append(a.name)
                parts = a.name.split(".")
                rule, what = path_rule(n, parts)
                if parts[0] not in C["allowed"]:
                    refuse(n, "import", "import of '%s'" % a.name, at)
                elif rule:
                    refuse(n, rule, "import of '%s' (%s)" % (a.name, what), at)
                if dunder(a.asname):
                    refuse(n, "dunder", "the name '%s'" % a.asname, at)
        elif isinstance(n, ast.ImportFrom):
            mod = n.module or ""
            if line is None: out["imports"].append(mod)
            parts = mod.split(".")
            rule, what = path_rule(n, parts)
            if n.level and n.level > 0:
                refuse(n, "import", "a relative import", at)
            elif parts[0] not in C["allowed"]:
                refuse(n, "import", "import from '%s'" % mod, at)
            elif rule:
                refuse(n, rule, "import from '%s' (%s)" % (mod, what), at)
            else:
                for a in n.names:
                    # __future__'s names are the compiler's features: any other fails to compile
                    if mod == "__future__": continue
                    # the names a star import binds are the module's, which the lint cannot read
                    if a.name == "*":
                        refuse(n, "import", "a star import from '%s'" % mod, at)
                        continue
                    if a.name in C["modules"]:
                        refuse(n, "module", "the module '%s' (imported from '%s')" % (a.name, mod), at)
                        continue
                    rule = imported_rule(n, a.name, mod)
                    if rule:
                        refuse(n, rule, "the name '%s' (imported from '%s')" % (a.name, mod), at)
                    elif dunder(a.asname):
                        refuse(n, "dunder", "the name '%s'" % a.asname, at)
        elif isinstance(n, ast.Name):
            i = n.id
            if i in C["names"]:
                refuse(n, "name", "the name '%s'" % i, at)
            elif i in C["string_attribute_names"]:
                refuse(n, "string-attribute", "the name '%s'" % i, at)
            elif dunder(i) and i not in C["dunder_names"]:
                s = scope_of(n)
                if isinstance(s, ast.ClassDef) and not isinstance(n.ctx, ast.Load):
                    refuse(n, "class-dunder", "the class attribute '%s' of '%s'" % (i, s.name), at)
                else:
                    refuse(n, "dunder", "the name '%s'" % i, at)
            elif i in C["type_names"]:
                p = getattr(n, "parent", None)
                if not (i == "object" and isinstance(p, ast.ClassDef) and n in p.bases):
                    refuse(n, "type-value", "'%s' as a value" % i if not (isinstance(p, ast.Call) and p.func is n) else "%s(...)" % i, at)
            elif i == "super" and not super_ok(n):
                refuse(n, "super", "super() other than in super().__init__(...)", at)
        elif isinstance(n, ast.Attribute):
            rule = word(n, n.attr)
            if rule == "module":
                refuse(n, rule, "the module '%s' (an attribute)" % n.attr, at)
            elif rule:
                refuse(n, rule, "the attribute '%s'" % n.attr, at)
            elif private(n):
                refuse(n, "private", "the private attribute '%s'" % n.attr, at)
            elif not isinstance(n.ctx, ast.Load) and not patch_ok(n):
                refuse(n, "patch", "%s '%s'" % ("assigning" if isinstance(n.ctx, ast.Store) else "deleting", unparse(n)), at)
        elif isinstance(n, ast.Constant) and dunder(n.value) and n.value not in C["dunder_strings"]:
            refuse(n, "dunder", "the string '%s'" % n.value, at)
        elif isinstance(n, ast.keyword) and n.arg is not None:
            if dunder(n.arg):
                refuse(n, "dunder", "the keyword '%s'" % n.arg, at)
            elif n.arg in C["loader_keywords"]:
                refuse(n, "loader", "the keyword '%s'" % n.arg, at)
        elif isinstance(n, ast.arg) and dunder(n.arg):
            refuse(n, "dunder", "the parameter '%s'" % n.arg, at)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for g in n.names:
                if dunder(g) and g not in C["dunder_names"]:
                    refuse(n, "dunder", "the name '%s'" % g, at)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and dunder(n.name):
            s = scope_of(n)
            if isinstance(s, ast.ClassDef):
                if n.name != "__init__":
                    refuse(n, "class-dunder", "the method '%s' of '%s'" % (n.name, s.name), at)
            else:
                refuse(n, "dunder", "the function '%s'" % n.name, at)
        elif isinstance(n, ast.ClassDef):
            for k in n.keywords:
                if k.arg == "metaclass":
                    refuse(n, "type-value", "the metaclass of '%s'" % n.name, at)
        elif isinstance(n, MATCH_CLASS) and n.kwd_attrs:
            refuse(n, "string-attribute", "a class pattern's keyword '%s'" % n.kwd_attrs[0], at)
        # annotations: a string one is code typing.get_type_hints (or functools.singledispatch)
        # evaluates; it must be a type's name, and is linted as code at the annotation's line
        ann = []
        if isinstance(n, ast.arg) and n.annotation is not None: ann.append(n.annotation)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None: ann.append(n.returns)
        elif isinstance(n, ast.AnnAssign): ann.append(n.annotation)
        for a in ann:
            for s in ast.walk(a):
                if isinstance(s, ast.Constant) and isinstance(s.value, str):
                    l = at if at is not None else getattr(s, "lineno", 0)
                    try:
                        sub = ast.parse(s.value.strip(), mode="eval")
                    except (SyntaxError, ValueError, RecursionError, MemoryError):
                        refuse(s, "annotation", "the string annotation '%s'" % unparse(s)[1:-1], l); continue
                    bad = next((x for x in ast.walk(sub) if not isinstance(x, ANNOTATION_NODES)), None)
                    if bad is not None:
                        refuse(s, "annotation", "the string annotation '%s' (not a type's name)" % s.value[:60], l)
                    else:
                        sub.parent = None
                        link(sub)
                        check(sub, l)

check(tree)

for node in tree.body:
    if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
        m = {"line": node.lineno, "positional": None, "varargs": False}
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                a = item.args
                m["positional"] = len(a.posonlyargs) + len(a.args) - 1
                m["defaults"] = len(a.defaults)
                m["varargs"] = a.vararg is not None
        out["model_new"] = m
    elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in node.targets):
        out["model_new"] = {"line": node.lineno, "positional": None, "varargs": True}

out["refusals"].sort(key=lambda r: r["line"])
print(json.dumps(out))
]==]

local function config()
  local d = M.ALLOWED_DUNDERS
  return json.encode({
    allowed = M.ALLOWED_IMPORTS, names = M.FORBIDDEN_NAMES, attributes = M.FORBIDDEN_ATTRIBUTES,
    name_attributes = M.NAME_ATTRIBUTES, name_methods_bare = M.NAME_METHODS_BARE,
    stream = M.STREAM_ATTRIBUTES, modules = M.FORBIDDEN_MODULES, string_attribute_names = M.STRING_ATTRIBUTE_NAMES,
    string_attribute_attributes = M.STRING_ATTRIBUTE_ATTRIBUTES, dunder_attributes = d.attributes,
    dunder_names = d.names, dunder_strings = d.strings, type_names = { "type", "object" }, type_words = M.TYPE_WORDS,
    subclass = M.SUBCLASS_WORDS, loader = M.LOADER_WORDS, loader_keywords = M.LOADER_KEYWORDS,
    annotation = M.ANNOTATION_WORDS, patchable = M.PATCHABLE, private_allowed = M.PRIVATE_ALLOWED,
    private_prefixes = M.PRIVATE_PREFIXES,
  })
end


-- The number of constructor arguments of a problem (its torch.init, a Python list literal:
-- "[kernel_size, stride, padding]" or "[]"), or nil when it has none declared.
function M.init_arity(prob)
  local init = prob and prob.def and prob.def.torch and prob.def.torch.init
  if type(init) ~= "string" then return 0 end
  local inner = init:match("^%s*%[(.*)%]%s*$")
  if not inner then return nil end
  if inner:match("^%s*$") then return 0 end
  local depth, n = 0, 1
  for c in inner:gmatch(".") do
    if c == "[" or c == "(" or c == "{" then depth = depth + 1
    elseif c == "]" or c == ")" or c == "}" then depth = depth - 1
    elseif c == "," and depth == 0 then n = n + 1 end
  end
  if inner:match(",%s*$") then n = n - 1 end
  return n
end

local function python() return (pytorch.python()) end

-- analyse(path[, source]) -> the checker's findings, or nil and why it could not run. source:
-- the file's bytes as the caller read them (kreach.candidate.python.read), so that the text checked is
-- the text run; without it the file is read here, once.
function M.analyse(path, source)
  local body, err = source, nil
  if body == nil then body, err = fs.read_regular(path, M.MAX_FILE_BYTES) end
  if not body then return nil, tostring(err) end
  if #body > M.MAX_FILE_BYTES then return nil, ("%d bytes, more than the limit of %d"):format(#body, M.MAX_FILE_BYTES) end
  local w, serr = proc.spawn({ python(), "-I", "-S", "-c", CHECKER, path, config() }, { watch = true })
  if not w then return nil, ("cannot run %s to read a Python candidate: %s"):format(python(), serr) end
  -- a checker that ends early (a python3 that cannot run it) is told by its output below
  w:write(("%d\n"):format(#body) .. body)
  local line, why = w:read_line(M.TIMEOUT_S)
  if not line then w:kill() end
  local how, code = w:wait()
  local stderr = w:stderr()
  w:free()
  if not line then
    return nil, ("%s did not read %s (%s; %s %s)%s"):format(python(), path, tostring(why), how, tostring(code),
      stderr ~= "" and (": " .. text.clean(stderr, 500)) or "")
  end
  local ok, res = pcall(json.decode, line)
  if not ok or type(res) ~= "table" then return nil, "the Python checker's output is not JSON: " .. text.clean(line, 200) end
  return res
end

-- lint(path, prob[, source]) -> verdict or nil (it passes), and a report { kind = "kernelbench",
-- imports, model_new = {line, positional, varargs}, init_args, python, refusals = {{line, rule,
-- what}...} }. An invalid file is invalid_candidate, naming the line and the rule. source: as
-- analyse's.
function M.lint(path, prob, source)
  local t0 = core.now()
  local res, err = M.analyse(path, source)
  if not res then return verdict.new("invalid_candidate", ("%s: %s"):format(path, err)) end
  local report = { kind = "kernelbench", imports = res.imports, model_new = res.model_new, python = python(),
                   refusals = res.refusals, lint_s = core.now() - t0 }
  -- each refusal with its line, its rule and the rule's reason (a coding refusal comes before
  -- the syntax error the text has as UTF-8, if any)
  if #res.refusals > 0 or res.syntax_error then
    local lines = {}
    for i, r in ipairs(res.refusals) do
      if i > 10 then lines[#lines + 1] = ("(%d more)"):format(#res.refusals - 10); break end
      local rule = RULE[r.rule]
      lines[#lines + 1] = ("%s:%d: %s is not allowed (rule: %s): %s"):format(path, r.line, text.clean(r.what, 200),
        tostring(r.rule), rule and rule.reason or "?")
    end
    if res.syntax_error then
      lines[#lines + 1] = ("%s:%d: Python syntax: %s"):format(path, res.syntax_error.line, text.clean(res.syntax_error.msg, 200))
    end
    return verdict.new("invalid_candidate", table.concat(lines, "\n")), report
  end
  local m = res.model_new
  if not m then
    return verdict.new("invalid_candidate", ("%s: defines no ModelNew (a KernelBench candidate's class)"):format(path)), report
  end
  local want = M.init_arity(prob)
  report.init_args = want
  if want and m.positional and not m.varargs then
    local required = m.positional - (m.defaults or 0)
    if want < required or want > m.positional then
      return verdict.new("invalid_candidate", ("%s:%d: ModelNew.__init__ takes %s positional argument%s, and the problem's get_init_inputs gives %d"):format(
        path, m.line, required == m.positional and tostring(m.positional) or ("%d to %d"):format(required, m.positional),
        m.positional == 1 and "" or "s", want)), report
    end
  end
  return nil, report
end

return M
