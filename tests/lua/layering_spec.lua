-- tests/layering.lua, the checker of the Lua library's layers, on a small tree of modules made
-- here: it must find each kind of violation, name its file and line, and pass a clean tree.
local kreach = require "kreach"
local support = require "support"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
local checker = here .. "/../layering.lua"

local function tree(files)
  local root = support.tmpdir()
  for _, d in ipairs({ "cmd", "run", "judge", "results", "candidate", "problem" }) do
    os.execute(("mkdir -p %q"):format(root .. "/kreach/" .. d))
  end
  for name, text in pairs(files) do support.spit(root .. "/kreach/" .. name, text) end
  return root
end

local function check(root) return support.sh(("%q %q %q"):format(kreach.executable(), checker, root)) end

-- enough modules for the checker to believe it has the library (it refuses fewer than 21)
local function filler(files)
  for i = 1, 21 do files[("m%02d.lua"):format(i)] = 'local text = require "kreach.text"\nreturn {}\n' end
  files["text.lua"] = "return {}\n"
  return files
end

describe("tests/layering.lua", function()
  it("passes a tree whose requires are all at the top, acyclic and facade-free", function()
    local out, rc = check(tree(filler{
      ["init.lua"] = 'local a = require "kreach.a"\nreturn { a = a }\n',
      ["a.lua"] = 'local text = require "kreach.text"\nlocal M = {}\nfunction M.f() return text end\nreturn M\n',
      ["cmd/x.lua"] = 'local kreach = require "kreach"\nreturn {}\n',
    }))
    assert.equals(0, rc, out)
    assert.matches("layering ok", out)
  end)

  it("finds a require after a function, one in a block, the facade in a module, and a cycle", function()
    local out, rc = check(tree(filler{
      ["init.lua"] = "return {}\n",
      ["a.lua"] = 'local M = {}\nfunction M.f() return 1 end\nlocal b = require "kreach.b"\nreturn M\n',
      ["b.lua"] = 'local a = require "kreach.a"\nlocal k = require "kreach"\nlocal function g()\n  return require("kreach.text")\nend\nreturn {}\n',
      ["c.lua"] = 'local M = {}\nfunction M.load(n) return require("kreach." .. n) end\nreturn M\n',
    }))
    assert.equals(1, rc, out)
    assert.matches("kreach/a%.lua:3: require \"kreach%.b\" after the file's first function", out)
    assert.matches("kreach/b%.lua:2: the internal module kreach%.b requires the facade", out)
    assert.matches("kreach/b%.lua:4: require \"kreach%.text\" inside a block", out)
    assert.matches("kreach/c%.lua:2: a require with a computed name", out)
    assert.matches("require cycle: kreach%.a %-> kreach%.b %-> kreach%.a", out)
  end)
  it("keeps the stages' borders: run/ takes only judge's policy, results/ neither judge/ nor candidate/, and only cmd/ requires cmd/", function()
    local out, rc = check(tree(filler{
      ["init.lua"] = "return {}\n",
      ["judge/policy.lua"] = "return {}\n",
      ["judge/measure.lua"] = "return {}\n",
      ["candidate/init.lua"] = "return {}\n",
      ["run/evaluate.lua"] = 'local policy = require "kreach.judge.policy"\nlocal measure = require "kreach.judge.measure"\nreturn {}\n',
      ["results/store.lua"] = 'local c = require "kreach.candidate"\nlocal m = require "kreach.judge.measure"\nreturn {}\n',
      ["cmd/eval.lua"] = 'local e = require "kreach.run.evaluate"\nreturn {}\n',
      ["cmd/check.lua"] = 'local e = require "kreach.cmd.eval"\nreturn {}\n',
      ["a.lua"] = 'local e = require "kreach.cmd.eval"\nreturn {}\n',
    }))
    assert.equals(1, rc, out)
    assert.matches("kreach/run/evaluate%.lua:2: kreach%.run%.evaluate requires kreach%.judge%.measure: run/ may require only the options", out)
    assert.is_nil(out:find("evaluate.lua:1:", 1, true), out) -- the policy is allowed
    assert.matches("kreach/results/store%.lua:1: kreach%.results%.store requires kreach%.candidate: results/ never requires candidate/", out)
    assert.matches("kreach/results/store%.lua:2: kreach%.results%.store requires kreach%.judge%.measure: results/ never requires judge/", out)
    assert.matches("kreach/a%.lua:1: kreach%.a requires kreach%.cmd%.eval: nothing outside cmd/ requires a command", out)
    assert.is_nil(out:find("cmd/check.lua", 1, true), out) -- a command may require another
    assert.matches("4 problems", out)
  end)
end)
