-- KernelBench-format candidates without a GPU (kreach.candidate.pylint): the static lint of the files
-- in tests/candidates/kernelbench/, and how eval and check treat them until the Python worker
-- exists. Needs python3 (Debian's; KREACH_PYTHON names another).
--
-- Every rule of the lint (kb.RULES) has its test below, each refusal asserted by its line and its
-- rule id; every word its rules refuse is refused in every form (an import, a module path, an
-- imported name, an alias, an attribute: issue 34); the routes of the security review (issue 33)
-- are refused; and no honest candidate is:
-- the test files, KernelBench's own level-1 models written as a ModelNew, the worked example of
-- `kreach generate --format python`'s prompt and typical generated candidates written here.
local kreach = require "kreach"
local kb = require "kreach.candidate.pylint"
local ev = require "kreach.run.evaluate"
local support = require "support"

local DIR = "tests/candidates/kernelbench/"
local P19 = kreach.load_problem("19")

local function lint(file, problem)
  return kb.lint(DIR .. file, problem and kreach.load_problem(problem) or P19)
end

-- A snippet as a candidate: two lines of imports, the snippet from line 3, then a ModelNew.
local HEAD = "import torch\nimport torch.nn as nn\n"
local TAIL = [[


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
]]

local dir = support.tmpdir()
local n = 0
-- lint_text(src, whole) -> verdict, report, path: src after HEAD and before TAIL (whole: src is
-- the whole file)
local function lint_text(src, whole)
  n = n + 1
  local path = ("%s/019_t%d.py"):format(dir, n)
  support.spit(path, whole and src or (HEAD .. src .. TAIL))
  local v, report = kb.lint(path, P19)
  return v, report, path
end

local function esc(s) return (s:gsub("%p", "%%%0")) end
local REASON = {}
for _, r in ipairs(kb.RULES) do REASON[r.id] = r.reason end

-- refused(src, line, rule[, what]): the lint refuses src with a message naming the line, the rule
-- (and what, when given), in the form `path:LINE: WHAT is not allowed (rule: ID): REASON`
local function refused(src, line, rule, what, whole)
  local v, _, path = lint_text(src, whole)
  assert(v, ("not refused (rule %s, line %d):\n%s"):format(rule, line, src))
  assert.equals("invalid_candidate", v.verdict)
  local want = ("%s:%d: %s is not allowed %%(rule: %s%%): %s"):format(esc(path), line, what and esc(what) or "[^\n]-",
    esc(rule), esc(assert(REASON[rule], rule)))
  assert(v.reason:match(want), ("want %s:%d (rule: %s)%s, got:\n%s"):format(path, line, rule,
    what and (" " .. what) or "", v.reason))
  return v
end

-- passes(src[, whole]): the lint finds nothing in src
local function passes(src, whole)
  local v, report = lint_text(src, whole)
  assert(v == nil, ("refused:\n%s\n%s"):format(v and v.reason or "", whole and src or (HEAD .. src .. TAIL)))
  assert.same({}, report.refusals)
end

-- Honest candidates of the kinds models write (KernelBench level 1 and 2 outputs), none refused.
local HONEST = {
  -- load_inline with flags, the old super() form, parameters, a main guard
  [[
import math
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
__global__ void scale_kernel(const float* x, float* y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s;
}
torch::Tensor scale_cuda(torch::Tensor x, double s) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)s, n);
    return y;
}
"""
cpp_source = "torch::Tensor scale_cuda(torch::Tensor x, double s);"

scale = torch.utils.cpp_extension.load_inline(
    name="scale",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scale_cuda"],
    verbose=True,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features=16, out_features=16, bias=True):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous().view(x.size(0), -1)
        return self.scale.scale_cuda(x, 2.0)


def get_inputs():
    return [torch.randn(16, 16).cuda()]


if __name__ == "__main__":
    print(ModelNew()(*get_inputs()).shape, torch.__version__)
]],
  -- Triton with autotune, constexpr annotations, lru_cache, a dataclass, typing and postponed
  -- (string) annotations, math.prod, tl.load
  [[
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@dataclass(frozen=True)
class Config:
    block: int = 1024
    warps: int = 4
    sizes: List[int] = field(default_factory=list)


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 512}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)], key=["n_elements"])
@triton.jit
def relu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


@lru_cache(maxsize=None)
def grid_size(n: int, block: int) -> int:
    return triton.cdiv(n, block)


def triton_relu(x: torch.Tensor, cfg: Optional[Config] = None) -> torch.Tensor:
    assert x.is_cuda and x.is_contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    relu_kernel[grid](x, out, n)
    return out


class ModelNew(nn.Module):
    """ReLU as a Triton kernel."""

    def __init__(self) -> None:
        super().__init__()
        self.cfg: Config = Config()
        self.shape: Tuple[int, ...] = (1,)

    def forward(self, x: "torch.Tensor") -> "Optional[torch.Tensor]":
        if math.prod(x.shape) == 0:
            return x.clone()
        return triton_relu(x.contiguous(), self.cfg).view(x.shape)
]],
  -- settings, an autograd Function, an Enum, numpy, operator.itemgetter, module-level caches,
  -- nn.Module.__init__(self), `class X(object)`, assigning through parameters and new objects
  [[
import collections
import itertools
import operator
from enum import Enum
from typing import Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = False

_cache = {}


class Mode(Enum):
    FAST = 1
    SAFE = 2


class Plan(object):
    pass


def get_plan(key):
    if key not in _cache:
        plan = Plan()
        plan.key = key
        _cache[key] = plan
    return _cache[key]


def init_weights(m):
    if isinstance(m, nn.Linear):
        m.bias = None
        nn.init.zeros_(m.weight)


class _Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        ctx.save_for_backward(x)
        return x.clamp_min(0) * alpha

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0) * ctx.alpha, None


class ModelNew(nn.Module):
    def __init__(self, dim: int = 4, mode: Optional[Mode] = None):
        nn.Module.__init__(self)
        self.dim = dim
        self.mode = mode or Mode.FAST
        self.register_buffer("scale", torch.ones(1))
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(2)])
        self.apply(init_weights)
        lin = nn.Linear(dim, dim)
        lin.weight.data.normal_()
        lin.weight.requires_grad = False
        self.extra = lin
        self.count = 0

    def forward(self, x):
        self.count += 1
        h = x
        for layer in self.layers:
            h = F.relu(h)
        dims = list(itertools.accumulate([1, 2, 3], operator.mul))
        order = sorted(collections.Counter(dims).items(), key=operator.itemgetter(0))
        y = _Fn.apply(h, 1.0)
        out = torch.empty_like(y)
        out.copy_(y)
        if hasattr(self, "dim") and np.prod([1]) == 1 and x.type(torch.float32) is not None:
            return out.reshape(x.shape[0], -1).view_as(x)
        return get_plan(order) and F.relu(x)
]],
}

describe("kreach.candidate.pylint", function()
  it("passes well-formed candidates: load_inline CUDA, Triton and plain PyTorch", function()
    for _, f in ipairs({ "019_relu_load_inline.py", "019_relu_triton.py", "019_relu_torch.py" }) do
      local v, report = lint(f)
      assert.is_nil(v, f .. ": " .. tostring(v and v.reason))
      assert.equals("kernelbench", report.kind)
      assert.is_number(report.model_new.line)
      assert.equals(0, report.init_args)
      assert.same({}, report.refusals)
    end
    local _, report = lint("019_relu_load_inline.py")
    assert.same({ "torch", "torch.nn", "torch.utils.cpp_extension" }, report.imports)
  end)

  it("does not run the file: adversarial candidates pass the lint, and nothing they do happens", function()
    -- a build error, a partial write, an input mutation, zeros, a process left behind by native
    -- code (the lint cannot read C++; the reaper ends it): each is for the GPU run to find
    for _, f in ipairs({ "019_relu_build_error.py", "019_relu_partial.py", "019_relu_mutation.py", "019_relu_escapee.py" }) do
      assert.is_nil((lint(f)))
    end
    assert.is_nil((lint("023_softmax_zeros.py", "23")))
  end)

  it("refuses no honest candidate: typical generated ones", function()
    for _, src in ipairs(HONEST) do passes(src, true) end
  end)

  it("refuses no honest candidate: KernelBench's level-1 models, each as a ModelNew", function()
    -- the problems' own PyTorch models (KernelBench's files: `super(Model, self).__init__()`,
    -- nn layers, torch functions), read from the problem files, all in one file
    local parts, count = { "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" }, 0
    for f in io.popen("ls problems/kernelbench/level1/*.lua"):lines() do
      local model = support.slurp(f):match("model = %[%[\n?(.-)%]%]")
      assert(model, f)
      parts[#parts + 1] = (model:gsub("%f[%w_]Model%f[^%w_]", "ModelNew"))
      count = count + 1
    end
    assert.is_true(count >= 100)
    passes(table.concat(parts, "\n"), true)
  end)

  it("refuses no honest candidate: what `kreach generate --format python` asks for and writes", function()
    -- the prompt's worked example, and the replies the generate specs serve
    local example = support.slurp("scripts/kreach/generate/prompt.lua"):match("local PY_EXAMPLE = %[%[\n(.-)%]%]")
    assert.matches("class ModelNew", example)
    passes(example, true)
    local served = 0
    for _, spec in ipairs({ "tests/lua/generate_cmd_spec.lua", "tests/lua/generate_spec.lua" }) do
      for lit in support.slurp(spec):gmatch('local py = ("[^\n]-")\n') do
        passes(assert(load("return " .. lit))(), true)
        served = served + 1
      end
    end
    assert.is_true(served >= 2)
  end)

  it("names the line of a syntax error", function()
    local v = lint("bad_syntax.py")
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("bad_syntax%.py:7: Python syntax: expected ':'", v.reason)
  end)

  it("wants a ModelNew", function()
    local v = lint("bad_no_model.py")
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("defines no ModelNew", v.reason)
  end)

  it("refuses imports and names that reach the host, each with its line and rule", function()
    local v = lint("bad_escape.py")
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("bad_escape%.py:2: import of 'os' is not allowed %(rule: import%)", v.reason)
    assert.matches("bad_escape%.py:3: import of 'subprocess' is not allowed %(rule: import%)", v.reason)
    assert.matches("bad_escape%.py:7: the name 'exec' is not allowed %(rule: name%)", v.reason)
    assert.matches("bad_escape%.py:14: the attribute '__builtins__' is not allowed %(rule: dunder%)", v.reason)
    assert.matches("bad_escape%.py:17: the attribute 'system' is not allowed %(rule: name%)", v.reason)
  end)

  it("refuses the modules torch's namespace holds, and streams of the candidate's own", function()
    local v = lint("bad_worker_reach.py")
    assert.equals("invalid_candidate", v.verdict)
    for _, want in ipairs({
      ":6: the module 'sys' %(imported from 'torch'%) is not allowed %(rule: module%)",
      ":7: import of 'torch.multiprocessing' %(the module 'multiprocessing'%) is not allowed %(rule: module%)",
      ":10: the module 'os' %(an attribute%) is not allowed %(rule: module%)",
      ":11: the attribute 'Stream' is not allowed %(rule: stream%)",
      ":19: the attribute '_sleep' is not allowed %(rule: stream%)",
      ":20: the attribute 'stream' is not allowed %(rule: stream%)",
    }) do
      assert.matches("bad_worker_reach%.py" .. want, v.reason)
    end
  end)

  it("refuses the security review's routes (issue 33), each by its line and rule", function()
    -- each linted `ok` before the lint was an allow-list
    local ROUTES = {
      { "import operator\nos_ = operator.methodcaller('__getattribute__', 'os')(torch)\n", 4, "string-attribute" },
      { "os_ = __builtins__.__import__('os')\n", 3, "dunder" },
      { "imp = __builtins__['__import__']\n", 3, "dunder" },
      { "match torch:\n    case object(sys=s):\n        pass\n", 4, "string-attribute" },
      { "import typing\ndef f(x: \"__import__('os').system('id')\"):\n    pass\ntyping.get_type_hints(f)\n", 4, "annotation" },
      { "import typing\ndef f(x: \"__import__('os').system('id')\"):\n    pass\ntyping.get_type_hints(f)\n", 6, "annotation" },
      { "from operator import attrgetter\nloads = attrgetter('serialization.pickle.loads')(torch)\n", 3, "string-attribute" },
      { "import numpy\nlibc = numpy.ctypeslib.load_library('libc.so.6', '/lib')\n", 4, "loader" },
      { "torch.ops.load_library('/tmp/x.so')\n", 3, "loader" },
      { "w = torch.load('/tmp/w.pt', weights_only=False)\n", 3, "loader" },
      { "import numpy\na = numpy.load('/tmp/a.npy', allow_pickle=True)\n", 4, "loader" },
      { "from torch.utils import cpp_extension\nm = cpp_extension.load(name='x', sources=['/etc/passwd'])\n", 4, "loader" },
      { "type.__setattr__(torch.cuda.Event, 'elapsed_time', lambda a, b: 0.001)\n", 3, "type-value" },
      { "import operator\nmain = operator.attrgetter('sys.modules')(torch)['__main__']\n", 4, "string-attribute" },
      { "import operator\nside = operator.attrgetter('cuda.Stream')(torch)()\n", 4, "string-attribute" },
      { "class C(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, func, types, args=(), kwargs=None):\n        return 0\n\ndef lazy(x):\n    return torch.empty_like(x).as_subclass(C)\n", 9, "subclass" },
    }
    for _, r in ipairs(ROUTES) do refused(r[1], r[2], r[3]) end
    -- and as a test file, whose verdict the GPU suite checks too (EXPECTED.lua)
    local v = lint("bad_lint_reflection.py")
    for _, want in ipairs({ ":11: the attribute 'methodcaller' [^\n]*%(rule: string%-attribute%)",
                            ":12: the name '__builtins__' [^\n]*%(rule: dunder%)",
                            ":14: a class pattern's keyword 'sys' [^\n]*%(rule: string%-attribute%)",
                            ":18: the string annotation [^\n]*%(rule: annotation%)",
                            ":22: the attribute 'get_type_hints' [^\n]*%(rule: annotation%)",
                            ":23: the attribute 'load_library' [^\n]*%(rule: loader%)" }) do
      assert.matches("bad_lint_reflection%.py" .. want, v.reason)
    end
    assert.matches("%(3 more%)", v.reason)
  end)

  it("refuses the Python attacks of issue 33 (019_relu_adv_*.py), not the native ones it cannot read", function()
    -- the GPU suite runs them without the lint (ATTACKS.lua): what the lint says of each
    local WANT = {
      ["019_relu_adv_lazy.py"] = { { 12, "class-dunder" }, { 18, "super" }, { 26, "subclass" } },
      ["019_relu_adv_timer.py"] = { { 10, "type-value" }, { 10, "dunder" } },
      ["019_relu_adv_reply.py"] = { { 11, "string-attribute" }, { 24, "patch" }, { 25, "dunder" } },
      ["019_relu_adv_side_stream.py"] = { { 10, "string-attribute" }, { 11, "string-attribute" } },
      ["019_relu_adv_native_stream.py"] = {},
      ["019_relu_adv_thread.py"] = {},
    }
    local present = 0
    for f, want in pairs(WANT) do
      local fh = io.open(DIR .. f)
      if fh then
        fh:close()
        present = present + 1
        local v, report = lint(f)
        local got = {}
        for _, r in ipairs(report.refusals) do got[r.line .. " " .. r.rule] = true end
        for _, w in ipairs(want) do
          assert(got[w[1] .. " " .. w[2]], ("%s: no refusal at line %d (rule %s): %s"):format(f, w[1], w[2], v and v.reason or "ok"))
        end
        assert.equals(#want == 0, v == nil, f)
      end
    end
    if present == 0 then pending("the issue 33 attack files are not in this checkout") end
  end)

  it("checks ModelNew's constructor against the problem's get_init_inputs", function()
    assert.equals(5, kb.init_arity(kreach.load_problem("41")))
    assert.equals(0, kb.init_arity(kreach.load_problem("19")))
    local v = lint("041_maxpool_arity.py", "41")
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("041_maxpool_arity%.py:7: ModelNew%.__init__ takes 2 positional arguments, and the problem's get_init_inputs gives 5", v.reason)
  end)

  it("refuses a file it cannot read, and a parser that cannot run, with the reason", function()
    local d = support.tmpdir()
    local v = kb.lint(d, kreach.load_problem("19"))
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("not a regular file", v.reason)
    local huge = d .. "/019_huge.py"
    support.spit(huge, ("#" .. ("x"):rep(1023) .. "\n"):rep(4097))
    v = kb.lint(huge, kreach.load_problem("19"))
    assert.matches("more than", v.reason)
    -- deeply nested source: the parser's own limit, reported as a syntax error, not a crash
    local deep = d .. "/019_deep.py"
    support.spit(deep, "x = " .. ("(" ):rep(5000) .. (")"):rep(5000) .. "\n")
    v = kb.lint(deep, kreach.load_problem("19"))
    assert.equals("invalid_candidate", v.verdict)
  end)

  it("checks the text it is given, read once: what is checked is what runs", function()
    -- the caller's bytes (kreach.candidate.python.read's), not the file as it is now
    local v = kb.lint(DIR .. "019_relu_torch.py", P19, HEAD .. "import os\n" .. TAIL)
    assert.matches("019_relu_torch%.py:3: import of 'os' is not allowed %(rule: import%)", v.reason)
    assert.is_nil((kb.lint(DIR .. "bad_escape.py", P19, support.slurp(DIR .. "019_relu_torch.py"))))
    v = kb.lint(DIR .. "019_relu_torch.py", P19, ("#"):rep(kb.MAX_FILE_BYTES + 1))
    assert.matches("more than the limit", v.reason)
    -- near the limit, through the checker's standard input
    local big = ("# " .. ("x"):rep(1021) .. "\n"):rep(3 * 1024)
    assert.is_nil((kb.lint(DIR .. "019_relu_torch.py", P19, big .. support.slurp(DIR .. "019_relu_torch.py"))))
  end)

  it("is planned by eval beside .lua candidates, by the problem id of its name", function()
    local items, skipped = ev.plan("kernelbench-l1", { DIR .. "019_relu_torch.py", "tests/candidates/019_relu.lua" })
    assert.equals(2, #items)
    assert.equals(0, #skipped)
    assert.equals(19, items[1].problem_id)
    assert.equals(19, items[2].problem_id)
  end)
end)

-- One test a rule: each refusal by its line (snippets start at line 3, after HEAD) and rule id,
-- and what the rule leaves alone beside it.
describe("kreach.candidate.pylint's rules", function()
  it("has a test for every rule", function()
    local ids = {}
    for _, r in ipairs(kb.RULES) do ids[#ids + 1] = r.id end
    assert.same({ "coding", "import", "module", "name", "string-attribute", "dunder", "type-value", "super",
                  "class-dunder", "subclass", "loader", "stream", "annotation", "private", "patch" }, ids)
  end)

  it("coding: reads exactly the text the worker runs, UTF-8, and refuses another coding", function()
    -- read as UTF-7 (its declaration) lines 8-10 are one string; as UTF-8, the text the worker
    -- compiles, they import os and run a command: the lint reads them as the worker does
    local v = lint("bad_lint_coding.py")
    assert.matches("bad_lint_coding%.py:1: the coding declaration 'utf%-7' %(the file is run as UTF%-8%) is not allowed %(rule: coding%)", v.reason)
    assert.matches("bad_lint_coding%.py:9: import of 'os' is not allowed %(rule: import%)", v.reason)
    assert.matches("bad_lint_coding%.py:9: the attribute 'system' is not allowed %(rule: name%)", v.reason)
    refused("#!/usr/bin/env python3\n# vim: set fileencoding=latin-1 :\n" .. HEAD .. TAIL, 2, "coding",
      "the coding declaration 'latin-1' (the file is run as UTF-8)", true)
    refused("x = 1\n# the name\n" .. "s = '\xff'\n", 5, "coding", "text that is not UTF-8 (byte 58)")
    refused("\xef\xbb\xbf" .. HEAD .. TAIL, 1, "coding", "a byte-order mark", true)
    -- a coding refusal comes before the syntax error the same text has as UTF-8
    local v2 = refused("# coding: utf-16\n" .. HEAD .. "x = (\n" .. TAIL, 1, "coding", nil, true)
    assert.matches("Python syntax", v2.reason)
    passes("# -*- coding: utf-8 -*-\n" .. HEAD .. TAIL, true)
    passes("# coding=UTF8\n" .. HEAD .. TAIL, true)
    passes("s = 'naïve ≤ λ'\n")
  end)

  it("import: only the module roots KernelBench candidates use", function()
    refused("import json\n", 3, "import", "import of 'json'")
    refused("from . import helpers\n", 3, "import", "a relative import")
    refused("from concurrent.futures import ThreadPoolExecutor\n", 3, "import", "import from 'concurrent.futures'")
    passes("import math, functools, itertools, collections, dataclasses, numbers, operator, enum, abc, typing\nimport numpy as np\n")
  end)

  it("module: the interpreter's and the host's modules, under any name", function()
    refused("from torch import sys\n", 3, "module", "the module 'sys' (imported from 'torch')")
    refused("import numpy.ctypeslib as npc\n", 3, "module", "import of 'numpy.ctypeslib' (the module 'ctypeslib')")
    refused("import numpy\nf = numpy.f2py\n", 4, "module", "the module 'f2py' (an attribute)")
    refused("x = torch.utils.cpp_extension.subprocess\n", 3, "module", "the module 'subprocess' (an attribute)")
    -- torch.fx resolves a graph's targets (strings) as attribute paths of its root
    refused("g = torch.fx.Graph()\nm = g.get_attr('sys.modules')\n", 3, "module", "the module 'fx' (an attribute)")
    refused("from torch.fx import GraphModule\n", 3, "module", "import from 'torch.fx' (the module 'fx')")
  end)

  it("name: what runs code kreach cannot read or reaches the module's namespace", function()
    refused("y = eval('1 + 1')\n", 3, "name", "the name 'eval'")
    refused("code = compile('1', 'f', 'eval')\n", 3, "name", "the name 'compile'")
    refused("g = globals()\n", 3, "name", "the name 'globals'")
    refused("v = vars(torch)\n", 3, "name", "the name 'vars'")
    refused("def f(p):\n    return p.popen('id')\n", 4, "name", "the attribute 'popen'")
    passes("m = torch.compile(nn.Identity())\n")
  end)

  it("string-attribute: attribute access by a string, the getattr family and operator's", function()
    refused("c = getattr(torch, 'cuda')\n", 3, "string-attribute", "the name 'getattr'")
    refused("setattr(torch, 'x', 1)\n", 3, "string-attribute", "the name 'setattr'")
    refused("import operator\ns = operator.attrgetter('cuda.Stream')(torch)\n", 4, "string-attribute", "the attribute 'attrgetter'")
    refused("from operator import methodcaller as mc\n", 3, "string-attribute", "the name 'methodcaller' (imported from 'operator')")
    -- a class pattern's keywords are attribute names, strings in the syntax tree
    refused("def f(t):\n    match t:\n        case torch.Tensor(device=d):\n            return d\n", 5, "string-attribute",
      "a class pattern's keyword 'device'")
    passes("import operator\nkey = operator.itemgetter(0)\nhas = hasattr(torch, 'cuda')\ndef f(t):\n    match t:\n        case (a, b):\n            return a\n        case int(n):\n            return n\n")
  end)

  it("dunder: dunder attributes, names, strings, keywords and parameters, but a short list", function()
    refused("d = torch.__dict__\n", 3, "dunder", "the attribute '__dict__'")
    refused("b = __builtins__\n", 3, "dunder", "the name '__builtins__'")
    refused("k = {'__import__': 1}\n", 3, "dunder", "the string '__import__'")
    refused("d = dict(__torch_function__=None)\n", 3, "dunder", "the keyword '__torch_function__'")
    refused("def f(__builtins__):\n    pass\n", 3, "dunder", "the parameter '__builtins__'")
    refused("def __getattr__(name):\n    return name\n", 3, "dunder", "the function '__getattr__'")
    refused("from torch import __builtins__ as b\n", 3, "dunder", "the name '__builtins__' (imported from 'torch')")
    refused("x = torch.Tensor.__init__.__globals__\n", 3, "dunder", "the attribute '__globals__'")
    -- allowed: kb.ALLOWED_DUNDERS
    assert.same({ attributes = { "__init__", "__name__", "__version__" }, names = { "__name__", "__all__" },
                  strings = { "__main__" } }, kb.ALLOWED_DUNDERS)
    passes("__all__ = ['ModelNew']\nv = torch.__version__\nn = torch.relu.__name__\nif __name__ == '__main__':\n    nn.Module.__init__(nn.Module())\n")
  end)

  it("type-value: type(...), type and object as values, metaclasses", function()
    refused("t = type(torch.tensor(1))\n", 3, "type-value", "type(...)")
    refused("T = type\n", 3, "type-value", "'type' as a value")
    refused("o = object\n", 3, "type-value", "'object' as a value")
    refused("import abc\nclass A(metaclass=abc.ABCMeta):\n    pass\n", 4, "type-value", "the metaclass of 'A'")
    refused("import abc\nM = abc.ABCMeta\n", 4, "type-value", "the attribute 'ABCMeta'")
    refused("from dataclasses import make_dataclass\n", 3, "type-value", "the name 'make_dataclass' (imported from 'dataclasses')")
    refused("b = torch.Tensor.mro()[-1]\n", 3, "type-value", "the attribute 'mro'")
    passes("class A(object):\n    pass\n\ny = torch.zeros(1).type(torch.float32)\n")
  end)

  it("super: only super().__init__(...) and super(ModelNew, self).__init__(...)", function()
    refused("class A(nn.ReLU):\n    def forward(self, x):\n        return super().forward(x)\n", 5, "super")
    refused("class A(nn.Module):\n    def __init__(self):\n        s = super()\n        s.__init__()\n", 5, "super")
    refused("def f(x):\n    return super(torch.Tensor, x).__init__(x, x)\n", 4, "super",
      "super() other than in super().__init__(...)")
    passes("class A(nn.Module):\n    def __init__(self, n):\n        super(A, self).__init__()\n        self.n = n\n")
  end)

  it("class-dunder: a class defines no special method but __init__", function()
    refused("class C(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, func, types, args=(), kwargs=None):\n        return 0\n",
      5, "class-dunder", "the method '__torch_function__' of 'C'")
    refused("class C(torch.Tensor):\n    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):\n        return 0\n",
      4, "class-dunder", "the method '__torch_dispatch__' of 'C'")
    refused("class C:\n    def __call__(self):\n        return 0\n", 4, "class-dunder", "the method '__call__' of 'C'")
    refused("class C(torch.Tensor):\n    __torch_function__ = None\n", 4, "class-dunder", "the class attribute '__torch_function__' of 'C'")
    passes("class C(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n    def extra_repr(self):\n        return 'c'\n")
  end)

  it("subclass: no tensor of a class of the candidate's own", function()
    refused("def f(x, C):\n    return torch.empty_like(x).as_subclass(C)\n", 4, "subclass", "the attribute 'as_subclass'")
    refused("def f(x, C):\n    return torch.Tensor._make_subclass(C, x)\n", 4, "subclass", "the attribute '_make_subclass'")
    refused("def f(x, C):\n    return torch.Tensor._make_wrapper_subclass(C, x.shape)\n", 4, "subclass")
  end)

  it("loader: nothing loaded from files: code, libraries, pickles", function()
    refused("w = torch.load('/tmp/w.pt', weights_only=False)\n", 3, "loader", "the attribute 'load'")
    refused("w = torch.load('/tmp/w.pt', weights_only=False)\n", 3, "loader", "the keyword 'weights_only'")
    refused("import numpy as np\na = np.load('/tmp/a.npy', allow_pickle=True)\n", 4, "loader", "the attribute 'load'")
    refused("torch.ops.load_library('/tmp/x.so')\n", 3, "loader", "the attribute 'load_library'")
    refused("from torch.utils.cpp_extension import load\n", 3, "loader", "the name 'load' (imported from 'torch.utils.cpp_extension')")
    refused("import torch.utils.cpp_extension as ce\nm = ce.load(name='x', sources=['/etc/passwd'])\n", 4, "loader", "the attribute 'load'")
    refused("m = torch.jit.load('/tmp/m.pt')\n", 3, "loader", "the attribute 'load'")
    refused("import torch.hub\n", 3, "loader", "import of 'torch.hub' (the name 'hub')")
    refused("s = torch.UntypedStorage.from_file('/tmp/s', True, 4)\n", 3, "loader", "the attribute 'from_file'")
    passes("import triton\nimport triton.language as tl\nfrom torch.utils.cpp_extension import load_inline\n\n@triton.jit\ndef k(p, q):\n    tl.store(q, tl.load(p) + triton.language.load(p))\n")
  end)

  it("stream: no stream of the candidate's own, no gate of the worker's", function()
    refused("s = torch.cuda.Stream()\n", 3, "stream", "the attribute 'Stream'")
    refused("from torch.cuda import stream\n", 3, "stream", "the name 'stream' (imported from 'torch.cuda')")
    refused("torch.cuda._sleep(100)\n", 3, "stream", "the attribute '_sleep'")
    passes("s = torch.cuda.current_stream()\ntorch.cuda.synchronize()\n")
  end)

  it("annotation: no annotation that runs code when evaluated", function()
    refused("import typing\nh = typing.get_type_hints(len)\n", 4, "annotation", "the attribute 'get_type_hints'")
    refused("from typing import ForwardRef\n", 3, "annotation", "the name 'ForwardRef' (imported from 'typing')")
    refused("def f(x: \"__import__('os').system('id')\"):\n    pass\n", 3, "annotation")
    refused("def f(x) -> \"torch.relu(x)\":\n    pass\n", 3, "annotation", "the string annotation 'torch.relu(x)' (not a type's name)")
    refused("y: 'not (' = 1\n", 3, "annotation")
    -- a string annotation that is a type's name is linted as code, at its line
    refused("def f(x: 'torch.__dict__'):\n    pass\n", 3, "dunder", "the attribute '__dict__'")
    passes("from typing import Optional\ndef f(x: 'torch.Tensor', n: 'Optional[int]' = None) -> 'torch.Tensor | None':\n    return x\n")
  end)

  it("private: a library's private names only as torch's own operations, called, and a few helpers", function()
    refused("os_ = torch._utils._import_dotted_name('os')\n", 3, "private", "the private attribute '_import_dotted_name'")
    refused("os_ = torch._utils._import_dotted_name('os')\n", 3, "private", "the private attribute '_utils'")
    refused("import numpy\nf = numpy.core._ufunc_reconstruct('os', 'system')\n", 4, "private", "the private attribute '_ufunc_reconstruct'")
    refused("g = torch.fx.graph_module._exec_with_source('import os', {})\n", 3, "private", "the private attribute '_exec_with_source'")
    refused("u = torch._utils\n", 3, "private", "the private attribute '_utils'")
    refused("from torch._utils import _import_dotted_name\n", 3, "private", "import from 'torch._utils' (the private module '_utils')")
    refused("import torch._dynamo as dynamo\n", 3, "private", "import of 'torch._dynamo' (the private module '_dynamo')")
    refused("from torch import _utils\n", 3, "private", "the name '_utils' (imported from 'torch')")
    passes("from torch.nn.modules.utils import _pair\n" ..
      "def f(a, b, w, x):\n    fan_in, _ = nn.init._calculate_fan_in_and_fan_out(w)\n" ..
      "    y = torch._scaled_mm(a, b, out_dtype=torch.float16)\n    z = torch.ops.aten._softmax.default(x, -1, False)\n" ..
      "    return _pair(3), x._version, torch.nn.modules.utils._triple(1)\n\n" ..
      "class A:\n    def __init__(self):\n        self._cache = {}\n\n    def g(self):\n        return self._cache\n")
  end)

  it("patch: no attribute of a module or a class rewritten, through any name", function()
    refused("torch.cuda.Event.elapsed_time = lambda a, b: 0.001\n", 3, "patch", "assigning 'torch.cuda.Event.elapsed_time'")
    refused("del torch.cuda.Event.elapsed_time\n", 3, "patch", "deleting 'torch.cuda.Event.elapsed_time'")
    refused("nn.Module.forward = None\n", 3, "patch", "assigning 'nn.Module.forward'")
    refused("def f():\n    E = torch.cuda.Event\n    E.elapsed_time = None\n", 5, "patch", "assigning 'E.elapsed_time'")
    refused("def f(E=torch.cuda.Event):\n    E.elapsed_time = None\n", 4, "patch", "assigning 'E.elapsed_time'")
    refused("def f():\n    for E in (torch.cuda.Event,):\n        E.elapsed_time = None\n", 5, "patch")
    refused("def f():\n    global Ev\n    Ev.elapsed_time = None\n", 5, "patch")
    passes("torch.backends.cudnn.benchmark = True\ndef f(m, ctx):\n    m.weight = None\n    ctx.alpha = 1\n    lin = nn.Linear(2, 2)\n    lin.bias = None\n")
  end)
end)

-- Every refused word in every form (issue 34): a rule checked in one form only leaves the others
-- open (a name refused as an attribute could still arrive as `from torch.cuda import ...`). Each
-- word of the lint's lists (all of each list; samples of the open ones, dunders and private
-- names) is written in each of FORMS, one a line, and the refusals are asserted line by line:
-- its rule where the form reaches it, none where the form cannot.
--
-- A word: { word, rule, from = an allowed module that holds it (or could: the lint reads no
-- module), attribute = the rule of `x = from.word` where it differs (false: not refused, and
-- why), name = the rule of the bare name `x = word` (default false: a bare name is the
-- candidate's own, or a builtin; a module's names arrive only through an import, which the
-- other forms check, and a star import is refused) }.
-- The rules that refuse no word have no forms: coding (the file's bytes), super, class-dunder and
-- patch (constructs), annotation's string annotations, and the keywords of loader and dunder.
local WORDS = {
  -- module (kb.FORBIDDEN_MODULES)
  { "sys", "module", from = "torch" }, { "os", "module", from = "torch" }, { "posix", "module", from = "torch" },
  { "subprocess", "module", from = "torch.utils.cpp_extension" }, { "ctypes", "module", from = "torch" },
  { "importlib", "module", from = "torch" }, { "builtins", "module", from = "dataclasses" },
  { "gc", "module", from = "torch" }, { "inspect", "module", from = "dataclasses" }, { "types", "module", from = "torch" },
  { "io", "module", from = "torch" }, { "shutil", "module", from = "torch" }, { "socket", "module", from = "torch" },
  { "pathlib", "module", from = "torch" }, { "signal", "module", from = "torch" },
  { "multiprocessing", "module", from = "torch" }, { "threading", "module", from = "torch" },
  { "_thread", "module", from = "dataclasses" }, { "pickle", "module", from = "torch" },
  { "marshal", "module", from = "torch" }, { "code", "module", from = "torch" }, { "codeop", "module", from = "torch" },
  { "runpy", "module", from = "torch" }, { "atexit", "module", from = "torch" }, { "weakref", "module", from = "torch" },
  { "tempfile", "module", from = "torch" }, { "sysconfig", "module", from = "torch" }, { "site", "module", from = "torch" },
  { "ctypeslib", "module", from = "numpy" }, { "f2py", "module", from = "numpy" },
  { "distutils", "module", from = "numpy" }, { "fx", "module", from = "torch" },
  -- the standard library's enum holds builtins as `bltns` (enum.bltns.exec("...")), found by
  -- walking the allowed standard modules' attributes (python 3.11)
  { "bltns", "module", from = "enum" },
  -- name (kb.FORBIDDEN_NAMES): builtins, refused as names too
  { "exec", "name", from = "torch", name = "name" }, { "eval", "name", from = "torch", name = "name" },
  -- torch.compile is PyTorch's; the builtin's code object runs only through exec, eval or
  -- types.FunctionType, each refused
  { "compile", "name", from = "torch", name = "name", attribute = false },
  { "__import__", "dunder", from = "torch", name = "name" }, { "open", "name", from = "torch", name = "name" },
  { "breakpoint", "name", from = "torch", name = "name" }, { "input", "name", from = "torch", name = "name" },
  { "globals", "name", from = "torch", name = "name" }, { "locals", "name", from = "torch", name = "name" },
  { "vars", "name", from = "torch", name = "name" }, { "memoryview", "name", from = "torch", name = "name" },
  -- name (kb.FORBIDDEN_ATTRIBUTES)
  { "system", "name", from = "numpy" }, { "popen", "name", from = "torch" },
  -- stream (kb.STREAM_ATTRIBUTES)
  { "Stream", "stream", from = "torch.cuda" }, { "ExternalStream", "stream", from = "torch.cuda" },
  { "StreamContext", "stream", from = "torch.cuda" }, { "stream", "stream", from = "torch.cuda" },
  { "set_stream", "stream", from = "torch.cuda" }, { "_sleep", "stream", from = "torch.cuda" },
  { "_C", "stream", from = "torch" },
  -- string-attribute (kb.STRING_ATTRIBUTE_NAMES, refused as names too; kb.STRING_ATTRIBUTE_ATTRIBUTES)
  { "getattr", "string-attribute", from = "torch", name = "string-attribute" },
  { "setattr", "string-attribute", from = "torch", name = "string-attribute" },
  { "delattr", "string-attribute", from = "torch", name = "string-attribute" },
  { "attrgetter", "string-attribute", from = "operator" }, { "methodcaller", "string-attribute", from = "operator" },
  -- dunder (a sample: every dunder but kb.ALLOWED_DUNDERS is refused)
  { "__builtins__", "dunder", from = "torch", name = "dunder" }, { "__dict__", "dunder", from = "torch", name = "dunder" },
  { "__globals__", "dunder", from = "torch", name = "dunder" }, { "__class__", "dunder", from = "torch", name = "dunder" },
  { "__subclasses__", "dunder", from = "torch", name = "dunder" }, { "__getattribute__", "dunder", from = "torch", name = "dunder" },
  { "__loader__", "dunder", from = "torch", name = "dunder" }, { "__spec__", "dunder", from = "torch", name = "dunder" },
  { "__main__", "dunder", from = "torch", name = "dunder" },
  -- numpy.__config__ and torch.__config__ are modules
  { "__config__", "dunder", from = "numpy", name = "dunder" },
  -- type-value (type and object; kb.TYPE_WORDS)
  -- a tensor's .type(dtype) is PyTorch's; `class C(object)` stays allowed (the rule's test)
  { "type", "type-value", from = "numpy", name = "type-value", attribute = false },
  { "object", "type-value", from = "numpy", name = "type-value", attribute = false },
  { "ABCMeta", "type-value", from = "abc" }, { "EnumMeta", "type-value", from = "enum" },
  { "EnumType", "type-value", from = "enum" }, { "make_dataclass", "type-value", from = "dataclasses" },
  { "new_class", "type-value", from = "typing" }, { "mro", "type-value", from = "torch" },
  -- subclass (kb.SUBCLASS_WORDS)
  { "as_subclass", "subclass", from = "torch" }, { "_make_subclass", "subclass", from = "torch" },
  { "_make_wrapper_subclass", "subclass", from = "torch" },
  -- loader (kb.LOADER_WORDS; Triton's load stays allowed: the rule's test)
  { "load", "loader", from = "torch" }, { "load_library", "loader", from = "torch.ops" },
  { "from_file", "loader", from = "torch" }, { "fromfile", "loader", from = "numpy" },
  { "memmap", "loader", from = "numpy" }, { "hub", "loader", from = "torch" },
  { "package", "loader", from = "torch" }, { "serialization", "loader", from = "torch" },
  -- annotation (kb.ANNOTATION_WORDS)
  { "get_type_hints", "annotation", from = "typing" }, { "ForwardRef", "annotation", from = "typing" },
  { "_eval_type", "annotation", from = "typing" }, { "evaluate_forward_ref", "annotation", from = "typing" },
  { "get_annotations", "annotation", from = "typing" },
  -- private (a sample: a library's private names, but kb.PRIVATE_ALLOWED)
  { "_utils", "private", from = "torch" }, { "_dynamo", "private", from = "torch" },
  { "_import_dotted_name", "private", from = "torch._utils" }, { "_ufunc_reconstruct", "private", from = "numpy.core" },
}

-- The forms, each a line: `{w}` the word, `{a}` its module, `{z}` a name of the line's own. The word
-- as a module root is refused by the import rule whatever it is (no allowed root is a refused
-- word); as a part of a module's path it is refused by its own rule, even where it is no module
-- and Python's import would fail (cheaper than knowing which it is).
local FORMS = {
  { "import {w}", "import" }, { "import {w}.sub", "import" }, { "import {w} as {z}", "import" },
  { "from {w} import sub", "import" }, { "import math, {w}", "import" },
  { "import {a}.{w}", "word" }, { "import {a}.{w} as {z}", "word" }, { "import {a}.{w}.sub", "word" },
  { "from {a}.{w} import sub", "word" }, { "import math, {a}.{w}", "word" },
  { "from {a} import {w}", "word" }, { "from {a} import {w} as {z}", "word" }, { "from {a} import sub, {w}", "word" },
  { "from {a} import (sub,\n    {w})", "word", 1 },
  { "{z} = {a}.{w}", "attribute" }, { "{z} = {a}.{w}.sub", "attribute" }, { "{z} = {w}", "name" },
}

describe("kreach.candidate.pylint's refused words, in every form", function()
  it("has every word of the lint's lists in the table", function()
    local have = {}
    for _, w in ipairs(WORDS) do
      assert.is_nil(have[w[1]], w[1] .. " twice")
      have[w[1]] = w[2]
    end
    local lists = { module = kb.FORBIDDEN_MODULES, name = { kb.FORBIDDEN_NAMES, kb.FORBIDDEN_ATTRIBUTES },
                    stream = kb.STREAM_ATTRIBUTES, ["string-attribute"] = { kb.STRING_ATTRIBUTE_NAMES, kb.STRING_ATTRIBUTE_ATTRIBUTES },
                    ["type-value"] = { kb.TYPE_WORDS, { "type", "object" } }, subclass = kb.SUBCLASS_WORDS,
                    loader = kb.LOADER_WORDS, annotation = kb.ANNOTATION_WORDS }
    local missing = {}
    for rule, l in pairs(lists) do
      for _, list in ipairs(type(l[1]) == "table" and l or { l }) do
        for _, w in ipairs(list) do
          -- __import__ is in the name list, and refused as a dunder where it is not a bare name
          if not have[w] or (have[w] ~= rule and w ~= "__import__") then missing[#missing + 1] = rule .. ": " .. w end
        end
      end
    end
    assert.same({}, missing)
  end)

  it("refuses a star import: the names it binds are the module's, which the lint cannot read", function()
    -- `from torch.cuda import *` binds Stream; numpy's binds load, fromfile and memmap
    refused("from torch.cuda import *\ns = Stream()\n", 3, "import", "a star import from 'torch.cuda'")
    refused("import math\nfrom numpy import *\n", 4, "import", "a star import from 'numpy'")
    -- __future__'s names are the compiler's features (another fails to compile), not a module's
    passes("from __future__ import annotations\n")
  end)

  it("refuses the builtins a module holds (enum.bltns), and lets methods named as builtins be", function()
    refused("import enum\nenum.bltns.exec('import os')\n", 4, "module", "the module 'bltns' (an attribute)")
    refused("from enum import bltns\n", 3, "module", "the module 'bltns' (imported from 'enum')")
    -- the builtins as attributes, whatever holds them
    refused("def f(b):\n    return b.exec('x = 1')\n", 4, "name", "the attribute 'exec'")
    refused("def f(b):\n    return b.getattr(torch, 'cuda')\n", 4, "string-attribute", "the attribute 'getattr'")
    -- eval as an attribute only called with no argument (nn.Module.eval()), which the builtin needs
    refused("def f(b):\n    return b.eval('1 + 1')\n", 4, "name", "the attribute 'eval'")
    refused("def f(b):\n    return b.eval(source='1 + 1')\n", 4, "name", "the attribute 'eval'")
    refused("def f(b):\n    e = b.eval\n    return e\n", 4, "name", "the attribute 'eval'")
    passes("m = nn.Identity()\nm.eval()\nn = torch.compile(m)\n")
  end)

  it("lints every honest test candidate ok (tests/candidates/kernelbench/EXPECTED.lua)", function()
    -- all but those refused before the GPU (invalid_candidate, other than by a process the guard
    -- finds when it runs)
    local expected = dofile(DIR .. "EXPECTED.lua")
    local ok, refused_n = 0, 0
    for _, e in ipairs(expected) do
      local v = lint(e.file, tostring(e.problem))
      if e.verdict ~= "invalid_candidate" or e.escapee then
        assert(v == nil, ("%s: %s"):format(e.file, v and v.reason))
        ok = ok + 1
      else
        assert(v and v.verdict == "invalid_candidate", e.file .. " passes the lint")
        refused_n = refused_n + 1
      end
    end
    assert.is_true(ok >= 8 and refused_n >= 5)
  end)

  for _, w in ipairs(WORDS) do
    local word, rule, from = w[1], w[2], w.from
    it(("%s (%s): refused in every form"):format(word, rule), function()
      local lines, want, at, why = {}, {}, 3, {}
      for k, f in ipairs(FORMS) do
        local src = f[1]:gsub("{a}", from):gsub("{z}", "z" .. k):gsub("{w}", word)
        local expect
        if f[2] == "import" then expect = "import"
        elseif f[2] == "word" then expect = rule
        elseif f[2] == "attribute" then if w.attribute == nil then expect = rule else expect = w.attribute end
        else expect = w.name or false end
        -- the refusal is at the statement's first line
        if expect then want[#want + 1] = ("%d %s"):format(at, expect) end
        why[at] = src
        lines[#lines + 1] = src
        at = at + 1 + (f[3] or 0)
      end
      local src = table.concat(lines, "\n") .. "\n"
      local _, report = lint_text(src)
      -- one refusal a line and rule (`torch._utils._import_dotted_name` has two private names)
      local got, seen = {}, {}
      for _, r in ipairs(report.refusals) do
        local k = ("%d %s"):format(r.line, r.rule)
        if not seen[k] then seen[k] = true; got[#got + 1] = k end
      end
      table.sort(want)
      table.sort(got)
      local text = {}
      for i = 3, at - 1 do if why[i] then text[#text + 1] = ("%d: %s"):format(i, why[i]) end end
      assert(table.concat(want, ", ") == table.concat(got, ", "), ("%s: want %s\ngot  %s\nin\n%s"):format(word,
        table.concat(want, ", "), table.concat(got, ", "), table.concat(text, "\n")))
    end)
  end
end)
