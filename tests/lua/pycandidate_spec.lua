-- KernelBench-format candidates, the parts that need no GPU: the Python worker's seal (its
-- Landlock rules, and a ruleset a python3 started with it applies to itself), the build
-- directories keyed by source, the poison words, the cleaning of a failed build's log, the
-- KernelBench verdict of a check, and the phase limits of a job that runs one.
-- (tests/lua/gpu/kernelbench_candidates_spec.lua judges the test candidates on the GPU.)
local pyc = require "kreach.candidate.python"
local seal = require "kreach.run.seal"
local proc = require "kreach.core.proc"
local protocol = require "kreach.run.protocol"
local evaluation = require "kreach.results.evaluation"
local support = require "support"

describe("kreach.candidate.python", function()
  it("fills free memory with each output dtype's poison, as 32-bit signed words", function()
    assert.equals(0x7FA5A5A5, pyc.poison_word("f32"))
    assert.equals(0x7FA57FA5, pyc.poison_word("bf16"))
    assert.equals(0x7D257D25, pyc.poison_word("f16"))
    assert.equals(0xA5A5A5A5 - 0x100000000, pyc.poison_word("i32"))
  end)

  it("keeps a failed build's error lines, without ninja's commands or the build directory's path", function()
    local dirs = { extensions = "/cache/torch_extensions/abc" }
    local log = table.concat({
      "[1/3] /usr/local/cuda/bin/nvcc -c /cache/torch_extensions/abc/x/cuda.cu -o cuda.cuda.o",
      "FAILED: cuda.cuda.o",
      "/cache/torch_extensions/abc/x/cuda.cu(4): error: expected a \";\"",
      "      if (i < n) y[i] = fmaxf(x[i], 0.f);",
      "      ^",
      "1 error detected in the compilation of \"/cache/torch_extensions/abc/x/cuda.cu\".",
      "ninja: build stopped: subcommand failed.",
    }, "\n")
    local out = pyc.build_log(log, dirs)
    assert.truthy(out:find('<build>/x/cuda.cu(4): error: expected a ";"', 1, true))
    assert.truthy(out:find("if (i < n)", 1, true))
    assert.falsy(out:find("[1/3]", 1, true))
    assert.falsy(out:find("/cache/torch_extensions", 1, true))
    -- no error line at all: its end, bounded
    local plain = pyc.build_log(("x"):rep(20000), dirs)
    assert.is_true(#plain <= pyc.MAX_LOG_BYTES + 64)
  end)

  it("names a failure by its kind: a build is compile_error, a hang timeout, a CUDA error runtime_error", function()
    assert.equals("compile_error", pyc.failure("c.py", "Error building extension", "build", "x.cu(1): error: no", {}, "loading it").verdict)
    local t = pyc.failure("c.py", "the Python worker did not answer within 60 s", "worker", nil, {}, "calling it")
    assert.equals("timeout", t.verdict)
    -- the phase is in the reason (the KernelBench export counts a hang while loading as not compiled)
    assert.equals("c.py: the Python worker did not answer within 60 s while calling it", t.reason)
    assert.equals("runtime_error", pyc.failure("c.py", "the Python worker ended: Segmentation fault", "worker", nil, {}, "calling it").verdict)
    assert.equals("runtime_error", pyc.failure("c.py", "AcceleratorError: CUDA error: an illegal memory access", "cuda", nil, {}, "calling it").verdict)
    local v = pyc.failure("c.py", "TypeError: forward() takes 1 positional argument", "python", nil, {}, "calling it")
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("c%.py: while calling it: TypeError", v.reason)
    assert.equals("invalid_candidate", pyc.failure("c.py", "its parameters are not the problem's", "params", nil, {}, "loading it").verdict)
    -- no ninja here: the machine's fault, not the candidate's
    local env = pyc.failure("c.py", "RuntimeError: Ninja is required to load C++ extensions", "environment", nil, {}, "loading it")
    assert.equals("runtime_error", env.verdict)
    assert.matches("not the candidate's fault", env.reason)
  end)
end)

describe("the Python worker's seal", function()
  it("reads and runs the system's and the interpreter's files, writes only its own directories, and reaches no /proc or home", function()
    local d = support.tmpdir()
    local rules = seal.python_rules({ dirs = { "/usr/lib/python3" }, write = { d } })
    local by = {}
    for _, r in ipairs(rules) do by[r.path] = r.access end
    assert.equals("exec", by["/usr"])
    assert.equals("write", by[d])
    assert.is_nil(by["/proc"])
    assert.is_nil(by["/root"])
    assert.is_nil(by["/home"])
    assert.is_nil(by["/etc"])
    assert.equals("read", by["/etc/ld.so.cache"])
    for path, access in pairs(by) do
      if access == "write" then assert.is_true(path == d or path == os.getenv("KREACH_WORKER_DIR"), path) end
    end
    os.remove(d)
  end)

  it("keys a candidate's build directories by its source, under the compile cache", function()
    local cache = support.tmpdir()
    local d = (function()
      -- seal.cache_dir reads KREACH_CACHE_DIR: run in a child with it set
      local cmd = ("KREACH_CACHE_DIR=%q %q -e %q"):format(cache, require("kreach").executable(),
        [[local s = require "kreach.run.seal"; local d = assert(s.python_build_dirs("k1")); print(d.extensions); print(d.triton)]])
      local p = io.popen(cmd)
      local out = p:read("a")
      p:close()
      return out
    end)()
    assert.truthy(d:find(cache .. "/torch_extensions/k1", 1, true), d)
    assert.truthy(d:find(cache .. "/triton/k1", 1, true), d)
    assert.equals("directory", require("lfs").attributes(cache .. "/torch_extensions/k1", "mode"))
    os.execute(("rm -rf %q"):format(cache))
  end)

  it("is a Landlock ruleset that a python3 started with it applies to itself", function()
    if seal.landlock() < 1 then
      print("no Landlock here: " .. select(2, seal.landlock()))
      return
    end
    local d = support.tmpdir()
    support.spit(d .. "/in.txt", "inside\n")
    local fd = assert(require("kreach.core.seal").ruleset({ { path = "/usr", access = "exec" }, { path = d, access = "write" } }))
    local w = assert(proc.spawn({ "python3", "-I", "-c", [[
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0 and libc.syscall(446, 3, 0) == 0, ctypes.get_errno()
def can(f):
    try:
        f(); return "yes"
    except OSError as e:
        return "no"
print(can(lambda: open(sys.argv[1] + "/in.txt").read()), can(lambda: open(sys.argv[1] + "/out.txt", "w").write("x")),
      can(lambda: open("/etc/hostname").read()), can(lambda: os.listdir("/proc")))
]], d }, { fd3 = fd }))
    seal.close_fd(fd)
    local line = w:read_line(30)
    w:wait()
    local err = w:stderr()
    w:free()
    assert.equals("yes yes no no", line, err)
    os.execute(("rm -rf %q"):format(d))
  end)
end)

describe("a check of a KernelBench-format candidate", function()
  it("gives its phases the time a build and a Triton compile take", function()
    local t = protocol.timeouts("check", { python = { python = "python3", dirs = {} } }, 20)
    assert.is_true(t.load >= 900 and t.setup >= 300 and t["trial1.forward"] >= 600)
    assert.is_nil(protocol.timeouts("check", {}, 20))
    local tt = protocol.timeouts("time", { python = { python = "python3" }, timing = { budget_s = 2, warmup_s = 1 } }, 20)
    assert.is_true(tt.load >= 900 and tt.timing >= 600)
  end)

  it("reports KernelBench's allclose beside the verdict: pass only when every trial passed", function()
    assert.equals("pass", evaluation.kernelbench_verdict({ trials = { { kernelbench = { pass = true } }, { kernelbench = { pass = true } } } }))
    assert.equals("fail", evaluation.kernelbench_verdict({ trials = { { kernelbench = { pass = true } }, { kernelbench = { pass = false } } } }))
    assert.is_nil(evaluation.kernelbench_verdict({ trials = {} }))
    assert.is_nil(evaluation.kernelbench_verdict(nil))
  end)
end)
