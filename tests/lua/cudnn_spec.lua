-- kreach.cudnn (where cuDNN comes from) and kreach.core.cudnn (loading it) without a GPU: the
-- search honours KREACH_CUDNN (a file, a directory, a missing path), a bad path gives a clear
-- error, the version of the loaded library, and a sealed worker that loaded cuDNN before its
-- seal can still read cuDNN's directory (and nothing new beside it).
local cudnn = require "kreach.cudnn"
local core = require "kreach.core.cudnn"
local kcore = require "kreach.core"
local seal = require "kreach.run.seal"
local worker = require "kreach.run.worker"
local support = require "support"
local lfs = require "lfs"

-- Runs `code` in a fresh kreach with extra environment variables; returns its stdout, status.
local function kreach_e(env, code)
  local prefix = {}
  for k, v in pairs(env) do prefix[#prefix + 1] = ("%s='%s'"):format(k, v) end
  local cmd = ("%s %s -e %q 2>&1"):format(table.concat(prefix, " "), kcore.executable(), code)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local _, _, status = p:close()
  return out, status
end

describe("kreach.cudnn", function()
  local dir

  before_each(function() dir = support.tmpdir() end)
  after_each(function() seal.remove_tree(dir) end)

  it("takes KREACH_CUDNN as a file or as a directory holding libcudnn.so.9", function()
    local f = dir .. "/libcudnn.so.9"
    support.spit(f, "not really cuDNN")
    assert.equals(f, cudnn.from_env(f))
    assert.equals(f, cudnn.from_env(dir))
    assert.equals(f, cudnn.from_env(dir .. "/"))
    -- a file under another name is taken as it is
    local g = dir .. "/libcudnn.so.9.19.0"
    support.spit(g, "")
    assert.equals(g, cudnn.from_env(g))
  end)

  it("says why KREACH_CUDNN cannot be used: a missing path, a directory without the library", function()
    local p, why = cudnn.from_env(dir .. "/missing")
    assert.is_nil(p)
    assert.equals(("KREACH_CUDNN=%s/missing: no such file or directory"):format(dir), why)
    p, why = cudnn.from_env(dir)
    assert.is_nil(p)
    assert.equals(("KREACH_CUDNN=%s: the directory holds no libcudnn.so.9"):format(dir), why)
  end)

  it("finds PyTorch's nvidia/cudnn/lib under a site-packages directory", function()
    local sp = dir .. "/site-packages"
    for _, d in ipairs({ sp, sp .. "/nvidia", sp .. "/nvidia/cudnn", sp .. "/nvidia/cudnn/lib" }) do assert(lfs.mkdir(d)) end
    local p, why = cudnn.from_site_packages({ dir, sp })
    assert.is_nil(p)
    assert.matches("no nvidia/cudnn/lib/libcudnn.so.9 under 2 site%-packages directories", why)
    support.spit(sp .. "/nvidia/cudnn/lib/libcudnn.so.9", "")
    assert.equals(sp .. "/nvidia/cudnn/lib/libcudnn.so.9", cudnn.from_site_packages({ dir, sp }))
  end)

  it("asks python3 for its site-packages, and says so when it cannot run", function()
    local dirs = cudnn.python_site_packages()
    if dirs then assert.is_true(#dirs >= 1) end -- python3 may be missing on a build machine
    local out = kreach_e({ KREACH_PYTHON = "/nonexistent/python3" },
      "local c = require 'kreach.cudnn'; print(select(2, c.python_site_packages())); print(#c.site_packages() >= 1)")
    assert.matches("cannot run /nonexistent/python3", out)
    assert.matches("true", out)
  end)

  it("searches KREACH_CUDNN first, and a wrong KREACH_CUDNN ends the search", function()
    local f = dir .. "/libcudnn.so.9"
    support.spit(f, "")
    -- before the standard paths (the toolkit's lib64 here may hold a cuDNN of its own)
    local out = kreach_e({ KREACH_CUDNN = dir }, "print(require('kreach.cudnn').find())")
    assert.equals(f .. "\tKREACH_CUDNN\n", out)
    out = kreach_e({ KREACH_CUDNN = f }, "print(require('kreach.cudnn').find())")
    assert.equals(f .. "\tKREACH_CUDNN\n", out)
    out = kreach_e({ KREACH_CUDNN = dir .. "/missing" }, "print(require('kreach.cudnn').find())")
    assert.equals(("nil\tKREACH_CUDNN=%s/missing: no such file or directory\n"):format(dir), out)
    -- found there but not cuDNN: available() says why, and nothing else is tried
    out = kreach_e({ KREACH_CUDNN = dir }, "print(require('kreach.cudnn').available())")
    assert.equals(("false\tcannot load cuDNN (%s): %s: file too short\n"):format(f, f), out)
    -- nowhere at all: every place tried is named
    out = kreach_e({ KREACH_PYTHON = "/nonexistent/python3", HOME = dir },
      "print(require('kreach.cudnn').find{ standard = false })")
    if not out:match("PyTorch's nvidia%-cudnn package") then -- a system-wide PyTorch would be found
      assert.matches("^nil\tKREACH_CUDNN is not set; no nvidia/cudnn/lib/libcudnn.so.9 under", out)
      assert.matches("cannot run /nonexistent/python3", out)
    end
  end)

  it("refuses a library that is not cuDNN 9, and a file that does not load, with the loader's words", function()
    local out = kreach_e({}, [[
      local c = require 'kreach.core.cudnn'
      print(c.load('/nonexistent/libcudnn.so.9'))
      print(c.load('/etc/hostname'))
      print(c.version(), c.path())]])
    assert.matches("nil\tcannot load cuDNN %(/nonexistent/libcudnn%.so%.9%): /nonexistent/libcudnn%.so%.9: cannot open shared object file: No such file or directory", out)
    assert.matches("nil\tcannot load cuDNN %(/etc/hostname%): [^\n]*/etc/hostname: ", out)
    assert.matches("nil\tnil\n$", out) -- nothing stays loaded
    -- a shared library that loads but is not cuDNN (the C library itself)
    local libc = "/lib/x86_64-linux-gnu/libc.so.6"
    if lfs.attributes(libc, "mode") then
      out = kreach_e({}, ("print(require('kreach.core.cudnn').load(%q))"):format(libc))
      assert.equals(("nil\t%s is not cuDNN 9: it has no cudnnGetVersion\n"):format(libc), out)
    end
  end)

  it("loads one cuDNN, reports its version and path, and refuses a second one", function()
    local ok, why = cudnn.available()
    if not ok then
      pending("no cuDNN on this machine: " .. why)
      return
    end
    local info = cudnn.info()
    assert.is_true(info.available)
    assert.equals(core.version(), info.version_number)
    assert.equals(9, info.version_number // 10000)
    assert.equals(cudnn.version_string(info.version_number), info.version)
    assert.matches("^9%.%d+%.%d+$", info.version)
    assert.equals(core.path(), info.path)
    assert.equals("file", lfs.attributes(info.path, "mode"))
    assert.equals(info.path:match("^(.*)/"), cudnn.dir())
    local files = cudnn.library_files()
    assert.is_true(#files >= 1)
    for _, f in ipairs(files) do assert.matches("/libcudnn[^/]*%.so[^/]*$", f) end
    assert.is_true(core.load(info.path)) -- the same file again: fine
    assert.is_true(core.load())
    local f = dir .. "/libcudnn.so.9"
    support.spit(f, "")
    local ok2, why2 = core.load(f)
    assert.is_nil(ok2)
    assert.equals(("cuDNN is already loaded from %s; a process loads one cuDNN, not also %s"):format(info.path, f), why2)
    assert.equals("9.19.0", cudnn.version_string(91900))
  end)

  it("passes where it found cuDNN to a worker, and the worker's search ends there", function()
    if not cudnn.available() then
      pending("no cuDNN on this machine")
      return
    end
    local r = assert(worker.run({ kcore.executable(), "-e", [[
      local c = require "kreach.cudnn"
      require("kreach.run.worker").result({ env = os.getenv("KREACH_CUDNN"), ok = c.available(), info = c.info() })]] }))
    assert.is_true(r.ok)
    assert.equals(cudnn.info().path, r.info.path)
    assert.equals(cudnn.info().path, r.env)
  end)

  it("a worker that loaded cuDNN before its seal preloads its libraries and may read its directory", function()
    if not cudnn.available() then
      pending("no cuDNN on this machine")
      return
    end
    if seal.landlock() < 1 then
      pending("no Landlock here")
      return
    end
    local r = assert(worker.run({ kcore.executable(), "-e", [[
      local c = require "kreach.cudnn"
      local seal = require "kreach.run.seal"
      assert(seal.enter_worker())
      assert(c.available())
      local rec = assert(seal.apply{})
      local function can_read(p) local f = io.open(p, "rb"); if f then f:close() end; return f ~= nil end
      require("kreach.run.worker").result({ filesystem = rec.filesystem, cudnn = rec.cudnn,
        lib = can_read(c.dir() .. "/libcudnn_cnn.so.9"), etc = can_read("/etc/hostname") })]] }))
    assert.equals("landlock", r.filesystem)
    assert.equals(cudnn.dir(), r.cudnn)
    assert.is_true(r.lib)
    assert.is_false(r.etc)
  end)

  it("raises on a convolution before cuDNN is loaded, and counts nothing", function()
    local out = kreach_e({}, [[
      local c = require 'kreach.core.cudnn'
      local k = require 'kreach'
      print(c.stats().heuristic_queries, c.stats().plans)
      print(pcall(c.preload))]])
    assert.matches("^0\t0\n", out)
    assert.matches("cuDNN is not loaded", out)
  end)
end)
