-- The timing modes (kreach.judge.modes): one table each in scripts/kreach/judge/modes/<name>.lua
-- for each name of kreach.kinds.MODES, and nothing else there. What a new mode needs, shown by
-- adding one: a copy of scripts/ with judge/modes/tepid.lua and "tepid" appended to kinds.MODES,
-- run (KREACH_LUA_DIR) through the timing engine on a logging device (plan.device, as
-- tests/lua/protocol_timing_spec.lua does) and through the policy's option check. A name without
-- its file is an error when the modes load.
local kinds = require "kreach.kinds"
local kreach = require "kreach"
local lfs = require "lfs"
local modes = require "kreach.judge.modes"
local support = require "support"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
local SCRIPTS = here .. "/../../scripts"

local function mode_files(root)
  local names = {}
  for f in lfs.dir(root .. "/kreach/judge/modes") do
    local name = f:match("^(.*)%.lua$")
    if name then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

-- a copy of scripts/ in a new directory, with `files` (path under kreach/ -> text) written and
-- kinds.MODES's list given `extra` after its own
local function tree(files, extra)
  local root = support.tmpdir() .. "/scripts"
  assert(os.execute(("cp -r %q %q"):format(SCRIPTS, root)))
  for path, text in pairs(files) do support.spit(root .. "/kreach/" .. path, text) end
  if extra then
    local kp = root .. "/kreach/kinds.lua"
    local src, n = support.slurp(kp):gsub('M%.MODES = { "cold", "hot", "graph" }', ('M.MODES = { "cold", "hot", "graph", %q }'):format(extra))
    assert(n == 1, "kinds.lua's MODES line moved: this spec must follow it")
    support.spit(kp, src)
  end
  return root
end

-- run(root, code) -> output, status: kreach running `code` (a file) with the library of root
local function run(root, code)
  local script = support.tmpfile(".lua")
  support.spit(script, code)
  return support.sh(("KREACH_LUA_DIR=%q %q %q 2>&1"):format(root, kreach.executable(), script))
end

local TEPID = [[
-- kreach.judge.modes.tepid: a mode made by tests/lua/modes_spec.lua: prepare, then the call
-- under the gate, and a note in the sampler's log of each sample
local M = { name = "tepid", flush = false, gated = true, poison_baseline_for_candidate = false, foreign = true }

function M.sample(sampler, s, set)
  if s.prepare then s.prepare(set) end
  sampler.dev.note("tepid")
  return sampler:timed_call(s, set)
end

return M
]]

-- the engine in the new mode on a logging device: one subject, 2 input sets, a few rounds
local ENGINE = [[
local json = require "kreach.json"
local timing = require "kreach.judge.timing"
local log, clock = {}, 0
local device = {
  event = function()
    return { record = function(e) e.at = clock end, elapsed_ms = function(e, later) return later.at - e.at end,
             free = function() end }
  end,
  gate = function()
    return { hold = function() log[#log + 1] = "hold" end, release = function() log[#log + 1] = "release" end,
             timeouts = function() return 0 end, free = function() end }
  end,
  flush = function() log[#log + 1] = "flush"; return 1 end,
  clocks = function() return nil, "none" end,
  synchronize = function() end,
  now = (function() local t = 0; return function() t = t + 1e-3; return t end end)(),
}
-- the mode's own note goes through the device table it is given
timing.DEVICE.note = function(what) log[#log + 1] = what end
device.note = timing.DEVICE.note
local subject = { name = "a", call = function(k) log[#log + 1] = "call " .. k; clock = clock + 1 end,
                  prepare = function(k) log[#log + 1] = "prepare " .. k end }
local r = timing.measure({ subject }, { mode = "tepid", min_samples = 3, max_samples = 3, warmup_min = 1, warmup_max = 1 },
                         { sets = 2, device = device })
local tepid, flushes = 0, 0
for _, l in ipairs(log) do
  if l == "tepid" then tepid = tepid + 1 elseif l == "flush" then flushes = flushes + 1 end
end
print(json.encode({ mode = r.mode, samples = r.subjects.a.samples, gated = r.gated, tepid = tepid, flushes = flushes,
                    flush_bytes = r.flush_bytes or json.null, first = { table.unpack(log, 1, 8) } }))
]]

describe("the timing modes", function()
  it("are one file in judge/modes/ for each name of kinds.MODES, and no other", function()
    local names = { table.unpack(kinds.MODES) }
    table.sort(names)
    assert.same(names, mode_files(SCRIPTS))
    for _, name in ipairs(kinds.MODES) do assert.equals(name, modes.get(name).name) end
    assert.has_error(function() modes.get("tepid") end, "timing: unknown mode 'tepid' (cold, hot, graph)")
  end)

  it("a name in kinds.MODES without its file is an error when the modes load", function()
    local root = tree({}, "tepid")
    local out, rc = run(root, 'require "kreach.judge.modes"\n')
    assert.is_not.equals(0, rc)
    assert.matches("the timing mode 'tepid' of kinds.MODES has no file judge/modes/tepid.lua", out, 1, true)
  end)

  it("a file in judge/modes/ without its name in kinds.MODES is found", function()
    local root = tree({ ["judge/modes/tepid.lua"] = TEPID })
    assert.is_not.same(mode_files(SCRIPTS), mode_files(root))
    assert.same({ "cold", "graph", "hot", "tepid" }, mode_files(root))
  end)

  it("a new mode needs its file and its name: the engine then samples in it", function()
    local root = tree({ ["judge/modes/tepid.lua"] = TEPID }, "tepid")
    local out, rc = run(root, ENGINE)
    assert.equals(0, rc, out)
    local r = require("kreach.json").decode(out:match("(%b{})%s*$"))
    assert.equals("tepid", r.mode)
    assert.same({ 1, 1, 1 }, r.samples)
    assert.is_true(r.gated)
    -- the warm-up's call and the three rounds' calls each went through the mode's sample; the
    -- plain calls on each set before them did not
    assert.equals(4, r.tepid)
    assert.equals(0, r.flushes)
    assert.same({ "prepare 1", "call 1", "prepare 2", "call 2", "prepare 1", "tepid", "hold", "call 1" }, r.first)
    -- and the CLI's choices, the policy's check and the speed of light take it from kinds.MODES
    out, rc = run(root, [[
local timing = require "kreach.judge.timing"
local o = timing.options({ mode = "tepid" })
print(o.mode, timing.sol({ bytes = 1e9, flops = 0 }, 1, { copy_bytes_per_s = 1e12 }, "tepid").bytes_bound_ms)
]])
    assert.equals(0, rc, out)
    assert.matches("^tepid\tnil", out)
  end)
end)
