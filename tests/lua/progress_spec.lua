-- kreach.progress (issue 37): the formatting with known answers (durations, the time left from
-- the items done, the status line, the log's lines, the cadence of the plain lines), the
-- tracker on a terminal and off one with a fake clock, kreach.run.campaign's progress on top of
-- it, and a command run for real: `kreach oracle` over a suite on the host device (the CPU),
-- its standard error a file (plain lines, no carriage return, no escape), its standard output
-- one JSON document; KREACH_PROGRESS=off and a bad KREACH_PROGRESS; and under a pseudo-terminal
-- (script(1)), the status line redrawn in place. No GPU.
local cjson = require "cjson"
local core = require "kreach.core"
local support = require "support"
local progress = require "kreach.progress"
local campaign = require "kreach.run.campaign"
local ev = require "kreach.run.evaluate"
local evaluation = require "kreach.results.evaluation"
local verdict = require "kreach.verdict"

local KREACH = require("kreach").executable()

-- the trackers made here read KREACH_PROGRESS (it overrides tty =): the spec needs it unset
assert(not os.getenv("KREACH_PROGRESS") or os.getenv("KREACH_PROGRESS") == "" or os.getenv("KREACH_PROGRESS") == "auto",
  "this spec checks what each mode writes: run it with KREACH_PROGRESS unset")

-- a writer that keeps what is written
local function sink()
  local t = { buf = {} }
  function t:write(...) for _, s in ipairs({ ... }) do self.buf[#self.buf + 1] = tostring(s) end end
  function t:flush() end
  function t:text() return table.concat(self.buf) end
  return t
end

local function count_lines(s)
  local n = 0
  for _ in s:gmatch("\n") do n = n + 1 end
  return n
end

describe("kreach.progress formatting", function()
  it("writes durations in seconds, minutes, hours", function()
    assert.equals("<1 s", progress.duration(0.2))
    assert.equals("1 s", progress.duration(0.6))
    assert.equals("45 s", progress.duration(45))
    assert.equals("1 min", progress.duration(59.6))
    assert.equals("3 min", progress.duration(170))
    assert.equals("2 h 5 min", progress.duration(7500))
  end)

  it("gives the time left from the items' mean (or median) duration and the rounds left", function()
    assert.is_nil(progress.eta_s(5, {}))
    -- mean of {2, 4, 6} is 4 s; 7 left one at a time: 28 s
    assert.equals(28, progress.eta_s(7, { 2, 4, 6 }))
    -- 7 left three at a time: 3 rounds of 4 s
    assert.equals(12, progress.eta_s(7, { 2, 4, 6 }, { concurrency = 3 }))
    -- the median of {100, 1, 3, 2} (the lower middle one) is 2 s; 5 left two at a time: 3 rounds
    assert.equals(6, progress.eta_s(5, { 100, 1, 3, 2 }, { statistic = "median", concurrency = 2 }))
    assert.is_nil(progress.eta_s(5, { 1, 2 }, { min_done = 3 }))
    assert.equals(0, progress.eta_s(0, { 1 }))
    assert.equals(2, progress.median({ 3, 1, 2 }))
    assert.equals(2.5, progress.mean({ 1, 4 }))
  end)

  it("writes the status line (the item last), the log's line and an item's line", function()
    assert.equals("kreach eval: 3 of 10 (30%), 2 min elapsed, ETA 5 min, 19_ReLU x.lua: timing",
      progress.status_line{ prefix = "kreach eval", done = 3, total = 10, elapsed_s = 120, eta_s = 300, item = "19_ReLU x.lua", what = "timing" })
    assert.equals("kreach eval: 0 of 4 (0%), <1 s elapsed, ETA unknown",
      progress.status_line{ prefix = "kreach eval", done = 0, total = 4, elapsed_s = 0 })
    -- an item's name is untrusted text: no control character reaches the terminal
    assert.equals("kreach eval: 0 of 1 (0%), ETA unknown, a\\x1b[2Kb",
      progress.status_line{ prefix = "kreach eval", done = 0, total = 1, item = "a\27[2Kb" })
    assert.equals("kreach bench: 3 of 10 done (30%), 45 s elapsed, ETA 2 min",
      progress.plain_line{ prefix = "kreach bench", done = 3, total = 10, elapsed_s = 45, eta_s = 105 })
    assert.equals("kreach bench: 10 of 10 done (100%) in 3 min",
      progress.plain_line{ prefix = "kreach bench", done = 10, total = 10, elapsed_s = 170, eta_s = 0 })
    assert.equals("[3/10] 19_ReLU  x.lua  correct  (ETA 5 min)",
      progress.item_line{ done = 3, total = 10, line = "19_ReLU  x.lua  correct", eta_s = 300 })
    assert.equals("[10/10] 19_ReLU  x.lua  correct", progress.item_line{ done = 10, total = 10, line = "19_ReLU  x.lua  correct", eta_s = 0 })
    assert.equals("[1/10] a", progress.item_line{ done = 1, total = 10, line = "a" })
  end)

  it("cuts the status line to the width, never inside a UTF-8 sequence", function()
    assert.equals("short", progress.fit("short"))
    assert.equals(progress.WIDTH, #progress.fit(("x"):rep(500)))
    -- "é" is two bytes: one that would straddle the width is left out whole
    local l = progress.fit(("x"):rep(progress.WIDTH - 1) .. "\xC3\xA9yz")
    assert.equals(("x"):rep(progress.WIDTH - 1), l)
  end)

  it("gives a plain line per item, or one each every_pct more percent and the last", function()
    local function lines_at(total, every)
      local step, at = 0, {}
      for done = 1, total do
        local due
        due, step = progress.due(step, done, total, every)
        if due then at[#at + 1] = done end
      end
      return table.concat(at, " ")
    end
    assert.equals("1 2 3 4 5", lines_at(5, nil))
    assert.equals("2 4 6 8 10 12 14 16 18 20", lines_at(20, 10))
    -- 12 items: 1 is 8%, 7 is 58% (still the step of 50%)
    assert.equals("2 3 4 5 6 8 9 10 11 12", lines_at(12, 10))
    assert.equals("1 2 3", lines_at(3, 10))
    assert.equals("50 100", lines_at(100, 50))
  end)
end)

describe("kreach.progress tracker", function()
  it("off a terminal: an item's own line numbered with the time left; reused items give no duration", function()
    local t, out = 0, sink()
    local p = progress.new{ prefix = "kreach eval", total = 4, tty = false, out = out, now = function() return t end }
    p:start("a"); t = t + 10; p:finished{ line = "a ok" }
    p:start("b"); t = t + 1; p:finished{ line = "b reused", skipped = true }
    p:status("timing", "c"); t = t + 30; p:finished{ line = "c ok" }
    p:start("d"); t = t + 5; p:finished{ line = "d ok" }
    -- a: 10 s, 3 left; b skipped: still 10 s each, 2 left; c: 30 s, the mean 20 s, 1 left
    assert.equals("[1/4] a ok  (ETA 30 s)\n[2/4] b reused  (ETA 20 s)\n[3/4] c ok  (ETA 20 s)\n[4/4] d ok\n", out:text())
  end)

  it("off a terminal without item lines: the log's line every 10%, no carriage return", function()
    local t, out = 0, sink()
    local p = progress.new{ prefix = "kreach bench", total = 20, tty = false, out = out, every_pct = 10, now = function() return t end }
    for i = 1, 20 do p:start(("item %d"):format(i)); t = t + 3; p:status("timing"); p:tick(); p:finished() end
    p:close()
    local s = out:text()
    assert.is_nil(s:find("\r", 1, true))
    assert.is_nil(s:find("\27", 1, true))
    assert.equals(10, count_lines(s))
    assert.matches("^kreach bench: 2 of 20 done %(10%%%), 6 s elapsed, ETA 54 s\n", s)
    assert.matches("\nkreach bench: 20 of 20 done %(100%%%) in 1 min\n$", s)
  end)

  it("on a terminal: one line redrawn in place, erased when an item is done and at the end", function()
    local t, out = 0, sink()
    local p = progress.new{ prefix = "kreach eval", total = 2, tty = true, out = out, now = function() return t end }
    p:start("19_ReLU x.lua")
    assert.equals("\rkreach eval: 0 of 2 (0%), <1 s elapsed, ETA unknown, 19_ReLU x.lua\27[K", out:text())
    t = 4
    p:status("timing")
    assert.matches("\rkreach eval: 0 of 2 %(0%%%), 4 s elapsed, ETA unknown, 19_ReLU x%.lua: timing\27%[K$", out:text())
    p:finished{ line = "19_ReLU  x.lua  correct" }
    -- erased, the item's line, and no status line until the next item starts
    assert.matches("\27%[K\r\27%[K%[1/2%] 19_ReLU  x%.lua  correct  %(ETA 4 s%)\n$", out:text())
    p:line("a note")
    assert.matches("\na note\n\rkreach eval: 1 of 2 %(50%%%), 4 s elapsed, ETA 4 s\27%[K$", out:text())
    p:tick() -- within M.REDRAW_S of the last draw: nothing
    local before = out:text()
    t = 4 + progress.REDRAW_S
    p:tick()
    assert.is_true(#out:text() > #before)
    p:close()
    assert.matches("\r\27%[K$", out:text())
    -- cut to the width: a line that wraps is not redrawn in place
    local q = progress.new{ prefix = "kreach eval", total = 1, tty = true, out = sink(), now = function() return 0 end }
    q:start(("x"):rep(500))
    assert.equals(1 + progress.WIDTH + 3, #q.out:text())
  end)

  it("with quiet: none of its own lines; the caller's lines still come, without the time left", function()
    local out = sink()
    local p = progress.new{ prefix = "kreach eval", total = 2, tty = true, quiet = true, out = out, now = function() return 0 end }
    p:start("a"); p:status("timing"); p:tick(); p:finished{ line = "a ok" }
    p:start("b"); p:finished(); p:close()
    assert.equals("[1/2] a ok\n", out:text())
  end)

  it("rejects an unknown option and a total that is not a count", function()
    assert.has_error(function() progress.new{ totl = 3 } end, "progress.new: unknown field 'totl'")
    assert.has_error(function() progress.new{ total = -1 } end, "progress.new: total must be an integer >= 0")
  end)
end)

describe("kreach.run.campaign's progress", function()
  local function rec(verdict, reused)
    return { problem_id = 19, problem_name = "19_ReLU", candidate_path = "c/x.lua", verdict = verdict, reason = "r", reused = reused }
  end
  it("off a terminal: a line per evaluation (its cells, numbered); with lines = false, the log's line every 10%", function()
    local out = sink()
    local p = campaign.progress(2, { tty = false, out = out, command = { "kreach", "eval" } })
    p:status("19_ReLU x.lua", "correctness")
    p:finished(rec("compile_error"))
    p:finished(rec("compile_error", true))
    p:close()
    local s = out:text()
    assert.is_nil(s:find("\r", 1, true))
    assert.equals(2, count_lines(s))
    assert.matches("^%[1/2%] [^\n]*compile_error[^\n]*%(ETA [^\n]*%)\n%[2/2%] [^\n]*compile_error[^\n]*\n$", s)
    out = sink()
    p = campaign.progress(3, { tty = false, out = out, lines = false, command = { "kreach", "bench", "dlrm-bench" } })
    for _ = 1, 3 do p:status("19_ReLU", "timing"); p:finished(rec("baseline")) end
    assert.matches("^kreach bench: 1 of 3 done %(33%%%), [^\n]* elapsed, ETA [^\n]*\nkreach bench: 2 of 3 done %(66%%%)[^\n]*\nkreach bench: 3 of 3 done %(100%%%) in [^\n]*\n$", out:text())
  end)
end)

-- kreach eval's run (kreach.run.evaluate.run through kreach.run.campaign.run) without a GPU, as
-- tests/lua/store_resume_spec.lua runs it: a stand-in device and a stand-in for the workers'
-- evaluation (which takes 2 s of a fake clock's time); the progress is the real one
describe("kreach eval's progress through the campaign", function()
  local restore, t
  before_each(function()
    t = 0
    restore = support.stand_in_gpu("GPU-0000-progress", function(item, o, ctx)
      ctx.status("correctness")
      t = t + 2
      return evaluation.finish(evaluation.new(item, o), { verdict = verdict.new("correct"), wall_s = 2 })
    end)
  end)
  after_each(function()
    restore()
  end)

  it("off a terminal: a line per evaluation with the time left; reused ones give none", function()
    local dir = support.tmpdir()
    local problem_path = dir .. "/019_ReLU.lua"
    support.spit(problem_path, support.slurp("problems/kernelbench/level1/019_ReLU.lua"))
    local cands = {}
    for _, n in ipairs({ "a", "b", "c" }) do
      cands[#cands + 1] = dir .. "/" .. n .. ".lua"
      support.spit(cands[#cands], ("-- candidate %s\nreturn {}\n"):format(n))
    end
    local function run()
      local out = sink()
      -- the tracker's clock is the fake one: kreach.progress.new takes kreach.core.now, replaced here
      local real_now = core.now
      core.now = function() return t end
      local ok, res = pcall(ev.run, { target = problem_path, candidates = cands, dtype = "f32", db = dir .. "/r.db",
                                      command = { "kreach", "eval" }, tty = false, log = function() end, out = out })
      core.now = real_now
      assert(ok, res)
      return out:text(), res
    end
    local s, res = run()
    assert.equals(3, #res.records)
    assert.is_nil(s:find("\r", 1, true))
    -- 2 s each: after the first, 2 left, 4 s; after the second, 2 s; the last without
    assert.matches("^%[1/3%] 019 +19_ReLU +a%.lua +correct[^\n]*  %(ETA 4 s%)\n%[2/3%] [^\n]*b%.lua[^\n]*  %(ETA 2 s%)\n%[3/3%] [^\n]*c%.lua +correct[^(\n]*\n$", s)
    -- again: all three reused from the database, no duration, so no time left
    s = run()
    assert.matches("^%[1/3%] [^\n]*a%.lua[^(\n]*\n%[2/3%] [^(\n]*\n%[3/3%] [^(\n]*\n$", s)
    support.rm_tree(dir)
  end)
end)

describe("a command's progress", function()
  local dir = support.tmpdir()
  -- (KREACH_PROGRESS=auto unless a test sets it: the display chosen by the terminal)
  local ORACLE = ("%q --device host oracle dlrm-bench --small --json"):format(KREACH)

  it("off a terminal: plain lines on standard error, every 10%, no carriage return; standard output one JSON document", function()
    local out, rc = support.sh(("{ KREACH_PROGRESS=auto %s 2>%q; }"):format(ORACLE, dir .. "/err.txt"))
    local err = support.slurp(dir .. "/err.txt")
    assert.equals(0, rc, out .. err)
    local doc = cjson.decode(out)
    assert.equals(12, doc.problems)
    assert.equals(12, #doc.results)
    assert.is_nil(err:find("\r", 1, true), err)
    assert.is_nil(err:find("\27", 1, true), err)
    -- 12 problems: a line at 2 (16%), 3, 4, 5, 6, 8, 9, 10, 11 and the last (1 is 8%, 7 is 58%)
    assert.equals(10, count_lines(err), err)
    for l in err:gmatch("[^\n]+") do assert.matches("^kreach oracle: %d+ of 12 done %(%d+%%%)", l) end
    assert.matches("^kreach oracle: 2 of 12 done %(16%%%), [^\n]+ elapsed, ETA [^\n]+\n", err)
    assert.is_nil(err:find("kreach oracle: 7 of 12", 1, true))
    assert.matches("\nkreach oracle: 12 of 12 done %(100%%%) in [^\n]+\n$", err)
  end)

  it("says nothing with KREACH_PROGRESS=off; a KREACH_PROGRESS it does not know is said once and taken as auto", function()
    local out, rc = support.sh(("{ KREACH_PROGRESS=off %s 2>%q; }"):format(ORACLE, dir .. "/err.txt"))
    assert.equals(0, rc, out)
    assert.equals(12, cjson.decode(out).problems)
    assert.equals("", support.slurp(dir .. "/err.txt"))
    out, rc = support.sh(("{ KREACH_PROGRESS=sometimes %s 2>%q; }"):format(ORACLE, dir .. "/err.txt"))
    assert.equals(0, rc, out)
    assert.equals(12, cjson.decode(out).problems)
    local err = support.slurp(dir .. "/err.txt")
    assert.matches("^kreach: warning: KREACH_PROGRESS=sometimes is not auto, plain or off: taken as auto\nkreach oracle: 2 of 12 done", err)
    local _, n = err:gsub("warning", "")
    assert.equals(1, n)
  end)

  it("on a terminal (script(1)'s pseudo-terminal): the status line redrawn in place, the problem last; KREACH_PROGRESS=plain: the plain lines", function()
    local _, has = support.sh("command -v script >/dev/null")
    assert.equals(0, has, "script(1) (util-linux) is needed to give the command a terminal")
    local inner = ("%s 2>&1 >/dev/null"):format(ORACLE)
    local out, rc = support.sh(("KREACH_PROGRESS=auto script -qec %q /dev/null"):format(inner))
    assert.equals(0, rc, out)
    assert.truthy(out:find("\rkreach oracle: 0 of 12 (0%), ", 1, true), out)
    assert.matches("\rkreach oracle: 11 of 12 %(91%%%), [^\r]*, 12_SparseIdPreprocessing\27%[K\r\27%[K", out)
    assert.is_nil(out:find("done (", 1, true), out)
    out, rc = support.sh(("KREACH_PROGRESS=plain script -qec %q /dev/null"):format(inner))
    assert.equals(0, rc, out)
    assert.is_nil(out:find("\27", 1, true), out)
    assert.matches("kreach oracle: 12 of 12 done %(100%%%) in ", out)
  end)
end)
