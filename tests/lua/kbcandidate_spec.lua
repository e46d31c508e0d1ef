-- KernelBench-format candidates without a GPU (kreach.kbcandidate): the static lint of the files
-- in tests/candidates/kernelbench/, and how eval and check treat them until the Python worker
-- exists. Needs python3 (Debian's; KREACH_PYTHON names another).
--
-- Every rule of the lint (kb.RULES) has its test below, each refusal asserted by its line and its
-- rule id; the routes of the security review (issue 33) are refused; and no honest candidate is:
-- the test files, KernelBench's own level-1 models written as a ModelNew, the worked example of
-- `kreach generate --format python`'s prompt and typical generated candidates written here.
local kreach = require "kreach"
local kb = require "kreach.kbcandidate"
local ev = require "kreach.eval"
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

describe("kreach.kbcandidate", function()
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

  it("is planned by eval beside .lua candidates, by the problem id of its name", function()
    local items, skipped = ev.plan("kernelbench-l1", { DIR .. "019_relu_torch.py", "tests/candidates/019_relu.lua" })
    assert.equals(2, #items)
    assert.equals(0, #skipped)
    assert.equals(19, items[1].problem_id)
    assert.equals(19, items[2].problem_id)
  end)
end)
