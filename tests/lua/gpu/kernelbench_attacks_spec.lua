-- The in-process timing attacks on KernelBench-format candidates (tests/candidates/kernelbench/
-- ATTACKS.lua, issue 33) under `kreach eval --no-lint`, beside the honest PyTorch ReLU
-- (019_relu_torch.py) in the same run: none gets a fast `correct`. Prints the table of the
-- closing note: attack, verdict or refusal, time reported, how it was measured.
local kreach = require "kreach"
local support = require "support"
local pytorch = require "kreach.pytorch"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local dir = here .. "/../../candidates/kernelbench"
local attacks = dofile(dir .. "/ATTACKS.lua")
local found, why = pytorch.find()
if not found then print("skipped: no python3 with CUDA PyTorch: " .. tostring(why)) end
local it_py = found and it or pending

local function eval(files)
  local cmd = { ("%q eval %d --no-lint --json --force --db %q --timeout 120"):format(kreach.executable(), attacks.problem,
    support.tmpdir() .. "/attacks.db") }
  for _, f in ipairs(files) do cmd[#cmd + 1] = ("%q"):format(dir .. "/" .. f) end
  for k, v in pairs(attacks.sizes) do cmd[#cmd + 1] = ("--size %s=%d"):format(k, v) end
  local p = io.popen(table.concat(cmd, " ") .. " 2>&1")
  local out = p:read("a")
  p:close()
  local line = out:match("(%b{})%s*$")
  local ok, res = pcall(require("cjson").decode, line or "")
  assert(ok and type(res) == "table" and res.evaluations, "kreach eval printed no result:\n" .. out)
  local by = {}
  for _, r in ipairs(res.evaluations) do by[(r.candidate_path or ""):match("([^/]+)$")] = r end
  return by, out
end

describe("in-process timing attacks on KernelBench-format candidates", function()
  it_py("none of them gets a fast correct, with the lint off", function()
    local files = { "019_relu_torch.py" }
    for _, a in ipairs(attacks) do files[#files + 1] = a.file end
    local by, out = eval(files)
    local honest = by["019_relu_torch.py"]
    assert(honest and honest.verdict == "correct", "the honest PyTorch ReLU is not correct:\n" .. out)
    local rows = { ("  %-40s %-18s %-24s %10s %8s %6s  %s"):format("attack", "file", "verdict", "ms", "vs eager", "other", "time method; reason") }
    local function row(label, r)
      rows[#rows + 1] = ("  %-40s %-18s %-24s %10s %8s %6s  %s"):format(label, (r.candidate_path or ""):match("adv_([%w_]+)%.py$") or "torch",
        r.verdict,
        r.candidate_ms and ("%.4f"):format(r.candidate_ms) or "-", r.speedup_pytorch and ("%.3f"):format(r.speedup_pytorch) or "-",
        tostring(r.other_stream_calls or "-"), r.verdict == "correct" and tostring(r.time_method or "-")
          or tostring(r.reason or ""):gsub("\n", " "):sub(1, 160))
    end
    row("(honest) PyTorch's ReLU", honest)
    local failures = {}
    for _, a in ipairs(attacks) do
      local r = by[a.file]
      assert(r, a.file .. " was not evaluated:\n" .. out)
      row(a.attack, r)
      local allowed = a.verdicts[r.verdict]
      local why = ("%s (%s): %s %s"):format(a.file, a.attack, r.verdict, tostring(r.reason):sub(1, 300):gsub("\n", " "))
      if not allowed then
        failures[#failures + 1] = "not an allowed verdict: " .. why
      elseif r.verdict == "correct" then
        local sp = r.speedup_pytorch
        if not sp or sp > attacks.honest then
          failures[#failures + 1] = ("a fast correct (speedup over eager %s, at most %g allowed): %s"):format(tostring(sp), attacks.honest, why)
        end
        if allowed == "streams" and not ((r.other_stream_calls or 0) > 0) then
          failures[#failures + 1] = "correct without its other streams seen: " .. why
        end
      end
      io.stderr:write("  ", why, "\n")
    end
    print(table.concat(rows, "\n"))
    assert.are.same({}, failures)
  end)
end)
