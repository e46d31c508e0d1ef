-- Candidates without a GPU: loading and its errors, the sandbox, the step limit, NVRTC option
-- filtering, the dry run (kreach lint) and verdict bookkeeping. tests/candidates/ holds the files.
local support = require "support"
local kreach = require "kreach"
local candidate = require "kreach.candidate.lua"
local verdict = require "kreach.verdict"
local meta = require "kreach.meta"
local util = require "kreach.core.util"

local DIR = "tests/candidates/"
local function relu_inst(n, b) return kreach.load_problem("19"):instantiate{ sizes = { batch_size = b or 4, dim = n or 1000 } } end

local function load_err(path)
  local ok, e = pcall(candidate.load, path)
  assert.is_false(ok)
  assert.is_true(candidate.is_error(e))
  return tostring(e)
end

describe("a candidate file", function()
  it("loads: source, options, forward and where forward is defined", function()
    local c = candidate.load(DIR .. "019_relu.lua")
    assert.matches("relu4", c.source)
    assert.same({ "--use_fast_math" }, c.options)
    assert.equals("function", type(c.forward))
    assert.equals("relu_float4", c.name)
    assert.is_true(c.line > 1)
  end)

  it("that is malformed is invalid, with file and line", function()
    assert.matches("bad_syntax%.lua:6: '%)' expected", load_err(DIR .. "bad_syntax.lua"))
    assert.matches("no_such_file%.lua: cannot read the candidate: No such file", load_err(DIR .. "no_such_file.lua"))
  end)

  it("that is not a regular file, or is too large, is refused without being read", function()
    assert.matches("^/dev/zero: cannot read the candidate: a character device", load_err("/dev/zero"))
    assert.matches("a directory", load_err(DIR))
    local tmp = support.tmpfile(".lua")
    local f = assert(io.open(tmp, "w"))
    f:write("return {} --", ("x"):rep(candidate.MAX_FILE_BYTES))
    f:close()
    assert.matches("cannot read the candidate: .*more than", load_err(tmp))
    os.remove(tmp)
  end)

  it("must return a table with source and forward and nothing unknown", function()
    local tmp = support.tmpfile(".lua")
    local function with(text)
      local f = assert(io.open(tmp, "w")); f:write(text); f:close()
      return load_err(tmp)
    end
    assert.matches("returns a table, not number", with("return 1"))
    assert.matches("missing field 'source'", with("return { forward = function() end }"))
    assert.matches("missing field 'forward'", with("return { source = '' }"))
    assert.matches("unknown field 'fowrard'", with("return { source = '', fowrard = function() end }"))
    assert.matches("field 'options' must be a table", with("return { source = '', options = '-O3', forward = function() end }"))
    assert.matches("forward' must be a function defined in the candidate file", with("return { source = '', forward = print or error }"))
    assert.matches("attempt to index a nil value %(global 'os'%)", with("os.execute('true'); return {}"))
    assert.matches("step limit", with("while true do end"))
    -- an error value that is not a message: said as such at its line, never as an address
    assert.matches("%.lua:2: raised a table value instead of an error message$", with("local x = 1\nerror({})\nreturn {}"))
    assert.matches("%.lua:1: raised nil instead of an error message$", with("error(); return {}"))
    os.remove(tmp)
  end)

  it("may start with a byte-order mark or a #! line, as a Lua file may; its lines keep their numbers", function()
    local tmp = support.tmpfile(".lua")
    local body = "return { source = [[extern \"C\" __global__ void k() {}]],\n forward = function(k) end }\n"
    for _, head in ipairs({ "\239\187\191", "#!/usr/bin/env kreach\n", "\239\187\191#!/usr/bin/env kreach\n" }) do
      local f = assert(io.open(tmp, "w")); f:write(head, body); f:close()
      local c = candidate.load(tmp)
      assert.equals(head:find("#", 1, true) and 3 or 2, c.line, ("%q"):format(head))
    end
    local f = assert(io.open(tmp, "w")); f:write("#!/usr/bin/env kreach\nreturn {\n source = 1 }"); f:close()
    assert.matches("%.lua: field 'source' must be a string", load_err(tmp))
    f = assert(io.open(tmp, "w")); f:write("#!/usr/bin/env kreach\nreturn {\n source = }"); f:close()
    assert.matches("%.lua:3: unexpected symbol", load_err(tmp))
    os.remove(tmp)
  end)
end)

describe("the sandbox", function()
  it("holds only what forward needs", function()
    local env = candidate.environment()
    for _, name in ipairs({ "io", "os", "debug", "load", "loadfile", "dofile", "require", "package",
                            "collectgarbage", "coroutine", "pcall", "xpcall", "setmetatable",
                            "getmetatable", "rawget", "rawset", "print", "kreach" }) do
      assert.is_nil(env[name], name)
    end
    assert.is_nil(env.string.dump)
    assert.is_nil(env.math.random)
    assert.equals(math.floor, env.math.floor)
    assert.equals("function", type(env.string.format))
    assert.equals("function", type(env.table.concat))
    -- changing the sandbox's libraries does not change the harness's
    env.string.format = nil
    assert.equals("function", type(string.format))
  end)

  it("gives forward tensor handles with metadata only", function()
    local h = candidate.handle(meta.new({ 3, 4 }, "bf16"))
    assert.same({ 3, 4 }, h.shape)
    assert.equals("bf16", h.dtype)
    assert.equals(12, h:numel())
    assert.equals(2, h:dim())
    assert.equals(4, h:size(2))
    assert.has_error(function() return h.to_table end)
    assert.has_error(function() h.shape = {} end)
    assert.matches("tensor%(bf16, {3, 4}%)", tostring(h))
  end)

  it("stops a runaway loop, even one that calls back into itself through the library", function()
    local src = "@" .. DIR .. "fake.lua"
    local f = load("return function() while true do string.gsub('aaaa', 'a', function() local x = 0 while true do x = x + 1 end end) end end", src)()
    local ok, err = candidate.run_limited(100000, src, f)
    assert.is_false(ok)
    assert.matches("fake%.lua:1: ran past its step limit %(100000 Lua instructions%)", err)
    -- and the harness goes on working afterwards
    assert.equals(3, #("abc"))
    local ok2, v = candidate.run_limited(100000, src, function() return 42 end)
    assert.is_true(ok2)
    assert.equals(42, v)
    -- a pattern that backtracks for hours inside one C call, where no step limit reaches:
    -- refused up front, as a method and through the string table; ordinary patterns run
    local env = candidate.environment()
    local runaway = load('local s = ("a"):rep(20000)\nlocal r = s:find(".-.-.-b")\nreturn r', src, "t", env)
    local okp, ep = candidate.run_limited(100000, src, runaway)
    assert.is_false(okp)
    assert.equals(DIR .. "fake.lua:2: string.find: a pattern with 3 repetitions over 20000 bytes could take 1.6e+17 steps (more than 1e+09): match a shorter string or a simpler pattern", ep)
    okp, ep = candidate.run_limited(100000, src, load('local r = string.gsub(("ab"):rep(60000), "a.-b", "") return r', src, "t", env))
    assert.is_false(okp)
    assert.matches("string%.gsub: a pattern with 1 repetition over 120000 bytes could take 1%.44e%+10 steps", ep)
    -- nor through a tail call, a C function's callback, `?` or `%b`, or a long plain find
    for _, code in ipairs({
      'local s = ("a"):rep(600); return s:find(".-.-.-b")',
      'local s = ("a"):rep(300); table.sort({ ".-.-.-b", s }, string.find)',
      'local x = ("a"):rep(26):match("^" .. ("a?"):rep(26) .. ("a"):rep(26))',
      'local x = ("("):rep(100000):find("%b()")',
      'local x = ("a"):rep(800000):find(("a"):rep(400000) .. "b", 1, true)',
    }) do
      local t0 = os.clock()
      okp, ep = candidate.run_limited(1e7, src, load(code, src, "t", env))
      assert.is_false(okp, code)
      assert.matches("string%.%a+: a pattern .* could take .* steps %(more than 1e%+09%)", ep)
      assert.is_true(os.clock() - t0 < 1, code)
    end
    local fine = load([[
local src = ("  TILE x  "):rep(100)
local a = #src:match("^%s*(.-)%s*$")
local b = select(2, (src:rep(1000)):gsub("TILE", "16"))
local c = ("a"):rep(100000):find("a.-b", 1, true)
return a, b, c]], src, "t", env)
    local okf, a, b, c = candidate.run_limited(1e7, src, fine)
    assert.is_true(okf, a)
    assert.same({ 996, 100000 }, { a, b })
    assert.is_nil(c)
    -- the harness's own calls, and the process's string methods afterwards, are not guarded
    local harness = function() return select(2, string.gsub(("ab"):rep(60000), "a.-b", "")) end
    local okh, nh = candidate.run_limited(1e7, src, function() return harness() end)
    assert.is_true(okh, nh)
    assert.equals(60000, nh)
    assert.is_nil(("a"):rep(10):find(".-.-.-b"))
    assert.equals(string.find, getmetatable("").__index.find)
    -- forward raising a table: its line, not an address
    local g = load("return function()\n  error({ 1 })\nend", src)()
    local ok3, e3 = candidate.run_limited(100000, src, g)
    assert.is_false(ok3)
    assert.equals(DIR .. "fake.lua:2: raised a table value instead of an error message", e3)
  end)
end)

describe("the pattern guard", function()
  it("counts a back-reference as a repetition: it compares a whole capture again at every state", function()
    local function reps(p) return { candidate.pattern_repetitions(p) } end
    assert.same({ 2, false, 1 }, reps("(.-)%1b"))
    assert.same({ 3, true, 2 }, reps("^(a*)%1%1"))
    assert.same({ 1, false, 1 }, reps("(ab)%9"))
    -- not a back-reference: an escaped "%", inside a set, "%0"
    assert.same({ 0, false, 0 }, reps("%%1"))
    assert.same({ 0, false, 0 }, reps("[%1]x"))
    assert.same({ 0, false, 0 }, reps("[]%1]"))
    assert.same({ 0, false, 0 }, reps("%0"))
    -- and what was counted before still is: quantifiers outside sets, %b; a frontier's set is a set
    assert.same({ 3, false, 0 }, reps(".-.-.-b"))
    assert.same({ 1, false, 0 }, reps("%b()"))
    assert.same({ 1, false, 0 }, reps("%f[%w*+]x*"))
    assert.same({ 0, true, 0 }, reps("^[*+?-]"))
    -- so (.-)%1b over 30000 bytes (n^3/6 steps: hours) is refused, and a short one runs
    local src = "@" .. DIR .. "fake.lua"
    local env = candidate.environment()
    local t0 = os.clock()
    local ok, e = candidate.run_limited(1e7, src, load('local s = ("a"):rep(30000)\nlocal r = s:find("(.-)%1b")\nreturn r', src, "t", env))
    assert.is_false(ok)
    assert.equals(DIR .. "fake.lua:2: string.find: a pattern with 1 repetition and 1 back-reference over 30000 bytes could take 2.7e+13 steps (more than 1e+09): match a shorter string or a simpler pattern", e)
    assert.is_true(os.clock() - t0 < 1)
    local ok2, cap = candidate.run_limited(1e7, src, load('return ("xabab"):match("(ab)%1")', src, "t", env))
    assert.is_true(ok2, cap)
    assert.equals("ab", cap)
  end)
end)

describe("a candidate's Lua heap", function()
  local MIB = 1024 * 1024
  local saved
  before_each(function() saved = candidate.HEAP_BYTES; candidate.HEAP_BYTES = 8 * MIB end)
  after_each(function() candidate.HEAP_BYTES = saved end)
  local SOURCE = 'source = [[extern "C" __global__ void f() {}]]'
  -- a candidate whose load holds `mib` MiB, and whose forward keeps `keep` MiB more each call
  local function text(mib, keep)
    return ("local s = ('x'):rep(%d * 1048576)\nkept = {}\nreturn { %s, forward = function(k)\n  kept[#kept + 1] = ('y'):rep(%d * 1048576) .. #kept\nend }\n")
      :format(mib, SOURCE, keep or 0)
  end
  local function cap_now()
    local c = util.heap_limit(nil)
    util.heap_limit(c)
    return c
  end

  it("is capped while the candidate loads, naming the cap and --lua-memory; the harness goes on", function()
    local ok, e = pcall(candidate.load_text, text(16), "big.lua")
    assert.is_false(ok)
    assert.equals("big.lua: not enough memory (out of memory: the candidate's Lua heap is limited to 8 MiB (--lua-memory changes it))", tostring(e))
    assert.is_nil(cap_now()) -- lifted
    assert.equals("table", type(candidate.load_text(text(2), "small.lua"))) -- string.rep's buffer doubles it
    candidate.HEAP_BYTES = 64 * MIB -- the option changes it
    assert.equals("table", type(candidate.load_text(text(16), "big.lua")))
  end)

  it("holds what the candidate keeps between its calls: no series of calls grows past it", function()
    local c = candidate.load_text(text(0, 2), "keeps.lua")
    local calls, ok, err = 0, true, nil
    while ok and calls < 20 do
      calls = calls + 1
      ok, err = candidate.call_forward(c, {}, {})
    end
    assert.is_false(ok)
    assert.is_true(calls <= 4, calls) -- 8 MiB at 2 MiB a call
    assert.equals("keeps.lua: not enough memory (out of memory: the candidate's Lua heap is limited to 8 MiB (--lua-memory changes it))", err)
    assert.is_nil(cap_now())
    -- the harness allocates freely while the candidate still holds its memory
    assert.equals(16 * MIB, #("z"):rep(16 * MIB))
  end)

  it("keeps a lower cap set around it (kreach.generate.extract's)", function()
    collectgarbage()
    local outer = util.heap_used() + 4 * MIB
    util.heap_limit(outer)
    local ok, e = pcall(candidate.load_text, text(6), "six.lua")
    assert.equals(outer, util.heap_limit(nil))
    assert.is_false(ok)
    assert.matches("not enough memory", tostring(e))
  end)

  it("leaves a normal candidate alone, and ends the memory bomb at the cap", function()
    candidate.HEAP_BYTES = 1 * MIB
    local v, report = candidate.lint(relu_inst(), DIR .. "019_relu.lua", { arch = "sm_90" })
    assert.is_nil(v)
    assert.equals(1, report.launches)
    candidate.HEAP_BYTES = 8 * MIB
    v = candidate.lint(relu_inst(), DIR .. "bad_memory_bomb.lua", { arch = "sm_90" })
    assert.equals("invalid_candidate", v.verdict)
    assert.equals(DIR .. "bad_memory_bomb.lua: not enough memory (out of memory: the candidate's Lua heap is limited to 8 MiB (--lua-memory changes it))", v.reason)
    assert.is_nil(cap_now())
  end)
end)

describe("NVRTC options", function()
  it("are allowed from a list", function()
    local inc = (os.getenv("CUDA_HOME") or "/usr/local/cuda") .. "/include"
    local ok = { "--use_fast_math", "-use_fast_math", "--fmad=false", "--ftz=true", "--prec-div=false",
      "--std=c++17", "-std=c++20", "--maxrregcount=64", "-DTILE=32", "-DFAST", "-I" .. inc,
      "-I" .. inc .. "/cuda", "--extra-device-vectorization", "-lineinfo", "--restrict" }
    assert.same(ok, candidate.check_options(ok))
    assert.same({}, candidate.check_options(nil))
  end)

  it("that could escape the harness or the sandbox are refused", function()
    local function refused(o)
      local okk, e = pcall(candidate.check_options, { o })
      assert.is_false(okk, o)
      return tostring(e)
    end
    assert.matches("relocatable device code", refused("-rdc=true"))
    assert.matches("relocatable device code", refused("--relocatable-device-code=true"))
    assert.matches("relocatable device code", refused("-dc"))
    assert.matches("the harness chooses the architecture", refused("-arch=sm_80"))
    assert.matches("the harness chooses the architecture", refused("--gpu-architecture=compute_90"))
    assert.matches("include paths outside the CUDA toolkit", refused("-I/etc"))
    assert.matches("include paths outside the CUDA toolkit", refused("-I/usr/local/cuda/include/../../../etc"))
    assert.matches("not on the list", refused("--pre-include=/etc/passwd"))
    assert.matches("not on the list", refused("-include"))
    assert.matches("'maybe' is not a valid value for %-%-fmad", refused("--fmad=maybe"))
    assert.matches("option 1 is a number", tostring(select(2, pcall(candidate.check_options, { 3 }))))
  end)
end)

describe("kreach lint", function()
  local cases = {
    { "019_relu.lua", nil },
    { "bad_compile.lua", "compile_error", "bad_compile%.cu%(2%): error: identifier \"undefined_name\" is undefined" },
    { "bad_escape.lua", "invalid_candidate", "bad_escape%.lua:5: a tensor handle has shape, dtype, numel, size and dim only %(not 'fill'%)" },
    { "bad_io.lua", "invalid_candidate", "bad_io%.lua:5: attempt to index a nil value %(global 'io'%)" },
    { "bad_loop.lua", "invalid_candidate", "bad_loop%.lua:%d+: ran past its step limit" },
    { "bad_rdc.lua", "invalid_candidate", "NVRTC option '%-rdc=true' refused" },
    { "bad_return.lua", "invalid_candidate", "bad_return%.lua:4: forward returned a value" },
    { "bad_syntax.lua", "invalid_candidate", "bad_syntax%.lua:6:" },
  }
  for _, c in ipairs(cases) do
    it(("gives %s the verdict %s"):format(c[1], c[2] or "ok"), function()
      local v, report = candidate.lint(relu_inst(), DIR .. c[1], { arch = "sm_90" })
      if c[2] == nil then
        assert.is_nil(v)
        assert.equals(1, report.launches)
      else
        assert.equals(c[2], v.verdict)
        assert.matches(c[3], v.reason)
      end
    end)
  end

  it("launches the tail kernel when the size is not a multiple of four, and checks its arguments", function()
    local _, report = candidate.lint(relu_inst(1001, 3), DIR .. "019_relu.lua", { arch = "sm_90" })
    assert.equals(2, report.launches)
    local _, r2 = candidate.lint(relu_inst(1000), DIR .. "019_relu.lua", { arch = "sm_90" })
    assert.equals(1, r2.launches)
    -- the relu candidate declares float pointers: at bf16 its launch is refused
    local inst = kreach.load_problem("19"):instantiate{ dtype = "bf16", sizes = { batch_size = 4, dim = 8 } }
    local v = candidate.lint(inst, DIR .. "019_relu.lua", { arch = "sm_90" })
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("f32 tensor expected, got bf16 tensor", v.reason)
  end)
end)

describe("verdicts", function()
  it("are one of a fixed set, with a reason where one is needed", function()
    assert.same({ verdict = "correct" }, verdict.correct())
    assert.equals("wrong_values", verdict.new("incorrect", "wrong_values", { rel_l2 = 0.5 }).reason)
    assert.has_error(function() verdict.new("incorrect", "bad_vibes") end)
    assert.has_error(function() verdict.new("incorrect") end)
    assert.has_error(function() verdict.new("correct", "because") end)
    assert.has_error(function() verdict.new("almost_correct", "x") end)
    assert.equals("timeout", verdict.new("timeout", "forward phase took over 60 s").verdict)
    local v = verdict.from_candidate_error(select(2, pcall(candidate.load, DIR .. "bad_syntax.lua")))
    assert.equals("invalid_candidate", v.verdict)
    assert.matches("bad_syntax%.lua:6:", v.reason)
    local cjson = require "cjson"
    assert.same({ verdict = "incorrect", reason = "non_finite" },
      cjson.decode(cjson.encode(verdict.new("incorrect", "non_finite"))))
  end)
end)
