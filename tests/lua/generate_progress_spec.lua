-- kreach.generate.progress (issue 35): the formatting with known answers (the ETA from the
-- median latency and the concurrency, the status line, the log's lines), the tracker on a
-- terminal and off one with a fake clock, and `kreach generate` against a real server on
-- 127.0.0.1 (tests/http_server.py) that answers a 429 then a reply, stderr not a terminal: the
-- retry's line with its wait, the done counts, no carriage return, stdout one JSON document;
-- --quiet shows none of it. No network beyond loopback, no GPU.
local cjson = require "cjson"
local support = require "support"
local progress = require "kreach.generate.progress"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local KREACH = require("kreach").executable()
local GOOD = support.slurp(here .. "/../candidates/019_relu.lua")

-- a writer that keeps what is written
local function sink()
  local t = { buf = {} }
  function t:write(...) for _, s in ipairs({ ... }) do self.buf[#self.buf + 1] = s end end
  function t:flush() end
  function t:text() return table.concat(self.buf) end
  return t
end

describe("kreach.generate.progress formatting", function()
  it("gives no ETA before three requests are done, then the median latency times the rounds left", function()
    assert.is_nil(progress.eta_s(70, { 10, 20 }, 4))
    -- median of {30, 10, 20} is 20 s; 69 left, 4 at a time: 18 rounds
    assert.equals(360, progress.eta_s(69, { 30, 10, 20 }, 4))
    -- an even count takes the lower middle one: {1, 2, 3, 100} -> 2
    assert.equals(2 * 3, progress.eta_s(5, { 100, 1, 3, 2 }, 2))
    assert.equals(0, progress.eta_s(0, { 1, 1, 1 }, 4))
  end)

  it("writes durations in seconds, minutes, hours", function()
    assert.equals("<1 s", progress.duration(0.2))
    assert.equals("1 s", progress.duration(0.6))
    assert.equals("45 s", progress.duration(45))
    assert.equals("1 min", progress.duration(59.6))
    assert.equals("3 min", progress.duration(170))
    assert.equals("2 h 5 min", progress.duration(7500))
  end)

  it("writes the status line, the retry line and the done line", function()
    assert.equals("kreach generate: 12 of 72 requests done, 4 in flight, 1 retrying in 2.0 s (429), ETA 3 min",
      progress.status_line{ done = 12, total = 72, in_flight = 4, retrying = 1, retry_in_s = 2, retry_reason = "429", eta_s = 180 })
    assert.equals("kreach generate: 0 of 72 requests done, 4 in flight, ETA unknown",
      progress.status_line{ done = 0, total = 72, in_flight = 4, retrying = 0 })
    assert.equals("kreach generate: 19_ReLU sample 1 turn 1: 429, retrying in 1.5 s (retry 1 of 5)",
      progress.retry_line{ label = "19_ReLU sample 1 turn 1", wait_s = 1.5, reason = "429", retry = 1, retries = 5 })
    assert.equals("kreach generate: 8 of 72 requests done (11%), ETA unknown", progress.done_line{ done = 8, total = 72 })
    assert.equals("kreach generate: 72 of 72 requests done (100%)", progress.done_line{ done = 72, total = 72, eta_s = 0 })
    assert.equals("503", progress.reason{ status = 503 })
    assert.equals("timeout", progress.reason{ status = 0, timed_out = true })
    assert.equals("transport error", progress.reason{ status = 0, error = "Connection refused" })
  end)
end)

describe("kreach.generate.progress tracker", function()
  it("off a terminal: a line per retry and per 10% done, no carriage return", function()
    local t, out = 0, sink()
    local p = progress.new{ total = 20, concurrency = 2, retries = 3, tty = false, out = out, now = function() return t end }
    p:start("a"); p:start("b")
    p:retry("a", "A", 2, "429", 1)
    p:tick()
    for i = 1, 20 do t = t + 1; p:start(i); p:finished(i, 4) end
    local s = out:text()
    assert.is_nil(s:find("\r", 1, true))
    assert.matches("kreach generate: A: 429, retrying in 2%.0 s %(retry 1 of 3%)\n", s)
    assert.matches("kreach generate: 2 of 20 requests done %(10%%%), ETA unknown\n", s)
    -- 4 done: median 4 s, 16 left two at a time: 32 s
    assert.matches("kreach generate: 4 of 20 requests done %(20%%%), ETA 32 s\n", s)
    assert.matches("kreach generate: 20 of 20 requests done %(100%%%)\n$", s)
    local n = 0
    for _ in s:gmatch("\n") do n = n + 1 end
    assert.equals(11, n) -- the retry, and ten steps of 10%
  end)

  it("on a terminal: one line redrawn in place, the wait counting down, erased at the end", function()
    local t, out = 100, sink()
    local p = progress.new{ total = 3, concurrency = 2, retries = 5, tty = true, out = out, now = function() return t end }
    p:start("a"); p:start("b")
    p:retry("a", "A", 2, "429", 1)
    t = t + 0.5
    p:tick()
    local s = out:text()
    assert.matches("\rkreach generate: 0 of 3 requests done, 1 in flight, 1 retrying in 1%.5 s %(429%), ETA unknown\27%[K$", s)
    assert.is_nil(s:find("\n", 1, true))
    p:line("kreach generate: B: ok")
    assert.matches("\r\27%[Kkreach generate: B: ok\n\rkreach generate: 0 of 3", out:text())
    p:close()
    assert.matches("\r\27%[K$", out:text())
  end)

  it("is silent with quiet", function()
    local out = sink()
    local p = progress.new{ total = 1, tty = false, out = out, quiet = true, now = function() return 0 end }
    p:start(1); p:retry(1, "x", 1, "429", 1); p:start(1); p:finished(1, 1); p:line("x"); p:close()
    assert.equals("", out:text())
  end)
end)

describe("kreach generate's progress", function()
  it("logs the retry after a 429 with its wait and the done counts on stderr; stdout stays one JSON document", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model" }\n')
    local body = { id = "chatcmpl-1", model = "test-model", choices = { { message = { role = "assistant", content = "```lua\n" .. GOOD .. "```\n" },
      finish_reason = "stop" } }, usage = { prompt_tokens = 1, completion_tokens = 2 } }
    local base, _, stop = support.http_server({ ["/v1/chat/completions"] = {
      { status = 429, headers = { ["Retry-After"] = "1" }, body = { error = { message = "rate limited" } } },
      { body = body }, { body = body },
    } })
    local function run(extra)
      return support.sh(("cd %q && { KREACH_TEST_KEY=k timeout 60 %q generate 19 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --samples 2 --concurrency 1 --retries 3 --out %q --db %q %s 2>%q; }"):format(
        dir, KREACH, dir .. "/cfg.lua", base .. "/v1", dir .. "/out", dir .. "/r.db", extra, dir .. "/err.txt"))
    end
    local out, rc = run("--json")
    local err = support.slurp(dir .. "/err.txt")
    assert.equals(0, rc, out .. err)
    assert.equals(2, cjson.decode(out).summary.requests)
    assert.is_nil(err:find("\r", 1, true), err)
    assert.matches("kreach generate: 19_ReLU sample 1 turn 1: 429, retrying in 1%.0 s %(retry 1 of 3%)\n", err)
    assert.matches("kreach generate: 1 of 2 requests done %(50%%%), ETA unknown\n", err)
    assert.matches("kreach generate: 2 of 2 requests done %(100%%%)\n", err)
    -- the reply's line, as before
    assert.matches("kreach generate: 19_ReLU sample 2 turn 1: ok\n", err)
    -- --quiet: none of it (a second run asks nothing, --refresh asks again)
    out, rc = run("--refresh --quiet")
    stop()
    err = support.slurp(dir .. "/err.txt")
    assert.equals(0, rc, out .. err)
    assert.equals("", err)
  end)
end)
