-- kreach.problem.listing's tables (kreach list) from hand-made listings: the suites' lines in the
-- names' order with a suite that does not load said in place, the problems' columns with a name
-- too long for its column cut with "...", a problem that does not load and the problems to come.
local listing = require "kreach.problem.listing"

describe("kreach.problem.listing", function()
  it("writes the suites' table in the names' order", function()
    local t = listing.suites_text{ names = { "a", "bad", "c" },
      suites = { { name = "a", problems = 1, pending = 0, description = "one" },
                 { name = "c", problems = 3, pending = 2, description = "three" } },
      errors = { { name = "bad", why = "timed out" } } }
    assert.equals("a            1 problem   one\n"
               .. "bad        does not load: timed out\n"
               .. "c            3 problems (+2 to come)  three\n", t)
  end)

  it("cuts a long name, keeps the inputs' columns, says what did not load", function()
    local long = ("n"):rep(120)
    local t = listing.problems_text{ suite = { name = "s", description = "d", pending = { 7, 8 } },
      rows = { { id = 1, name = long, category = "elementwise", bytes = 2e9, inputs = "x[4096]" } },
      errors = { { id = 2, path = "/p/002_bad.lua", why = "boom" } }, loaded = { true, false } }
    local lines = {}
    for l in t:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equals("s: d", lines[1])
    assert.equals(5, #lines)
    -- name column: 100 - 31 fixed - 7 (the inputs' longest) = 62 wide, the name cut to 59 and "..."
    assert.equals(("   1  %s... elementwise      2.000  x[4096]"):format(("n"):rep(59)), lines[3])
    assert.matches("^   2  002_bad%.lua +does not load: boom$", lines[4])
    assert.equals("to come: 7, 8", lines[5])
  end)

  it("shows a subcategory after its category, the column as wide as the longest", function()
    local t = listing.problems_text{ suite = { name = "s", description = "d", pending = {} },
      rows = { { id = 1, name = "a", category = "convolution", subcategory = "transposed 2D", bytes = 1e9, inputs = "x" },
               { id = 2, name = "b", category = "matmul", bytes = 1e9, inputs = "y" } },
      errors = {}, loaded = { true, true } }
    local lines = {}
    for l in t:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equals("  id  name category                        GB  inputs", lines[2])
    assert.equals("   1  a    convolution/transposed 2D    1.000  x", lines[3])
    assert.equals("   2  b    matmul                       1.000  y", lines[4])
  end)
end)
