-- kreach.http against a real HTTP server on 127.0.0.1 (tests/http_server.py, scripted faults):
-- the retries of 429 (its Retry-After honoured), 500, 503 and a dropped connection, and their
-- spacing; no retry of 401 and 400; a response slower than the timeout, retried then given up;
-- a body that is not JSON returned as it came; at most `concurrency` requests in flight; a
-- request's secret header in nothing returned; the progress hooks. No network beyond loopback.
local http = require "kreach.http"
local cjson = require "cjson"
local support = require "support"


local SECRET = "sk-test-7f3a9c2e1b5d4e6f8a0b"

local serve = support.http_server

local function post(base, path)
  return { url = base .. path, method = "POST", headers = { "Content-Type: application/json", "Authorization: Bearer " .. SECRET },
           body = '{"model": "m"}' }
end

local FAST = { base_delay_s = 0.05, max_delay_s = 0.2, timeout_s = 5, connect_timeout_s = 5 }
local function opts(extra)
  local o = {}
  for k, v in pairs(FAST) do o[k] = v end
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

describe("kreach.http", function()
  it("parses Retry-After as seconds and as an HTTP date, and response headers", function()
    assert.equals(3, http.retry_after("3"))
    assert.equals(0.5, http.retry_after(" 0.5 "))
    assert.is_nil(http.retry_after("soon"))
    -- Wed, 21 Oct 2015 07:28:00 GMT is 1445412480
    assert.equals(20, http.retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412460))
    local h = http.headers("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too Many\r\nRetry-After: 2\r\nX-A:  b \r\n\r\n")
    assert.equals("2", h["retry-after"])
    assert.equals("b", h["x-a"])
    assert.equals("[redacted] and [redacted]x", http.redact(SECRET .. " and " .. SECRET .. "x", { SECRET }))
  end)

  it("retries 429 (after its Retry-After), 500, 503 and a dropped connection, then succeeds", function()
    local base, log, stop = serve({ ["/v1/chat/completions"] = {
      { status = 429, headers = { ["Retry-After"] = "1" }, body = '{"error": "slow down"}' },
      { status = 500, body = "oops" },
      { status = 503, body = "busy" },
      { drop = true },
      { status = 200, body = { choices = { { message = { content = "hi" } } } } },
    } })
    local ok, res = pcall(http.run, { post(base, "/v1/chat/completions") }, opts({ retries = 5 }))
    local reqs = log()
    stop()
    assert(ok, res)
    local r = res[1]
    assert.equals(200, r.status)
    assert.equals(4, r.retries)
    assert.equals(5, #r.attempts)
    assert.equals(429, r.attempts[1].status)
    assert.equals(500, r.attempts[2].status)
    assert.equals(503, r.attempts[3].status)
    assert.is_string(r.attempts[4].error) -- the dropped connection: a transport error
    assert.equals("hi", cjson.decode(r.body).choices[1].message.content)
    assert.equals(5, #reqs)
    -- the server saw the retries spaced: at least Retry-After's 1 s after the 429, and at least
    -- the backoff's lower bound (half the base, doubling) after the others
    assert.is_true(reqs[2].t - reqs[1].t >= 0.98, ("after the 429: %.3f s"):format(reqs[2].t - reqs[1].t))
    for k = 3, 5 do
      local lo = 0.5 * math.min(FAST.max_delay_s, FAST.base_delay_s * 2 ^ (k - 2))
      assert.is_true(reqs[k].t - reqs[k - 1].t >= lo * 0.95, ("retry %d: %.3f s, at least %.3f"):format(k - 1, reqs[k].t - reqs[k - 1].t, lo))
    end
    assert.equals("Bearer " .. SECRET, reqs[1].headers.Authorization)
    -- the secret is in nothing returned
    assert.is_nil(cjson.encode(res):find(SECRET, 1, true))
  end)

  it("does not retry 401 or 400, and returns the provider's message", function()
    local base, log, stop = serve({ ["/a"] = { { status = 401, body = '{"error": {"message": "bad key"}}' } },
                                    ["/b"] = { { status = 400, body = '{"error": {"message": "bad request"}}' } } })
    local ok, res = pcall(http.run, { post(base, "/a"), post(base, "/b") }, opts())
    local reqs = log()
    stop()
    assert(ok, res)
    assert.equals(401, res[1].status)
    assert.equals(0, res[1].retries)
    assert.equals("bad key", cjson.decode(res[1].body).error.message)
    assert.equals(400, res[2].status)
    assert.equals(0, res[2].retries)
    assert.equals(2, #reqs)
  end)

  it("gives up on a response slower than the timeout after its retries", function()
    local base, log, stop = serve({ ["/slow"] = { { delay_s = 2, body = "late" } } })
    local ok, res = pcall(http.run, { post(base, "/slow") }, opts({ timeout_s = 0.4, retries = 1 }))
    local reqs = log()
    stop()
    assert(ok, res)
    assert.equals(2, #res[1].attempts)
    assert.is_true(res[1].attempts[1].timed_out)
    assert.is_true(res[1].attempts[2].timed_out)
    assert.is_string(res[1].error)
    assert.equals(0, res[1].status)
    assert.equals(2, #reqs)
  end)

  it("gives up after its retries when every answer is 503, and returns a body that is not JSON", function()
    local base, _, stop = serve({ ["/busy"] = { { status = 503, body = "busy" } },
                                  ["/text"] = { { status = 200, body = "<html>not json</html>" } } })
    local ok, res = pcall(http.run, { post(base, "/busy"), post(base, "/text") }, opts({ retries = 2 }))
    stop()
    assert(ok, res)
    assert.equals(503, res[1].status)
    assert.equals(3, #res[1].attempts)
    assert.equals(2, res[1].retries)
    assert.equals(200, res[2].status)
    assert.equals("<html>not json</html>", res[2].body)
  end)

  it("calls its hooks as requests start, are retried (with the wait and the attempt) and end", function()
    local base, _, stop = serve({ ["/busy"] = { { status = 503, body = "busy" } }, ["/ok"] = { { status = 200, body = "{}" } } })
    local ev = {}
    local ticks = 0
    local ok, res = pcall(http.run, { post(base, "/busy"), post(base, "/ok") }, opts({ retries = 1, concurrency = 1,
      on_start = function(i) ev[#ev + 1] = "start " .. i end,
      on_retry = function(i, att, wait_s, retry)
        assert.is_true(wait_s > 0 and wait_s <= 0.2)
        ev[#ev + 1] = ("retry %d %d #%d"):format(i, att.status, retry)
      end,
      on_done = function(i, r) ev[#ev + 1] = ("done %d %d"):format(i, r.status) end,
      on_tick = function() ticks = ticks + 1 end }))
    stop()
    assert(ok, res)
    -- one in flight at a time: the second starts while the first waits for its retry
    assert.same({ "start 1", "retry 1 503 #1", "start 2", "done 2 200", "start 1", "done 1 503" }, ev)
    assert.is_true(ticks > 0)
  end)

  it("stops a response larger than 16 MiB (a runaway server) as a transport error", function()
    local base, _, stop = serve({ ["/big"] = { { body = string.rep("x", 17 * 2 ^ 20) } } })
    local ok, res = pcall(http.run, { post(base, "/big") }, opts({ retries = 0 }))
    stop()
    assert(ok, res)
    assert.equals("the response is larger than 16 MiB", res[1].error)
    assert.is_true(#res[1].body <= 16 * 2 ^ 20)
  end)

  it("refuses a Retry-After longer than allowed", function()
    local base, log, stop = serve({ ["/later"] = { { status = 429, headers = { ["Retry-After"] = "3600" } } } })
    local ok, res = pcall(http.run, { post(base, "/later") }, opts({ max_retry_after_s = 10 }))
    local reqs = log()
    stop()
    assert(ok, res)
    assert.equals(1, #reqs)
    assert.matches("retry after 3600 s, more than the 10 s allowed", res[1].error)
  end)

  it("keeps at most `concurrency` requests in flight", function()
    local base, log, stop = serve({ ["/c"] = { { delay_s = 0.3, body = "ok" } } })
    local reqs = {}
    for _ = 1, 8 do reqs[#reqs + 1] = post(base, "/c") end
    local t0 = require("kreach.core").now()
    local ok, res = pcall(http.run, reqs, opts({ concurrency = 4 }))
    local dt = require("kreach.core").now() - t0
    local seen = log()
    stop()
    assert(ok, res)
    for _, r in ipairs(res) do assert.equals(200, r.status) end
    local most = 0
    for _, s in ipairs(seen) do most = math.max(most, s.inflight) end
    assert.equals(8, #seen)
    assert.equals(4, most)
    -- at least two waves of 0.3 s (a lower bound only: a slow machine may take longer)
    assert.is_true(dt >= 0.55, ("8 requests of 0.3 s, 4 at a time, took %.2f s"):format(dt))
  end)

  it("speaks http and https only: a file:// URL reads no file, and is not retried", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/local.txt", "a local file's contents\n")
    local ok, res = pcall(http.run, { { url = "file://" .. dir .. "/local.txt" }, { url = "FILE://" .. dir .. "/local.txt" } },
      opts({ retries = 3 }))
    assert(ok, res)
    for _, r in ipairs(res) do
      assert.is_nil(r.body:find("local file", 1, true))
      assert.matches("[Pp]rotocol", r.error)
      assert.equals(0, r.retries)
      assert.equals(1, #r.attempts)
    end
  end)

  it("refuses unknown options", function()
    assert.has_error(function() http.run({}, { retry = 3 }) end, "http.run: unknown option 'retry'")
  end)
end)
