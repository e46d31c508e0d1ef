-- kreach.errors: user errors and their exit statuses, the messages they carry (never a
-- position in kreach's own code), and how the library's modules and kreach.cli use them.
local errors = require "kreach.errors"
local cli = require "kreach.cli"
local problem = require "kreach.problem"
local candidate = require "kreach.candidate.lua"
local support = require "support"

-- the directory kreach's own modules are loaded from ("scripts/kreach/" when embedded)
local HERE = debug.getinfo(errors.new, "S").source:match("^@(.*/)[^/]*$")

local function caught(fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return e
end

local function rmtree(d)
  local lfs = require "lfs"
  for f in lfs.dir(d) do
    if f ~= "." and f ~= ".." then
      local p = d .. "/" .. f
      if lfs.attributes(p, "mode") == "directory" then rmtree(p) else os.remove(p) end
    end
  end
  lfs.rmdir(d)
end

describe("kreach.errors", function()
  it("raises each kind with its exit status, at level 0, as an object that prints as its message", function()
    local want = { usage = 2, load = 3, database = 3, failed = 1 }
    for kind, status in pairs(want) do
      local e = caught(errors[kind], "%s went %d ways", "it", 3)
      assert.is_true(errors.is(e))
      assert.equals(kind, e.kind)
      assert.equals(status, errors.status(e))
      assert.equals("it went 3 ways", errors.message(e))
      assert.equals("it went 3 ways", tostring(e)) -- no "errors_spec.lua:NN: " prepended
    end
    -- a lone message is not a format: a '%' in it is kept as it is
    assert.equals("100% sure", errors.message(caught(errors.usage, "100% sure")))
  end)

  it("says no GPU in the form the binary and the docs use, with status 77", function()
    local e = caught(errors.no_device, "libcuda.so.1: cannot open shared object file")
    assert.equals(77, errors.status(e))
    assert.equals("no CUDA device: libcuda.so.1: cannot open shared object file", errors.message(e))
    assert.equals("no CUDA device: x", errors.message(caught(errors.no_device, "no CUDA device: x")))
  end)

  it("raises with any exit status, by number or kind, and refuses one that is not", function()
    local e = caught(errors.raise, 3, "cannot seal the worker", "seal")
    assert.equals(3, e.status)
    assert.equals("seal", e.kind)
    assert.equals("load", caught(errors.raise, 3, "x").kind)
    assert.equals("usage", caught(errors.raise, "usage", "x").kind)
    assert.equals(2, caught(errors.raise, "usage", "x").status)
    assert.has_error(function() errors.new(0, "x") end)
    assert.has_error(function() errors.new(256, "x") end)
    assert.has_error(function() errors.new("nosuchkind", "x") end)
    assert.has_error(function() errors.new(2.5, "x") end)
  end)

  it("treats anything else as internal: status 99", function()
    assert.is_false(errors.is("a string"))
    assert.is_false(errors.is({ msg = "x", status = 3 }))
    assert.equals(99, errors.status("scripts/kreach/x.lua:1: oops"))
    assert.equals(99, errors.status({}))
    assert.equals(99, errors.status(nil))
  end)

  it("never lets a position in kreach's own code into a message, and keeps the user's", function()
    assert.is_string(HERE)
    local internal = HERE .. "candidate.lua:158: bad argument #1 to 'load'"
    assert.equals("bad argument #1 to 'load'", errors.message(internal))
    -- inside a message that wraps another, and an error object made from such a message
    local wrapped = "problem 'p': field 'flops' failed: " .. HERE .. "ops/init.lua:51: matmul: A is {2}"
    assert.equals("problem 'p': field 'flops' failed: matmul: A is {2}", errors.message(wrapped))
    assert.equals("matmul: A is {2}", errors.message(errors.new(3, HERE .. "ops/matmul.lua:60: matmul: A is {2}")))
    -- argparse's position too, and a traceback is cut off
    assert.equals("bad", errors.message("/usr/share/lua/5.4/argparse.lua:12: bad\nstack traceback:\n\t[C]: in ?"))
    -- the user's own files keep their line: it says where the mistake is
    assert.equals("/tmp/p/019_relu.lua:13: ref boom", errors.message("/tmp/p/019_relu.lua:13: ref boom"))
    assert.equals("tests/candidates/bad_io.lua:5: x", errors.message("tests/candidates/bad_io.lua:5: x"))
    -- an error object of another kind prints through its __tostring; others say what they are
    local other = setmetatable({}, { __tostring = function() return HERE .. "output.lua:9: disk full" end })
    assert.equals("disk full", errors.message(other))
    assert.equals("(error object is a nil value)", errors.message(nil))
  end)

  it("cleans a long message in linear time", function()
    local s = ("x"):rep(2000000) .. " argparse.lua"
    local t0 = os.clock()
    assert.equals(#s, #errors.clean(s))
    assert.is_true(os.clock() - t0 < 1, "cleaning 2 MB took more than 1 s")
  end)

  it("names the file a load error is about, once", function()
    local e = caught(errors.file, "/x/p.lua", "cannot read it")
    assert.equals(3, e.status)
    assert.equals("/x/p.lua: cannot read it", errors.message(e))
    assert.equals("/x/p.lua:2: '}' expected", errors.message(caught(errors.file, "/x/p.lua", "/x/p.lua:2: '}' expected")))
    assert.equals(2, caught(errors.file, "/x/p.lua", "no size named 'n'", 2).status)
  end)

  it("catches user errors only: a bug is raised again", function()
    assert.same({ true, 1, 2 }, { errors.catch(function(a, b) return a, b end, 1, 2) })
    local ok, e = errors.catch(errors.usage, "bad %s", "value")
    assert.is_nil(ok)
    assert.equals(2, errors.status(e))
    assert.has_error(function() errors.catch(function() error("a bug", 0) end) end, "a bug")
  end)
end)

describe("the modules' user errors", function()
  local dir
  setup(function()
    dir = support.tmpdir()
    require("lfs").mkdir(dir .. "/sub")
    support.spit(dir .. "/bin.lua", string.dump(function() return 1 end))
    local relu = support.slurp("problems/kernelbench/level1/019_ReLU.lua")
    support.spit(dir .. "/badops.lua", (relu:gsub("ops%.relu%(x, y%)", "ops.relu(x)")))
    support.spit(dir .. "/raises.lua", "error('problem boom')\n")
  end)
  teardown(function() rmtree(dir) end)

  it("a problem: a path that names no file is status 3 naming it, a name that names nothing 2", function()
    local e = caught(problem.resolve, dir .. "/missing.lua")
    assert.equals(3, errors.status(e))
    assert.equals(dir .. "/missing.lua: cannot read the problem: no such file", errors.message(e))
    e = caught(problem.resolve, dir .. "/sub")
    assert.equals(3, errors.status(e))
    assert.matches("/sub: cannot read the problem: it is a directory, not a file$", errors.message(e))
    e = caught(problem.resolve, "nosuch")
    assert.equals(2, errors.status(e))
    assert.equals("no problem 'nosuch' (a path, an id or a name from a suite)", errors.message(e))
    assert.is_true(problem.is_error(e)) -- the alias other modules use
  end)

  it("a problem file that does not load: status 3, its file and line", function()
    local e = caught(problem.load, dir .. "/bin.lua")
    assert.equals(3, errors.status(e))
    assert.matches("^" .. dir:gsub("%p", "%%%0") .. "/bin%.lua: .*binary chunk", errors.message(e))
    e = caught(problem.load, dir .. "/raises.lua")
    assert.equals(dir .. "/raises.lua:1: problem boom", errors.message(e))
    -- a size the user names that the problem does not have is the user's mistake: status 2
    local p = problem.load("problems/kernelbench/level1/019_ReLU.lua")
    e = caught(p.instantiate, p, { sizes = { dimm = 3 } })
    assert.equals(2, errors.status(e))
    assert.equals("problem '19_ReLU': no size named 'dimm' (did you mean 'dim'?)", errors.message(e))
  end)

  it("an operator's error in a reference is told at the problem file's line, not kreach's", function()
    local p = problem.load(dir .. "/badops.lua")
    local inst = p:instantiate{ sizes = { batch_size = 2, dim = 3 } }
    local e = caught(inst.validate, inst)
    assert.equals(3, errors.status(e))
    local msg = errors.message(e)
    assert.matches("^problem '19_ReLU': reference: " .. dir:gsub("%p", "%%%0") .. "/badops%.lua:13: ", msg)
    assert.is_nil(msg:find(HERE, 1, true))
  end)

  it("a candidate file that cannot be read names itself; one that is not Lua source too", function()
    local text, why = candidate.read(dir .. "/sub")
    assert.is_nil(text)
    assert.equals(dir .. "/sub: cannot read the candidate: a directory, not a regular file", why)
    local ok, e = pcall(candidate.load, dir .. "/bin.lua")
    assert.is_false(ok)
    assert.is_true(candidate.is_error(e)) -- a verdict's material (invalid_candidate), not an exit status
    assert.is_false(errors.is(e))
    assert.matches("^" .. dir:gsub("%p", "%%%0") .. "/bin%.lua: not a Lua source file: attempt to load a binary chunk", e.msg)
  end)

  it("a results database that fails a statement: status 3, naming it, without a position", function()
    local store = require "kreach.results.store"
    local path = dir .. "/r.db"
    local db = assert(store.open(path))
    db:begin_run{ config_hash = "h" }
    db:close()
    local ro = assert(store.open(path, { readonly = true }))
    local e = caught(ro.begin_run, ro, { config_hash = "h2" })
    ro:close()
    assert.is_true(errors.is(e))
    assert.equals(3, errors.status(e))
    assert.equals("database", e.kind)
    assert.matches("^" .. path:gsub("%p", "%%%0") .. ": .*readonly", errors.message(e))
    -- one that does not open is nil and why (the caller raises errors.database with it)
    local none, why = store.open(dir .. "/sub/none.db", { create = false })
    assert.is_nil(none)
    assert.matches("no such results database", why)
  end)
end)

describe("kreach.cli", function()
  local real_stderr = io.stderr
  local said
  before_each(function()
    said = {}
    io.stderr = { write = function(self, ...) for _, s in ipairs({ ... }) do said[#said + 1] = s end return self end }
  end)
  after_each(function() io.stderr = real_stderr end)

  local function command(name, run)
    package.preload["kreach.cmd." .. name] = function() return { summary = "a test command", run = run } end
    package.loaded["kreach.cmd." .. name] = nil
  end

  it("prints a user error as 'kreach <command>: <message>' and exits with its status", function()
    command("errors-spec-usage", function() errors.usage("--size n: '%s' is not a positive integer", "x") end)
    assert.equals(2, cli.main("errors-spec-usage"))
    assert.equals("kreach errors-spec-usage: --size n: 'x' is not a positive integer\n", table.concat(said))
    said = {}
    command("errors-spec-load", function() problem.load("/nonexistent/p.lua") end)
    assert.equals(3, cli.main("errors-spec-load"))
    assert.equals("kreach errors-spec-load: cannot open /nonexistent/p.lua: No such file or directory\n", table.concat(said))
    command("errors-spec-failed", function() errors.failed("cannot write %s", "/x") end)
    assert.equals(1, cli.main("errors-spec-failed"))
  end)

  it("says no GPU as the binary does: 'kreach: no CUDA device: ...', status 77", function()
    command("errors-spec-nogpu", function() errors.no_device("no driver") end)
    assert.equals(77, cli.main("errors-spec-nogpu"))
    assert.equals("kreach: no CUDA device: no driver\n", table.concat(said))
  end)

  it("passes a command's own status through, and raises a bug with its traceback", function()
    command("errors-spec-status", function() return 1 end)
    assert.equals(1, cli.main("errors-spec-status"))
    command("errors-spec-true", function() return true end)
    assert.equals(0, cli.main("errors-spec-true"))
    command("errors-spec-bug", function() local t = nil; return t.field end)
    local ok, e = pcall(cli.main, "errors-spec-bug")
    assert.is_false(ok)
    assert.matches("attempt to index a nil value", e)
    assert.matches("stack traceback:", e)
    assert.same({}, said)
  end)

  it("gives the timing validators' messages without a position, as a usage error", function()
    local t, m = cli.timing_overrides({ flush_factor = 1 })
    local ok, e = pcall(require("kreach.run.evaluate").resolve, { dtype = "f32", timing = t, measure = m })
    assert.is_false(ok)
    assert.is_true(errors.is(e))
    assert.equals(2, e.status)
    assert.matches("flush_factor", e.msg)
    assert.is_nil(e.msg:find("%.lua:%d+:"))
  end)
end)
