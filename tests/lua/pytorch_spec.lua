-- kreach.pytorch without a GPU: the Python worker shipped in the binary compiles, the search
-- for a python3 with CUDA PyTorch says why it found none, and the options that ask for
-- PyTorch are checked once. (tests/lua/gpu/pytorch_spec.lua runs the worker on the GPU.)
local support = require "support"
local pytorch = require "kreach.pytorch"
local ev = require "kreach.run.evaluate"
local errors = require "kreach.errors"

describe("kreach.pytorch", function()
  it("embeds the Python worker, and it is valid Python", function()
    local src = package.loaded["kreach.embedded_files"]["kreach/torch_worker.py"]
    assert.is_string(src)
    assert.truthy(src:find("def call(c):", 1, true))
    local path = support.tmpfile(".py")
    local f = assert(io.open(path, "w")); f:write(src); f:close()
    local ok = os.execute(("python3 -c 'import sys; compile(open(sys.argv[1]).read(), \"torch_worker.py\", \"exec\")' %q"):format(path))
    os.remove(path)
    assert.is_true(ok)
  end)

  it("says why a python3 cannot be used", function()
    local r, why = pytorch.find("/nonexistent/python3")
    assert.is_nil(r)
    assert.truthy(why:find("/nonexistent/python3", 1, true))
    -- Debian's python3-torch has no CUDA: found, and refused with the reason
    local r2, why2 = pytorch.find("python3")
    if r2 then
      print("a CUDA PyTorch is here:", r2.torch, r2.device)
    else
      print(why2)
      assert.truthy(why2:find("without a CUDA device", 1, true) or why2:find("cannot import torch", 1, true))
    end
  end)

  it("starts the Python worker, which answers on its protocol line why it cannot serve here", function()
    local s, why = pytorch.start{ python = "python3" }
    if s then
      -- a machine with CUDA PyTorch: the worker says what it runs
      print("a CUDA PyTorch is here:", s.info.torch, s.info.device, "cudnn TF32", s.info.cudnn_tf32)
      assert.is_false(s.info.cudnn_tf32)
      s:close()
      return
    end
    print(why)
    -- Debian's CPU PyTorch (CI), or no PyTorch at all: the worker's own first answer
    assert.truthy(why:find("has no CUDA device here", 1, true) or why:find("cannot start PyTorch: ModuleNotFoundError", 1, true))
    local none, nwhy = pytorch.start{ python = "/nonexistent/python3" }
    assert.is_nil(none)
    assert.truthy(nwhy:find("/nonexistent/python3", 1, true) or nwhy:find("the Python worker ended", 1, true))
  end)

  it("refuses --torch-compile or --torch-tf32 with --no-torch", function()
    local ok, e = pcall(ev.resolve_pytorch, { enabled = false, compile = true })
    assert.is_false(ok)
    assert.equals(errors.STATUS.usage, errors.status(e))
    assert.truthy(errors.message(e):find("--no-torch leaves nothing for --torch-compile", 1, true))
    assert.is_nil(ev.resolve_pytorch({ enabled = false }))
    local none, note = ev.resolve_pytorch({ enabled = true }, { mode = "graph" })
    assert.is_nil(none)
    assert.truthy(note:find("not timed in graph mode", 1, true))
  end)
end)
