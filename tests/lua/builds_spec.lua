-- kreach.run.builds: the build pool ahead of the GPU worker (--jobs), its pause while a call
-- is timed, what a build's end means for its item, and the parsing of --jobs and --devices
-- (kreach.run.devices) with the dispatch of items to GPUs. The builds of real Lua candidates
-- run here on the CPU: NVRTC compiles for an explicit architecture without a GPU.
local kreach = require "kreach"
local builds = require "kreach.run.builds"
local devices = require "kreach.run.devices"
local json = require "kreach.json"
local pair = require "kreach.run.pair"
local lfs = require "lfs"

local bin = kreach.executable()

local function sh(script) return { "sh", "-c", script } end
local function result_line(t) return "echo 'result " .. json.encode(t) .. "'" end

-- waits (up to 5 s) for pred() to hold
local function eventually(pred)
  local t0 = kreach.now()
  while kreach.now() - t0 < 5 do
    if pred() then return true end
    os.execute("sleep 0.02")
  end
  return pred()
end

local function tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end

describe("--jobs", function()
  it("takes a whole number of build workers, 1 or more", function()
    assert.equals(4, builds.parse_jobs("4"))
    assert.equals(16, builds.parse_jobs(" 16 "))
    for _, bad in ipairs({ "0", "-1", "2.5", "x", "", "1e3" }) do
      local n, err = builds.parse_jobs(bad)
      assert.is_nil(n, bad)
      assert.matches("%-%-jobs: '.*' is not a whole number of build workers", err)
    end
  end)
  it("takes 0 in kreach eval (no builds ahead)", function()
    assert.equals(0, builds.parse_jobs_or_zero("0"))
    assert.equals(3, builds.parse_jobs_or_zero("3"))
    assert.is_nil((builds.parse_jobs_or_zero("-0x")))
  end)
  it("defaults to the number of cores", function()
    assert.is_true(builds.cores() >= 1)
  end)
end)

describe("the build pool", function()
  it("runs at most `jobs` builds at once, started in the order they were submitted", function()
    local pool = builds.new{ jobs = 2 }
    -- each build records when it runs: a file per build while it runs, counted by the others
    local dir = tmpdir()
    for i = 1, 5 do
      pool:submit("b" .. i, sh(("touch %s/run%d; sleep 0.3; n=$(ls %s | wc -l); rm %s/run%d; %s%s"):format(
        dir, i, dir, dir, i, "echo \"result {\\\"built\\\":true,\\\"peers\\\":$n}\"", "")))
    end
    assert.equals(5, pool:pending())
    for i = 1, 5 do
      local e = pool:wait("b" .. i)
      assert.is_true(e.ok, tostring(e.verdict and e.verdict.reason))
      assert.is_true(e.result.built)
      assert.is_true(e.result.peers <= 2, "a build saw " .. e.result.peers .. " running")
    end
    assert.same({ "b1", "b2", "b3", "b4", "b5" }, pool.started_order)
    assert.equals(2, pool:stats().max_running)
    assert.equals(0, pool:pending())
    pool:close()
    os.execute(("rm -rf %q"):format(dir))
  end)

  it("builds a key once", function()
    local pool = builds.new{ jobs = 1 }
    pool:submit("k", sh(result_line({ built = true, n = 1 })))
    pool:submit("k", sh(result_line({ built = true, n = 2 })))
    assert.equals(1, pool:pending())
    assert.equals(1, pool:wait("k").result.n)
    assert.is_nil(pool:wait("never submitted"))
  end)

  it("turns a build's end into its item's verdict: the candidate's failures only", function()
    local pool = builds.new{ jobs = 3 }
    pool:submit("ce", sh(result_line({ verdict = { verdict = "compile_error", reason = "x.lua(3): error: expected a semicolon" } })))
    pool:submit("ok", sh(result_line({ built = true, compile_ms = 1.5 })))
    pool:submit("dies", sh("echo 'phase compile'; kill -SEGV $$"))
    local v = builds.verdict_of(pool:wait("ce"))
    assert.equals("compile_error", v.verdict)
    assert.is_nil((builds.verdict_of(pool:wait("ok"))))
    -- a worker that died is no verdict of the candidate's: the GPU worker builds it again
    local v2, note = builds.verdict_of(pool:wait("dies"))
    assert.is_nil(v2)
    assert.matches("its build ahead failed %(runtime_error: the worker died of SIGSEGV in phase 'compile'", note)
    local s = pool:stats()
    assert.equals(1, s.built)
    assert.equals(2, s.failed)
  end)

  it("stops its builds and everything they started while paused, starts none, and continues them after", function()
    local pool = builds.new{ jobs = 1 }
    -- the build starts a child and counts while it runs
    local dir = tmpdir()
    pool:submit("a", sh(("echo 'phase build'; sleep 30 & i=0; while [ $i -lt 8 ]; do echo $i > %s/count; sleep 0.1; i=$((i+1)); done; kill $!; %s"):format(
      dir, result_line({ built = true }))), { timeout_s = 3 })
    pool:submit("b", sh(result_line({ built = true })))
    pool:service(0)
    local pid = pool.running[1].r:pid()
    assert.is_true(eventually(function() return io.open(dir .. "/count") ~= nil end))
    pool:pause()
    local tree = builds.tree(pid)
    assert.is_true(#tree >= 2, "the build and its sleep")
    for _, p in ipairs(tree) do
      assert.is_true(eventually(function() return builds.state(p) == "T" end), "process " .. p .. " not stopped")
    end
    local f = io.open(dir .. "/count"); local before = f:read("a"); f:close()
    -- longer than its phase's limit (3 s) would allow, were the clock running
    local t0 = kreach.now()
    while kreach.now() - t0 < 3.5 do pool:service(0.1) end
    f = io.open(dir .. "/count"); local after = f:read("a"); f:close()
    assert.equals(before, after)
    assert.is_nil(pool:result("a"))
    assert.same({ "a" }, pool.started_order) -- nothing started while paused
    pool:resume()
    for _, p in ipairs(builds.tree(pid)) do assert.is_not.equals("T", builds.state(p)) end
    local e = pool:wait("a")
    assert.is_true(e.ok, tostring(e.verdict and e.verdict.reason))
    assert.is_true(pool:wait("b").ok)
    local s = pool:stats()
    assert.equals(1, s.paused)
    assert.is_true(s.paused_s >= 3.5)
    os.execute(("rm -rf %q"):format(dir))
  end)

  it("made with pause = false lets its builds run through a pause", function()
    local pool = builds.new{ jobs = 1, pause = false }
    pool:submit("a", sh("sleep 0.2; " .. result_line({ built = true })))
    pool:service(0)
    pool:pause()
    assert.is_false(pool.paused)
    assert.is_true(pool:wait("a").ok)
  end)

  it("kills what runs when closed", function()
    local pool = builds.new{ jobs = 1 }
    pool:submit("a", sh("sleep 30"))
    pool:service(0)
    local pid = pool.running[1].r:pid()
    pool:close()
    assert.is_true(eventually(function() return builds.state(pid) == nil end))
    assert.equals(0, pool:pending())
  end)
end)

describe("Lua candidates built by the pool on the CPU", function()
  local root = lfs.currentdir()

  it("compile them into the NVRTC cache, and a compile error is the item's verdict", function()
    -- tests/lua/builds_cpu.lua builds them in a child whose KREACH_CACHE_DIR is a fresh directory
    local cache = tmpdir()
    local p = io.popen(("KREACH_CACHE_DIR=%q %q tests/lua/builds_cpu.lua 2>&1"):format(cache, bin))
    local out = p:read("a")
    p:close()
    local res = json.decode(out:match("RESULT (.-)\n") or error(out))
    for i = 1, 3 do
      local e = res["023_v" .. i .. ".lua"]
      assert.is_true(e.ok, out)
      assert.is_true(e.result.built, out)
      assert.is_nil(e.final)
    end
    local bad = res["023_bad.lua"]
    assert.equals("compile_error", bad.final.verdict)
    assert.matches("023_bad", bad.final.reason)
    local n = 0
    for fn in lfs.dir(cache) do if fn:match("%.kcubin$") then n = n + 1 end end
    assert.equals(3, n) -- one cache entry per candidate that compiled
    assert.equals(2, res.stats.max_running)
    os.execute(("rm -rf %q"):format(cache))
  end)

  it("kreach eval --build-only builds a directory with --jobs workers and says what each came to", function()
    local dir, cache = tmpdir(), tmpdir()
    os.execute(("cp %q %q/023_a.lua"):format(root .. "/examples/023_softmax_online.lua", dir))
    os.execute(("cp %q %q/026_b.lua"):format(root .. "/examples/026_gelu_float4.lua", dir))
    local p = io.popen(("KREACH_CACHE_DIR=%q %q eval kernelbench-l1 %q --build-only --arch sm_90 --jobs 2 --json 2>/dev/null"):format(
      cache, bin, dir))
    local res = json.decode(p:read("a"))
    p:close()
    assert.equals(2, res.jobs)
    assert.equals(2, #res.builds)
    for _, b in ipairs(res.builds) do assert.equals("built", b.verdict) end
    assert.is_true(res.wall_s > 0)
    -- --jobs 0 builds nothing; --arch is for --build-only
    local q = io.popen(("%q eval kernelbench-l1 %q --build-only --jobs 0 2>&1; echo \"status $?\""):format(bin, dir))
    local out = q:read("a")
    q:close()
    assert.matches("needs at least one build worker", out)
    assert.matches("status 2", out)
    os.execute(("rm -rf %q %q"):format(dir, cache))
  end)
end)

describe("--devices", function()
  it("takes GPU numbers or all", function()
    assert.same({ 0, 1 }, devices.parse("0,1"))
    assert.same({ 0, 2, 3 }, devices.parse(" 3, 0 ,2 "))
    assert.same({ all = true }, devices.parse("all"))
    for bad, why in pairs({ [""] = "empty", ["0,,1"] = "is not a GPU number", ["a"] = "is not a GPU number",
                            ["1,1"] = "named twice", ["-1"] = "is not a GPU number", ["99"] = "past the 64 GPUs" }) do
      local d, err = devices.parse(bad)
      assert.is_nil(d, bad)
      assert.matches(why, err, 1, true)
    end
  end)
  it("resolves all and refuses a GPU the machine lacks", function()
    assert.same({ 0, 1, 2, 3 }, devices.resolve({ all = true }, 4))
    assert.same({ 1 }, devices.resolve({ 1 }, 2))
    local d, err = devices.resolve({ 0, 2 }, 2)
    assert.is_nil(d)
    assert.matches("there is no GPU 2 %(this machine has 2: 0 to 1%)", err)
    assert.matches("no GPU", select(2, devices.resolve({ all = true }, 0)))
  end)
  it("pins a worker to its GPU: a variable given to the worker replaces the one it would inherit", function()
    local worker = require "kreach.run.worker"
    -- the seal sets LANG=C for every worker; a given value takes its place, not a second entry
    local r = worker.run(sh("echo \"result {\\\"lang\\\":\\\"$LANG\\\",\\\"n\\\":$(env | grep -c '^LANG=')}\""), { env = { "LANG=en_X" } })
    assert.equals("en_X", r.lang)
    assert.equals(1, r.n)
    assert.same({ "CUDA_VISIBLE_DEVICES=3", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "KREACH_DEVICE=0" }, devices.env(3))
    -- where kreach itself sees a subset, the numbers are its own
    assert.same({ "CUDA_VISIBLE_DEVICES=7", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "KREACH_DEVICE=0" }, devices.env(1, "5,7"))
    assert.equals("GPU-abc", devices.visible(0, "GPU-abc"))
    local v, err = devices.visible(2, "5,7")
    assert.is_nil(v)
    assert.matches("GPU 2 is not among the 2 of CUDA_VISIBLE_DEVICES=5,7", err)
  end)
  it("gives each item to a free GPU, the lowest-numbered first, and waits when all are busy", function()
    local d = devices.dispatcher({ 1, 0 })
    assert.equals(0, devices.take(d, "i1"))
    assert.equals(1, devices.take(d, "i2"))
    assert.is_nil(devices.take(d, "i3"))
    assert.equals("i2", devices.give(d, 1))
    assert.equals(1, devices.take(d, "i3"))
    assert.is_false(devices.idle(d))
    devices.give(d, 0); devices.give(d, 1)
    assert.is_true(devices.idle(d))
    assert.has_error(function() devices.give(d, 0) end)
  end)
  it("plans items over GPUs as they come free", function()
    local p = devices.plan({ 3, 1, 1, 1, 2 }, { 0, 1 })
    assert.same({ device = 0, start = 0, finish = 3 }, p[1])
    assert.same({ device = 1, start = 0, finish = 1 }, p[2])
    assert.same({ device = 1, start = 1, finish = 2 }, p[3])
    assert.same({ device = 1, start = 2, finish = 3 }, p[4])
    assert.same({ device = 0, start = 3, finish = 5 }, p[5])
  end)
end)

describe("a campaign on several GPUs (kreach.run.campaign.run_on_devices)", function()
  local campaign = require "kreach.run.campaign"
  local worker = require "kreach.run.worker"

  -- each evaluation is a real worker process that sleeps and reports the GPU it was pinned to
  local function spec_of(n_items, ndev, sleep_s)
    local items = {}
    for i = 1, n_items do items[i] = { label = "item" .. i, eval_key = "k" .. i } end
    local devs = {}
    for i = 1, ndev do
      local n = i - 1
      devs[i] = { index = n, env = devices.env(n), info = { uuid = "GPU-" .. n, name = "gpu " .. n } }
    end
    return {
      items = items, devices = devs,
      evaluate = function(item, ctx)
        local r, v = worker.run(sh(("sleep %g; echo \"result {\\\"seen\\\":\\\"$CUDA_VISIBLE_DEVICES\\\"}\""):format(sleep_s)),
                                { env = ctx.env, idle = ctx.idle })
        assert(r, v and v.reason)
        return { label = item.label, verdict = "correct", seen = r.seen, gpu_index = ctx.gpu.index }
      end,
    }
  end

  it("runs one evaluation per GPU at once, each pinned to its GPU, and writes every record itself", function()
    local spec = spec_of(4, 2, 0.6)
    local stored = {}
    local t0 = kreach.now()
    local recs = campaign.run_on_devices(spec, {}, {
      feed = function() end, cals = {}, dev = {}, progress = campaign.progress(4, { lines = false, out = io.open("/dev/null", "w") }),
      store = function(item, rec) stored[#stored + 1] = item.label; rec.stored = true end })
    local wall = kreach.now() - t0
    -- four 0.6 s evaluations on two GPUs: two rounds, not four (the bound leaves room for a
    -- loaded machine; one GPU would take at least 2.4 s)
    assert.is_true(wall < 2.2, ("took %.2f s"):format(wall))
    assert.equals(4, #recs)
    for i, r in ipairs(recs) do
      assert.equals("item" .. i, r.label) -- in the items' order
      assert.is_true(r.stored)
      assert.equals(tostring(r.gpu_index), r.seen) -- the worker saw its own GPU alone
      assert.same({ index = r.gpu_index, uuid = "GPU-" .. r.gpu_index, name = "gpu " .. r.gpu_index }, r.gpu)
    end
    assert.equals(4, #stored)
    local on = {}
    for _, r in ipairs(recs) do on[r.gpu_index] = (on[r.gpu_index] or 0) + 1 end
    assert.equals(2, on[0])
    assert.equals(2, on[1])
  end)

  it("reports stored evaluations without a GPU, in order", function()
    local spec = spec_of(3, 2, 0.1)
    local found = { [2] = { label = "item2", verdict = "correct" } }
    local n = 0
    local recs = campaign.run_on_devices(spec, found, {
      feed = function() end, cals = {}, dev = {}, progress = campaign.progress(3, { lines = false, out = io.open("/dev/null", "w") }),
      store = function() n = n + 1 end })
    assert.equals(2, n)
    assert.is_true(recs[2].reused)
    assert.is_nil(recs[2].gpu)
    assert.equals("item3", recs[3].label)
  end)
end)
