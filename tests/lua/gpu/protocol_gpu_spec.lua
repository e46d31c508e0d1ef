-- The timed protocol's GPU-only decisions, end to end through `kreach eval` (issue 34): what
-- tests/lua/protocol_*_spec.lua check on the host device with a recording device, here with
-- real kernels on the GPU.
--   - a candidate that writes its outputs only on the first call with each buffer is caught by
--     the poison kreach writes into the candidate's outputs before each timed call (hot mode:
--     the timed calls repeat on the same sets);
--   - a slow candidate's speedup over kreach's baseline reads below 1, its interval included.
local kreach = require "kreach"
local output = require "kreach.atomic"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local dir = here .. "/../../candidates"

local function eval(file, extra)
  local tmp = assert(output.tmpdir())
  local cmd = ("%q eval 19 %q --size batch_size=64 --size dim=4099 --no-torch --json --force --db %q %s 2>&1")
    :format(kreach.executable(), dir .. "/" .. file, tmp .. "/r.db", extra or "")
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  output.remove_tree(tmp)
  local line = out:match("(%b{})%s*$")
  local ok, res = pcall(require("cjson").decode, line or "")
  assert(ok and type(res) == "table" and res.evaluations and res.evaluations[1], "kreach eval printed no result:\n" .. out)
  local e = res.evaluations[1]
  io.stderr:write(("  %s %s: %s %s speedup %s [%s, %s]\n"):format(file, extra or "", e.verdict,
    tostring(e.reason), tostring(e.speedup), tostring(e.speedup_lo), tostring(e.speedup_hi)))
  return e, out
end

local function has(list, want)
  for _, v in ipairs(type(list) == "table" and list or { list }) do
    if tostring(v):find(want, 1, true) then return true end
  end
  return false
end

describe("the timed protocol on the GPU", function()
  it("poisons the candidate's outputs before each timed call: writing only on a set's first call is incomplete_write in hot mode", function()
    local e, out = eval("adv_first_call_per_set.lua", "--mode hot")
    assert.are.equal("incorrect", e.verdict, out)
    assert.is_true(has(e.reason, "incomplete_write"), out)
  end)

  it("reads a slow candidate's speedup below 1, the whole interval included", function()
    local e, out = eval("slow_relu.lua", "--mode hot")
    assert.are.equal("correct", e.verdict, out)
    assert.is_number(e.speedup, out)
    assert.is_true(e.speedup < 1, out)
    assert.is_true(e.speedup_lo <= e.speedup and e.speedup <= e.speedup_hi, out)
    assert.is_true(e.speedup_hi < 1, out)
  end)

  it("reads the honest float4 ReLU's interval around its ratio", function()
    local e, out = eval("019_relu.lua", "--mode hot")
    assert.are.equal("correct", e.verdict, out)
    assert.is_true(e.speedup_lo <= e.speedup and e.speedup <= e.speedup_hi, out)
  end)
end)
