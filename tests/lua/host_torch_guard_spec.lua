-- The Python worker's guards that need no GPU (scripts/kreach/torch_guard.py), run with Debian's
-- CPU torch on the adversarial candidates of issue 33 (tests/candidates/kernelbench/019_relu_adv_*):
-- an output must be exactly a torch.Tensor (the lazy result's subclass is refused), strided, on
-- the device, of the problem's shape and dtype; the harness's functions, kept when the worker
-- starts, are found rebound after a candidate's module rewrote them (the timer attack). The
-- worker itself, the guard's C side and the GPU are tests/lua/gpu/kernelbench_attacks_spec.lua's.
local cjson = require "cjson"
local pytorch = require "kreach.pytorch"
local support = require "support"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local kb = here .. "/../candidates/kernelbench"

describe("the Python worker's guards on the CPU", function()
  local PYTHON = support.host_python_or_fail(it)
  if not PYTHON then return end

  -- runs torch_guard.py and then `code` (Python that prints one JSON object) in python3
  local function py(code)
    local path = support.tmpfile(".py")
    support.spit(path, pytorch.script_source("torch_guard.py") .. "\nimport json, torch, types\n" .. code)
    local p = io.popen(("%s %q 2>&1"):format(PYTHON, path))
    local out = p:read("a")
    p:close()
    local ok, res = pcall(cjson.decode, out:match("(%b{})%s*$") or "")
    assert(ok and type(res) == "table", "python3 printed no JSON:\n" .. out)
    return res
  end

  local function load_candidate(file)
    return ("src = open(%q).read()\nmod = types.ModuleType('cand')\nexec(compile(src, %q, 'exec'), mod.__dict__)\n"):format(
      kb .. "/" .. file, file)
  end

  it("refuses an output that is not exactly a strided torch.Tensor of the problem's shape and dtype", function()
    local r = py(load_candidate("019_relu_adv_lazy.py") .. [[
x = torch.randn(4, 5)
y = mod.ModelNew()(x)
t = torch.empty(4, 5)
t.copy_(y)  # the attack works on the CPU: the values appear only at the copy
def why(v, shape=(4, 5), dtype=torch.float32):
    return output_problem(v, torch.Tensor, torch.strided, shape, dtype, "cpu")
print(json.dumps({
    "lazy_is_tensor": torch.is_tensor(y), "lazy_copied_right": bool(torch.equal(t, torch.relu(x))),
    "lazy": why(y), "plain": why(torch.relu(x)), "sparse": why(x.to_sparse()),
    "shape": why(x, (4, 6)), "dtype": why(x, (4, 5), torch.float64), "number": why(3.0),
    "device": output_problem(x, torch.Tensor, torch.strided, (4, 5), torch.float32, "cuda")}))
]])
    -- the attack is real: a tensor to torch, and right once copied
    assert.is_true(r.lazy_is_tensor)
    assert.is_true(r.lazy_copied_right)
    assert.equals("a subclass of torch.Tensor (cand.LazyReLU), not a torch.Tensor", r.lazy)
    assert.equals(cjson.null, r.plain)
    assert.equals("a torch.sparse_coo tensor, not a strided one", r.sparse)
    assert.equals("torch.float32 [4, 5], the problem's is torch.float32 [4, 6]", r.shape)
    assert.equals("torch.float32 [4, 5], the problem's is torch.float64 [4, 5]", r.dtype)
    assert.equals("a float, not a tensor", r.number)
    assert.equals("on cpu, not on the GPU", r.device)
  end)

  it("finds the harness's functions rebound by a candidate's module (the timer attack)", function()
    local r = py([[
keep = Integrity()
keep.keep(torch.cuda.Event, "elapsed_time", "torch.cuda.Event.elapsed_time")
keep.keep(torch.Tensor, "copy_", "torch.Tensor.copy_")
keep.keep(json, "dumps", "json.dumps")
before = keep.changed()
]] .. load_candidate("019_relu_adv_timer.py") .. [[
after_timer = keep.changed()
type.__setattr__(torch.Tensor, "copy_", lambda a, b: a)
json.dumps = lambda o: "{}"
after_all = keep.changed()
print(__import__("json").JSONEncoder().encode({"before": before, "after_timer": after_timer, "after_all": after_all}))
]])
    assert.are.same({}, r.before)
    assert.are.same({ "torch.cuda.Event.elapsed_time" }, r.after_timer)
    assert.are.same({ "torch.cuda.Event.elapsed_time", "torch.Tensor.copy_", "json.dumps" }, r.after_all)
  end)
end)
