-- kreach.kbcandidate: candidates in KernelBench's format: a Python file that defines a
-- `ModelNew` (an nn.Module, usually building a CUDA extension with load_inline, sometimes
-- Triton). This module is the part that needs no GPU: the static lint (docs/candidates.md,
-- "KernelBench-format candidates"). The file is parsed by python3's `ast` module, never run:
-- its syntax, that it defines ModelNew, that ModelNew's constructor takes the problem's
-- constructor arguments, and that it imports only what KernelBench candidates use and calls no
-- escape hatch (exec, eval, open, __import__, ...). Judging one on the GPU is kreach.pycandidate's
-- (in the Python worker); kreach check and eval run this lint first.
local core = require "kreach.core"
local fs = require "kreach.core.fs"
local json = require "kreach.json"
local proc = require "kreach.core.proc"
local pytorch = require "kreach.pytorch"
local text = require "kreach.text"
local verdict = require "kreach.verdict"

local M = {}

M.MAX_FILE_BYTES = 4 * 1024 * 1024
M.TIMEOUT_S = 30

-- The module roots a candidate may import (the first name of a dotted import), and why the
-- others are refused: they reach the host (files, processes, the network, native code) or
-- rewrite Python itself.
M.ALLOWED_IMPORTS = { "torch", "triton", "math", "typing", "functools", "itertools", "collections",
                      "dataclasses", "numbers", "operator", "enum", "abc", "__future__", "numpy" }
-- Names a candidate may not call or read: each runs or loads code kreach cannot see, or reaches
-- past the module's own namespace.
M.FORBIDDEN_NAMES = { "exec", "eval", "compile", "__import__", "open", "breakpoint", "input",
                      "globals", "locals", "vars", "getattr", "setattr", "delattr", "memoryview" }
M.FORBIDDEN_ATTRIBUTES = { "__dict__", "__globals__", "__builtins__", "__subclasses__", "__code__",
                           "__class__", "__bases__", "__mro__", "__getattribute__", "__loader__",
                           "__spec__", "system", "popen",
                           -- streams of its own: work queued on another stream is not held by the
                           -- timed call's gate, so it runs before the first event (docs/candidates.md,
                           -- "Trust"); and the worker's gate itself
                           "Stream", "ExternalStream", "StreamContext", "stream", "set_stream", "_sleep", "_C" }
-- Modules a candidate may not reach under any name: as an import's part, a name imported from an
-- allowed module (`from torch import sys`: torch's own namespace holds sys and os), or an
-- attribute (`torch.os`). Through them Python code reaches the worker itself (sys.modules holds
-- the worker's __main__, whose replies carry the timings) or the host (os.fork and setsid leave
-- the worker's process group).
M.FORBIDDEN_MODULES = { "sys", "os", "posix", "subprocess", "ctypes", "importlib", "builtins", "gc",
                        "inspect", "types", "io", "shutil", "socket", "pathlib", "signal",
                        "multiprocessing", "threading", "_thread", "pickle", "marshal", "code",
                        "codeop", "runpy", "atexit", "weakref", "tempfile", "sysconfig", "site" }

-- The checker, run as `python3 -I -S -c CHECKER <file> <allowed> <names> <attributes> <modules>`:
-- one JSON line on standard output.
local CHECKER = [==[
import ast, json, sys

path, allowed, names, attrs, mods = sys.argv[1], set(sys.argv[2].split(",")), set(sys.argv[3].split(",")), set(sys.argv[4].split(",")), set(sys.argv[5].split(","))
out = {"refusals": [], "imports": [], "model_new": None}

def refuse(node, what):
    out["refusals"].append({"line": getattr(node, "lineno", 0), "what": what})

try:
    with open(path, "rb") as f:
        src = f.read()
    tree = ast.parse(src, filename=path)
except SyntaxError as e:
    out["syntax_error"] = {"line": e.lineno or 0, "msg": e.msg or "invalid syntax"}
    print(json.dumps(out)); sys.exit(0)
except (ValueError, RecursionError, MemoryError) as e:
    out["syntax_error"] = {"line": 0, "msg": "%s: %s" % (type(e).__name__, e)}
    print(json.dumps(out)); sys.exit(0)

for node in ast.walk(tree):
    if isinstance(node, ast.Import):
        for a in node.names:
            out["imports"].append(a.name)
            parts = a.name.split(".")
            if parts[0] not in allowed:
                refuse(node, "import of '%s'" % a.name)
            elif any(p in mods for p in parts):
                refuse(node, "import of '%s' (the module '%s')" % (a.name, next(p for p in parts if p in mods)))
    elif isinstance(node, ast.ImportFrom):
        mod = node.module or ""
        out["imports"].append(mod)
        parts = mod.split(".")
        if node.level and node.level > 0:
            refuse(node, "a relative import")
        elif parts[0] not in allowed:
            refuse(node, "import from '%s'" % mod)
        elif any(p in mods for p in parts):
            refuse(node, "import from '%s' (the module '%s')" % (mod, next(p for p in parts if p in mods)))
        else:
            for a in node.names:
                if a.name in mods:
                    refuse(node, "the module '%s' (imported from '%s')" % (a.name, mod))
                elif a.name in names or a.name in attrs:
                    refuse(node, "the name '%s' (imported from '%s')" % (a.name, mod))
    elif isinstance(node, ast.Name) and node.id in names:
        refuse(node, "the name '%s'" % node.id)
    elif isinstance(node, ast.Attribute) and node.attr in mods:
        refuse(node, "the module '%s' (an attribute)" % node.attr)
    elif isinstance(node, ast.Attribute) and node.attr in attrs:
        refuse(node, "the attribute '%s'" % node.attr)

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

print(json.dumps(out))
]==]

-- is_python(path) -> whether a candidate path is a KernelBench-format (Python) one
function M.is_python(path) return path:match("%.py$") ~= nil end

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

-- analyse(path) -> the checker's findings, or nil and why it could not run
function M.analyse(path)
  local body, err = fs.read_regular(path, M.MAX_FILE_BYTES)
  if not body then return nil, tostring(err) end
  local w, serr = proc.spawn({ python(), "-I", "-S", "-c", CHECKER, path, table.concat(M.ALLOWED_IMPORTS, ","),
                               table.concat(M.FORBIDDEN_NAMES, ","), table.concat(M.FORBIDDEN_ATTRIBUTES, ","),
                               table.concat(M.FORBIDDEN_MODULES, ",") })
  if not w then return nil, ("cannot run %s to read a Python candidate: %s"):format(python(), serr) end
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

-- lint(path, prob) -> verdict or nil (it passes), and a report { kind = "kernelbench", imports,
-- model_new = {line, positional, varargs}, init_args, python }. An invalid file is
-- invalid_candidate, naming the line.
function M.lint(path, prob)
  local t0 = core.now()
  local res, err = M.analyse(path)
  if not res then return verdict.new("invalid_candidate", ("%s: %s"):format(path, err)) end
  local report = { kind = "kernelbench", imports = res.imports, model_new = res.model_new, python = python(),
                   lint_s = core.now() - t0 }
  if res.syntax_error then
    return verdict.new("invalid_candidate", ("%s:%d: Python syntax: %s"):format(path, res.syntax_error.line,
      res.syntax_error.msg)), report
  end
  if #res.refusals > 0 then
    local lines = {}
    for i, r in ipairs(res.refusals) do
      if i > 10 then lines[#lines + 1] = ("(%d more)"):format(#res.refusals - 10); break end
      lines[#lines + 1] = ("%s:%d: %s is not allowed"):format(path, r.line, r.what)
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
