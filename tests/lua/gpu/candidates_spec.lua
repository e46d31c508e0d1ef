-- The test candidates (tests/candidates/EXPECTED.lua) under `kreach check`: each gets its
-- expected verdict, and the correct ones are never rejected over their repetitions (each
-- repetition with another seed, so other inputs). Every check runs the real protocol in its
-- own worker process, as a user's would.
local kreach = require "kreach"
local support = require "support"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local dir = here .. "/../../candidates"
local expected = dofile(dir .. "/EXPECTED.lua")

local function check(e, seed)
  local cmd = { ("%q check %d %q --json --seed %d --timeout 20"):format(kreach.executable(), e.problem,
    dir .. "/" .. e.file, seed) }
  for k, v in pairs(e.sizes or {}) do cmd[#cmd + 1] = ("--size %s=%d"):format(k, v) end
  if e.dtype then cmd[#cmd + 1] = "--dtype " .. e.dtype end
  local res = support.json_result(table.concat(cmd, " "))
  return res
end

local function sizes_str(s)
  local t = {}
  for k, v in pairs(s or {}) do t[#t + 1] = k .. "=" .. v end
  table.sort(t)
  return #t > 0 and table.concat(t, " ") or "shipped sizes"
end

describe("test candidates", function()
  for _, e in ipairs(expected) do
    it(("%s on problem %d (%s, %s): %s%s"):format(e.file, e.problem, e.dtype or "f32", sizes_str(e.sizes), e.verdict,
      e.reasons and (" / " .. table.concat(e.reasons, " or ")) or ""), function()
      for r = 1, e.repeats or 1 do
        local res = check(e, r)
        local v = res.verdict
        local why = ("repetition %d (seed %d): got %s (%s)"):format(r, r, v.verdict, tostring(v.reason))
        io.stderr:write(("  %s %d seed %d: %s %s\n"):format(e.file, e.problem, r, v.verdict, tostring(v.reason):sub(1, 160)))
        assert.are.equal(e.verdict, v.verdict, why)
        if e.reasons then
          local hit = false
          for _, reason in ipairs(e.reasons) do if v.reason == reason then hit = true end end
          assert.is_true(hit, why)
        end
        if e.detail_match then
          assert.is_truthy(tostring(v.reason):find(e.detail_match) or tostring(v.detail):find(e.detail_match), why)
        end
      end
    end)
  end
end)
