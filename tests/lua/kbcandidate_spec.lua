-- KernelBench-format candidates without a GPU (kreach.kbcandidate): the static lint of the files
-- in tests/candidates/kernelbench/, and how eval and check treat them until the Python worker
-- exists. Needs python3 (Debian's; KREACH_PYTHON names another).
local kreach = require "kreach"
local kb = require "kreach.kbcandidate"
local ev = require "kreach.eval"
local support = require "support"

local DIR = "tests/candidates/kernelbench/"

local function lint(file, problem)
  return kb.lint(DIR .. file, kreach.load_problem(problem or "19"))
end

describe("kreach.kbcandidate", function()
  it("passes well-formed candidates: load_inline CUDA, Triton and plain PyTorch", function()
    for _, f in ipairs({ "019_relu_load_inline.py", "019_relu_triton.py", "019_relu_torch.py" }) do
      local v, report = lint(f)
      assert.is_nil(v, f .. ": " .. tostring(v and v.reason))
      assert.equals("kernelbench", report.kind)
      assert.is_number(report.model_new.line)
      assert.equals(0, report.init_args)
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

  it("refuses imports and names that reach the host, each with its line", function()
    local v = lint("bad_escape.py")
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("bad_escape%.py:2: import of 'os' is not allowed", v.reason)
    assert.matches("bad_escape%.py:3: import of 'subprocess' is not allowed", v.reason)
    assert.matches("bad_escape%.py:7: the name 'exec' is not allowed", v.reason)
    assert.matches("bad_escape%.py:14: the attribute '__builtins__' is not allowed", v.reason)
    assert.matches("bad_escape%.py:17: the attribute 'system' is not allowed", v.reason)
  end)

  it("refuses the modules torch's namespace holds, and streams of the candidate's own", function()
    local v = lint("bad_worker_reach.py")
    assert.equals("invalid_candidate", v.verdict)
    for _, want in ipairs({
      ":6: the module 'sys' %(imported from 'torch'%) is not allowed",
      ":7: import of 'torch.multiprocessing' %(the module 'multiprocessing'%) is not allowed",
      ":10: the module 'os' %(an attribute%) is not allowed",
      ":11: the attribute 'Stream' is not allowed",
      ":19: the attribute '_sleep' is not allowed",
      ":20: the attribute 'stream' is not allowed",
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
