-- Loading problem and suite files: a file that calls os.exit, loops for ever or repeats an id
-- is a load error naming the file (and the line), never a silent exit or a hang; sizes that
-- overflow 64 bits and values that are not finite are refused; a problem's name is a plain file
-- name. Needs no GPU.
local problem = require "kreach.problem"
local errors = require "kreach.errors"
local support = require "support"

local GOOD = support.GOOD_PROBLEM

local write = support.write

local function variant(from, to)
  local text, n = GOOD:gsub(from, to)
  assert(n == 1, "pattern not found: " .. from)
  return text
end

-- fn(...) must raise a kreach.errors user error; returns it
local function user_error(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  assert.is_true(errors.is(err), "not a user error: " .. tostring(err))
  return err
end

-- a problems root with one collection `c` (its files in c/p) and the given suites, used as the
-- only root while fn runs
local function with_root(suites, problems, fn)
  local root = support.tmpdir()
  assert(os.execute("mkdir -p '" .. root .. "/c/suites' '" .. root .. "/c/p'"))
  for name, text in pairs(suites) do write(root .. "/c/suites", name .. ".lua", text) end
  for name, text in pairs(problems) do write(root .. "/c/p", name, text) end
  local roots = problem.roots
  problem.roots = function() return { root } end
  local ok, err = pcall(fn, root)
  problem.roots = roots
  if not ok then error(err, 0) end
end

describe("a problem file", function()
  local dir = support.tmpdir()

  it("loads when it is well formed, and reads the standard library", function()
    local p = problem.load(write(dir, "ok.lua", "local n = math.max(1, #string.rep('a', 3)) + os.time() * 0\n" .. GOOD))
    assert.is_true(p:instantiate():validate())
  end)

  it("that calls os.exit is a load error at its line, not an exit", function()
    local err = user_error(problem.load, write(dir, "exit.lua", "local x = 1\nos.exit(7)\n" .. GOOD))
    assert.equals(3, err.status)
    assert.matches("exit%.lua:2: a problem file may not call os%.exit", err.msg)
    err = user_error(problem.load, write(dir, "exit_g.lua", "_G.os.exit(7)\n" .. GOOD))
    assert.matches("exit_g%.lua:1: a problem file may not call os%.exit", err.msg)
    -- in one of its functions, run later
    local p = problem.load(write(dir, "exit_flops.lua", variant("return s%.n end", "os.exit(7) end")))
    err = user_error(p.instantiate, p)
    assert.matches("field 'flops' failed: .*exit_flops%.lua:%d+: a problem file may not call os%.exit", err.msg)
  end)

  it("that loops for ever is stopped at the load's time limit, and the hook is removed", function()
    local limit = problem.LOAD_LIMIT_S
    problem.LOAD_LIMIT_S = 0.2
    local ok1, e1 = pcall(problem.load, write(dir, "loop.lua", "local kreach = require 'kreach'\nwhile true do end\n"))
    -- a pcall of its own does not swallow the limit
    local ok2, e2 = pcall(problem.load, write(dir, "loop2.lua",
      "local n = 0\nwhile true do\n  pcall(function() while true do n = n + 1 end end)\nend\n"))
    problem.LOAD_LIMIT_S = limit
    assert.is_false(ok1)
    assert.equals(3, e1.status)
    assert.matches("loop%.lua:2: took longer than 0%.2 s to load", e1.msg)
    assert.is_false(ok2)
    assert.matches("loop2%.lua:%d: took longer than 0%.2 s to load", e2.msg)
    assert.is_nil(debug.gethook())
    assert.is_true(problem.load(write(dir, "ok2.lua", GOOD)):instantiate():validate())
  end)

  it("whose flops loops for ever is stopped at the field's time limit, naming the file and line", function()
    local limit = problem.FIELD_LIMIT_S
    local p = problem.load(write(dir, "loop_flops.lua", variant("return s%.n end",
      "local n = 0\n while true do pcall(function() n = n + 1 end) end end")))
    problem.FIELD_LIMIT_S = 0.2
    local ok, err = pcall(p.instantiate, p)
    problem.FIELD_LIMIT_S = limit
    assert.is_false(ok)
    assert.is_true(errors.is(err), tostring(err))
    assert.equals(3, err.status)
    assert.matches("loop_flops%.lua:%d+: took longer than 0%.2 s in its field 'flops' %(an endless loop%?%)", err.msg)
    assert.is_nil(debug.gethook())
    -- a field that returns is not affected, and its errors are as before
    assert.is_true(problem.load(write(dir, "ok4.lua", GOOD)):instantiate():validate())
    -- a shape function that loops when instantiated at other sizes: the same limit
    local q = problem.load(write(dir, "loop_shape.lua", variant('output%("y", { "n" }%)',
      'output("y", function(s)\n  while s.n > 64 do end\n  return { s.n }\nend)')))
    problem.FIELD_LIMIT_S = 0.2
    ok, err = pcall(q.instantiate, q, { sizes = { n = 100 } })
    problem.FIELD_LIMIT_S = limit
    assert.is_false(ok)
    assert.matches("loop_shape%.lua:%d+: took longer than 0%.2 s in a shape function", err.msg)
    assert.is_nil(debug.gethook())
  end)

  -- runs fn with problem[name] set to 0.2 s, then restores it; returns pcall's results
  local function limited(name, fn, ...)
    local limit = problem[name]
    problem[name] = 0.2
    local res = table.pack(pcall(fn, ...))
    problem[name] = limit
    assert.is_nil(debug.gethook())
    return table.unpack(res, 1, res.n)
  end

  it("whose dist or init function loops for ever at other sizes is stopped at the field's limit, naming the file and line", function()
    local p = problem.load(write(dir, "loop_dist.lua", variant('kreach%.input%("x", { "n" }%)',
      'kreach.input("x", { "n" }, { dist = function(s)\n  while s.n > 64 do end\n  return "uniform"\nend })')))
    local ok, err = limited("FIELD_LIMIT_S", p.instantiate, p, { sizes = { n = 100 } })
    assert.is_false(ok)
    assert.is_true(errors.is(err), tostring(err))
    assert.equals(3, err.status)
    assert.matches("loop_dist%.lua:6: took longer than 0%.2 s in its dist function %(an endless loop%?%)", err.msg)

    local q = problem.load(write(dir, "loop_init.lua", variant('kreach%.output%("y", { "n" }%)',
      'kreach.param("w", { "n" }, { init = function(shape)\n  while shape[1] > 64 do end\n  return "ones"\nend }), kreach.output("y", { "n" })')))
    ok, err = limited("FIELD_LIMIT_S", q.instantiate, q, { sizes = { n = 100 } })
    assert.is_false(ok)
    assert.equals(3, err.status)
    assert.matches("loop_init%.lua:6: took longer than 0%.2 s in its init function", err.msg)
    -- at the default sizes both return at once
    assert.is_true(p:instantiate():validate())
    assert.equals("ones", q:instantiate().args[2].init)
  end)

  it("whose dist or init function fails or returns no rule is told, naming the file", function()
    -- at the default sizes: when the file loads
    local function load_error(name, from, to)
      return user_error(problem.load, write(dir, name, variant(from, to)))
    end
    local X, Y = 'kreach%.input%("x", { "n" }%)', 'kreach%.output%("y", { "n" }%)'
    local with_w = 'kreach.param("w", { "n" }, { init = %s }), kreach.output("y", { "n" })'
    local e = load_error("dist_nil.lua", X, 'kreach.input("x", { "n" }, { dist = function() end })')
    assert.equals(3, e.status)
    assert.matches("dist_nil%.lua: .*input 'x': dist: the dist function returned nil, not a distribution's text", e.msg)
    e = load_error("init_num.lua", Y, with_w:format("function() return 3 end"))
    assert.matches("init_num%.lua: .*param 'w': the init function returned number, not an init rule's text", e.msg)
    e = load_error("init_bad.lua", Y, with_w:format("function(sh) return 'uniform(' .. sh[1] .. ')' end"))
    assert.matches("init_bad%.lua: .*param 'w': init: init rule 'uniform' takes 2 numbers, got 1", e.msg)
    e = load_error("init_type.lua", Y, with_w:format("true"))
    assert.matches("init_type%.lua: .*param 'w': init is an init rule's text or a function%(shape%) returning one, got boolean", e.msg)
    -- at other sizes: when instantiated
    local function inst_error(name, from, to)
      local p = problem.load(write(dir, name, variant(from, to)))
      return user_error(p.instantiate, p, { sizes = { n = 100 } })
    end
    e = inst_error("dist_nil2.lua", X, 'kreach.input("x", { "n" }, { dist = function(s)\n  if s.n < 64 then return "uniform" end\nend })')
    assert.matches("dist_nil2%.lua: problem 't': input 'x': the dist function returned nil, not a distribution's text", e.msg)
    e = inst_error("dist_err.lua", X,
      'kreach.input("x", { "n" }, { dist = function(s)\n  if s.n > 64 then error("no dist for " .. s.n) end\n  return "uniform"\nend })')
    assert.matches("the dist function failed: .*dist_err%.lua:6: no dist for 100", e.msg)
    e = inst_error("init_num2.lua", Y, with_w:format("function(sh) if sh[1] < 64 then return 'ones' end return sh[1] end"))
    assert.matches("init_num2%.lua: problem 't': param 'w': the init function returned number, not an init rule's text", e.msg)
    e = inst_error("init_bad2.lua", Y, with_w:format("function(sh) return sh[1] < 64 and 'ones' or 'uniform(' .. sh[1] .. ')' end"))
    assert.matches("init_bad2%.lua: problem 't': param 'w': init: init rule 'uniform' takes 2 numbers, got 1", e.msg)
    -- a good one is computed when instantiated, from the instance's shape
    local p = problem.load(write(dir, "init_ok.lua", variant(Y,
      with_w:format("function(sh) return 'uniform(-' .. sh[1] .. ', ' .. sh[1] .. ')' end"))))
    local inst = p:instantiate{ sizes = { n = 5 } }
    assert.equals("uniform(-5, 5)", inst.args[2].init)
    assert.equals("uniform(-5, 5)", problem.init_rule(inst.args[2]))
  end)

  it("whose host distribution's draw loops, fails or returns the wrong count is told when drawn, naming the file", function()
    local function draw_problem(name, body)
      return problem.load(write(dir, name, variant('kreach%.input%("x", { "n" }%)',
        'kreach.input("x", { "n" }, { dist = kreach.host_dist{ text = "h", draw = function(shape, seed)\n'
          .. body .. '\nend } })')))
    end
    local inst = draw_problem("draw_loop.lua", "  while true do end"):instantiate()
    local ok, err = limited("DRAW_LIMIT_S", inst.make_args, inst, 1)
    assert.is_false(ok)
    assert.is_true(errors.is(err), tostring(err))
    assert.equals(3, err.status)
    assert.matches("draw_loop%.lua:6: took longer than 0%.2 s in the draw of its host distribution 'h'", err.msg)
    inst = draw_problem("draw_err.lua", "  error('bad seed ' .. seed)"):instantiate()
    err = user_error(inst.make_args, inst, 7)
    assert.matches("input 'x': dist: the host distribution 'h' failed: .*draw_err%.lua:6: bad seed 7", err.msg)
    inst = draw_problem("draw_short.lua", "  return { 1, 2 }"):instantiate()
    err = user_error(inst.make_args, inst, 1)
    assert.matches("draw_short%.lua: input 'x': dist: the host distribution 'h' returned 2 values, 8 expected", err.msg)
    -- (one that returns its values is drawn as before: dlrm-bench/4's, in host_values_spec on the
    -- host device and gpu/dlrm_spec)
  end)

  it("keeps a hook that was set before it", function()
    local n = 0
    local function counting() n = n + 1 end
    debug.sethook(counting, "", 100)
    problem.load(write(dir, "ok3.lua", GOOD))
    local h, mask, count = debug.gethook()
    debug.sethook()
    assert.equals(counting, h)
    assert.equals("", mask)
    assert.equals(100, count)
  end)
end)

describe("a suite file", function()
  it("that calls os.exit is a load error naming it", function()
    with_root({ s = "os.exit(7)\nreturn {}\n" }, {}, function()
      local err = user_error(problem.load_suite, "s")
      assert.equals(3, err.status)
      assert.matches("/c/suites/s%.lua:1: a suite file may not call os%.exit", err.msg)
    end)
  end)

  it("that loops for ever is stopped at the load's time limit", function()
    with_root({ s = "while true do end\nreturn {}\n" }, {}, function()
      local limit = problem.LOAD_LIMIT_S
      problem.LOAD_LIMIT_S = 0.2
      local ok, err = pcall(problem.load_suite, "s")
      problem.LOAD_LIMIT_S = limit
      assert.is_false(ok)
      assert.matches("/c/suites/s%.lua:1: took longer than 0%.2 s to load", err.msg)
      assert.is_nil(debug.gethook())
    end)
  end)

  it("that breaks does not hide the other suites' problems from a lookup by name", function()
    with_root({ bad = "os.exit(7)\n", good = 'return { dir = "c/p", ids = { 1 } }' }, { ["001_t.lua"] = GOOD }, function(root)
      assert.equals(root .. "/c/p/001_t.lua", problem.resolve("1"))
    end)
  end)

  it("that lists an id twice is a load error", function()
    with_root({ s = 'return { dir = "c/p", ids = { 1, 1 } }' }, { ["001_t.lua"] = GOOD }, function()
      assert.matches("s%.lua: ids lists problem 1 twice", user_error(problem.load_suite, "s").msg)
    end)
  end)

  it("whose directory holds two files of one id is a load error", function()
    with_root({ s = 'return { dir = "c/p", ids = { 1 } }' }, { ["001_t.lua"] = GOOD, ["01_u.lua"] = GOOD }, function()
      assert.matches("s%.lua: problem 1 has two files in .*/c/p: 001_t%.lua and 01_u%.lua",
        user_error(problem.load_suite, "s").msg)
    end)
  end)

  it("whose problem file declares another id than its name's is a load error", function()
    with_root({ s = 'return { dir = "c/p", ids = { 5 } }' }, { ["005_t.lua"] = GOOD }, function()
      local f = problem.resolve("s/5")
      local err = user_error(problem.load, f)
      assert.equals(3, err.status)
      assert.matches("005_t%.lua: the file says id = 1, but its name makes it problem 5 of its suite", err.msg)
    end)
  end)
end)

describe("a problem's sizes", function()
  local dir = support.tmpdir()
  local two_d = variant('kreach.input%("x", { "n" }%), kreach.output%("y", { "n" }%)',
    'kreach.input("x", { "m", "n" }), kreach.output("y", { "m", "n" })'):gsub("sizes = { n = 8 }", "sizes = { m = 4, n = 8 }")

  it("whose bytes overflow 64 bits are a usage error naming the tensor and the sizes", function()
    local p = problem.load(write(dir, "big.lua", two_d))
    local err = user_error(p.instantiate, p, { sizes = { n = 1 << 61 } })
    assert.equals(2, err.status)
    assert.equals("problem 't': input 'x': the shape {4, 2305843009213693952} (m = 4, n = 2305843009213693952) is too large: its size in bytes overflows a 64-bit integer", err.msg)
    -- the element count fits, its bytes do not
    err = user_error(p.instantiate, p, { sizes = { m = 1, n = math.maxinteger // 2 } })
    assert.matches("input 'x': the shape {1, %d+} %(m = 1, n = %d+%) is too large", err.msg)
    -- every tensor fits, their total does not
    err = user_error(p.instantiate, p, { sizes = { m = 1, n = math.maxinteger // 4 // 2 + 1 } })
    assert.matches("output 'y': the shape {1, %d+} %(m = 1, n = %d+%) is too large", err.msg)
    assert.equals(8 * 4 * 4 * 2, p:instantiate().bytes)
  end)

  it("whose defaults overflow are the problem file's error", function()
    local p = problem.load(write(dir, "big2.lua", two_d:gsub("m = 4", "m = 4611686018427387904")))
    local err = user_error(p.instantiate, p)
    assert.equals(3, err.status)
    assert.matches("input 'x': the shape {4611686018427387904, 8} %(m = 4611686018427387904, n = 8%) is too large", err.msg)
  end)
end)

describe("a problem's numbers", function()
  local dir = support.tmpdir()

  it("from bytes and flops must be finite", function()
    local p = problem.load(write(dir, "huge.lua", variant("flops = function%(s%) return s%.n end,",
      "flops = function(s) return s.n end, bytes = function() return math.huge end,")))
    local err = user_error(p.instantiate, p)
    assert.equals(3, err.status)
    assert.matches("huge%.lua: problem 't': field 'bytes' returned inf, not a finite non%-negative number", err.msg)
    p = problem.load(write(dir, "nan.lua", variant("return s%.n end", "return 0/0 end")))
    err = user_error(p.instantiate, p)
    assert.matches("nan%.lua: problem 't': field 'flops' returned %-?nan, not a finite non%-negative number", err.msg)
    p = problem.load(write(dir, "frac.lua", variant("flops = function%(s%) return s%.n end,",
      "flops = function(s) return s.n end, bytes = function() return 2.5 end,")))
    assert.equals(2.5, p:instantiate().bytes)
  end)

  it("in scalars, distributions and init rules must be finite", function()
    local function scalar(v)
      return variant('kreach.output%("y", { "n" }%)', ('kreach.scalar("t", %s), kreach.output("y", { "n" })'):format(v))
        :gsub("function%(ops, x, y%)", "function(ops, x, t, y)")
    end
    assert.is_true(problem.load(write(dir, "s.lua", scalar("0.5"))):instantiate():validate())
    local err = user_error(problem.load, write(dir, "s_nan.lua", scalar("0/0")))
    assert.equals(3, err.status)
    assert.matches("s_nan%.lua: problem 't': field 'args': scalar 't': a scalar needs a finite value, got %-?nan", err.msg)
    assert.matches("a scalar needs a finite value, got %-inf", user_error(problem.load, write(dir, "s_inf.lua", scalar("-math.huge"))).msg)
    err = user_error(problem.load, write(dir, "d.lua",
      variant('kreach.input%("x", { "n" }%)', 'kreach.input("x", { "n" }, { dist = "uniform(0, 1e999)" })')))
    assert.matches("d%.lua: problem 't': field 'args': input 'x': dist: distribution 'uniform%(0, 1e999%)': '1e999' is not a finite number", err.msg)
    err = user_error(problem.load, write(dir, "i.lua",
      variant('kreach.output%("y", { "n" }%)', 'kreach.param("w", { "n" }, { init = "normal(0, -1e400)" }), kreach.output("y", { "n" })')))
    assert.matches("param 'w': init: init rule 'normal%(0, %-1e400%)': '%-1e400' is not a finite number", err.msg)
  end)
end)

describe("a problem's name", function()
  local dir = support.tmpdir()
  local function named(name) return variant('name = "t"', ('name = %q'):format(name)) end

  it("is a file name", function()
    assert.equals("v2.a-b_1", problem.load(write(dir, "ok.lua", named("v2.a-b_1"))).name)
    for _, bad in ipairs({ "../../../../tmp/evil", "a/b", ".hidden", "..", "", "a b", "a\nb" }) do
      local err = user_error(problem.load, write(dir, "bad.lua", named(bad)))
      assert.equals(3, err.status)
      assert.matches("bad%.lua: problem '.*': field 'name': '.*' is not a name", err.msg)
    end
  end)
end)
