-- tests/globals.lua, the checker of undeclared globals, on files made here: it must name the
-- file and line of a global read and a global write, report a file that does not compile,
-- leave tests/candidates alone, and pass clean files (locals, upvalues, Lua's and busted's
-- globals).
local kreach = require "kreach"
local support = require "support"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
local checker = here .. "/../globals.lua"

local function check(root) return support.sh(("%q %q %q"):format(kreach.executable(), checker, root)) end

local function tree(files)
  local root = support.tmpdir()
  for name, text in pairs(files) do
    local dir = (root .. "/" .. name):match("^(.*)/[^/]*$")
    os.execute(("mkdir -p %q"):format(dir))
    support.spit(root .. "/" .. name, text)
  end
  return root
end

describe("tests/globals.lua", function()
  it("passes files that use only locals, upvalues and the globals of Lua and busted", function()
    local out, rc = check(tree{
      ["a.lua"] = 'local M = {}\nlocal CASES = { 1 }\nfunction M.f() return #CASES, math.pi, string.rep("x", 2) end\nreturn M\n',
      ["b_spec.lua"] = 'describe("x", function()\n  before_each(function() end)\n  it("y", function() assert.is_true(true) end)\n  pending("z")\nend)\n',
      ["tests/candidates/broken.lua"] = "this is ( not Lua\n",
    })
    assert.equals(0, rc, out)
    assert.matches("globals ok: 2 files", out)
  end)

  it("names the file and line of each global read or set, and a file that does not compile", function()
    local root = tree{
      ["spec.lua"] = 'local support = {}\ndescribe("x", function()\n  for _, c in ipairs(CASES) do print(c) end\nend)\n',
      ["m.lua"] = 'local M = {}\nfunction helper() return 1 end\nM.x = kreach.version\nreturn M\n',
      ["bad.lua"] = "local x = (\n",
    }
    local out, rc = check(root)
    assert.equals(1, rc, out)
    assert.matches("spec%.lua:3: reads the global 'CASES'", out)
    assert.matches("m%.lua:2: sets the global 'helper'", out)
    assert.matches("m%.lua:3: reads the global 'kreach'", out)
    assert.matches("bad%.lua: does not compile: .*bad%.lua:2:", out)
    assert.matches("globals: 4 findings in 3 files", out)
  end)

  it("says what is missing when there is no luac5.4", function()
    local out, rc = support.sh(("LUAC=/nonexistent/luac %q %q %q"):format(kreach.executable(), checker,
      tree{ ["a.lua"] = "return 1\n" }))
    assert.equals(2, rc, out)
    assert.matches("is not Lua 5%.4's compiler", out)
  end)
end)
