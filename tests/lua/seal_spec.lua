-- kreach.run.seal: the policy of the sealed worker: sizes, the default memory limit, the worker's
-- environment (an allow-list), its private directory, and the Landlock rules it applies.
local seal = require "kreach.run.seal"
local lfs = require "lfs"

describe("kreach.run.seal", function()
  it("reads sizes, and refuses what is not one or is too small", function()
    assert.equals(8 * 1024 ^ 3 // 1, seal.parse_size("8G"))
    assert.equals(512 * 1024 * 1024, seal.parse_size("512M"))
    assert.equals(512 * 1024 * 1024, seal.parse_size("512MiB"))
    assert.equals(1536 * 1024 * 1024, seal.parse_size("1.5g"))
    assert.equals(1024 ^ 4 // 1, seal.parse_size("1T"))
    assert.equals(100 * 1024 * 1024, seal.parse_size(tostring(100 * 1024 * 1024)))
    local b, why = seal.parse_size("lots")
    assert.is_nil(b)
    assert.matches("not a size", why)
    b, why = seal.parse_size("1M")
    assert.is_nil(b)
    assert.matches("too small", why)
    assert.equals("1.5 GiB", seal.format_size(1536 * 1024 * 1024))
    assert.equals("512 MiB", seal.format_size(512 * 1024 * 1024))
  end)

  it("defaults to the smaller of 16 GiB and half the host's memory", function()
    local host = require("kreach.core.seal").host_memory()
    assert.is_true(host > 0)
    assert.equals(math.min(16 * 1024 ^ 3 // 1, host // 2), seal.default_memory_bytes())
  end)

  it("builds the worker's environment from the allow-list and a private directory", function()
    local p = assert(seal.prepare{ memory_bytes = 1024 ^ 3 // 1 })
    local env = {}
    for _, kv in ipairs(p.env) do
      local k, v = kv:match("^([^=]+)=(.*)$")
      env[k] = v
    end
    local allowed = {}
    for _, k in ipairs(seal.ENV_PASS) do allowed[k] = true end
    for _, k in ipairs(seal.ENV_SET) do allowed[k] = true end
    for k in pairs(env) do assert.is_true(allowed[k], k .. " is not on the allow-list") end
    assert.equals(p.dir, env.KREACH_WORKER_DIR)
    assert.equals(p.dir, env.HOME)
    assert.equals("1073741824", env.KREACH_WORKER_MEMORY)
    assert.equals("0", env.KREACH_WORKER_WATCH)
    assert.equals(os.getenv("PATH"), env.PATH)
    assert.equals("directory", lfs.attributes(p.dir, "mode"))
    assert.equals("rwx------", lfs.attributes(p.dir, "permissions"))
    local f = assert(io.open(p.dir .. "/left-behind", "w"))
    f:close()
    assert(lfs.mkdir(p.dir .. "/sub"))
    p.cleanup()
    assert.is_nil(lfs.attributes(p.dir))
  end)

  it("passes the compile cache's cap, KREACH_CACHE_MAX, to the workers that compile (issue 33, H6)", function()
    local passed = {}
    for _, k in ipairs(seal.ENV_PASS) do passed[k] = true end
    assert.is_true(passed.KREACH_CACHE_MAX)
  end)

  it("reads only the toolkit, kreach, the problem and the candidate; writes its directory and the cache", function()
    local core = require "kreach.core.seal"
    local rules = seal.rules({ candidate = "tests/candidates/019_relu.lua", problem = "problems/kernelbench/level1/019_ReLU.lua" },
                             { "problems" })
    local by = {}
    for _, r in ipairs(rules) do by[r.path] = r.access end
    assert.equals("read", by[core.realpath(seal.toolkit_root())])
    -- the problem roots come from the caller (kreach worker passes kreach.problem.roots()): the
    -- seal does not load the problem language itself
    assert.equals("read", by[core.realpath("problems")])
    local none = {}
    for _, r in ipairs(seal.rules({ problem = "problems/kernelbench/level1/019_ReLU.lua" })) do none[r.path] = r.access end
    assert.is_nil(none[core.realpath("problems")])
    assert.equals("read", none[core.realpath("problems/kernelbench/level1/019_ReLU.lua")])
    assert.equals("read", by[core.realpath("tests/candidates/019_relu.lua")])
    assert.equals("device", by["/dev/null"])
    for path, access in pairs(by) do
      assert.is_nil(path:match("^/proc"), path)
      assert.is_nil(path:match("^/etc"), path)
      assert.is_true(path ~= "/" and path ~= "/tmp" and path ~= os.getenv("HOME"), path)
      if access == "write" then assert.equals(core.realpath(seal.cache_dir()), path) end
    end
  end)
end)
