-- kreach.http: HTTP requests with the policy a model API needs (issue 19), over the libcurl
-- binding kreach.core.http (its multi interface): several requests in flight at once, retries
-- of what a retry can fix (a transport error, a timeout, 408, 429, 5xx) with exponential backoff
-- and jitter, Retry-After honoured, and no retry of the rest (a 400 or 401 is final). Only
-- http:// and https:// URLs are fetched (the binding refuses every other scheme of libcurl's).
--
--   local http = require "kreach.http"
--   local res = http.run({ { url = "http://127.0.0.1:8000/v1/chat/completions", method = "POST",
--                            headers = { "Content-Type: application/json" }, body = "{...}" } },
--                        { concurrency = 4, retries = 5 })
--   res[1].status, res[1].body, res[1].retries, res[1].attempts   -- in the order asked
--
-- A request's headers and body stay here: nothing returned carries them, so an API key in a
-- header reaches no result, log or error message (M.redact strips a secret from a text that
-- may quote it, such as a provider's error body).
local core = require "kreach.core.http"
local util = require "kreach.core.util"
local kcore = require "kreach.core"

local M = {}

M.DEFAULTS = {
  concurrency = 4,         -- requests in flight at once
  retries = 5,             -- retries of one request after its first attempt
  base_delay_s = 1,        -- the first retry's backoff; it doubles each time
  max_delay_s = 60,        -- the backoff's cap
  max_retry_after_s = 600, -- the longest Retry-After honoured (a longer one fails the request)
  connect_timeout_s = 10,
  timeout_s = 120,         -- a whole transfer
}

-- statuses a retry can fix: a timeout, too many requests, and the server's errors
function M.retryable_status(status)
  return status == 408 or status == 429 or (status >= 500 and status <= 599)
end

-- headers(raw) -> { [lower-case name] = value } of the last response in raw (libcurl's header
-- text holds every response of a transfer, a 100 Continue's included)
function M.headers(raw)
  local last = {}
  for line in (raw or ""):gmatch("[^\r\n]*") do
    if line:match("^HTTP/") then last = {}
    else
      local k, v = line:match("^([^:%s]+):%s*(.-)%s*$")
      if k then last[k:lower()] = v end
    end
  end
  return last
end

local MONTHS = { Jan = 1, Feb = 2, Mar = 3, Apr = 4, May = 5, Jun = 6, Jul = 7, Aug = 8, Sep = 9, Oct = 10, Nov = 11, Dec = 12 }

-- retry_after(value, now_epoch) -> seconds to wait, or nil: Retry-After as delta-seconds or as
-- an HTTP-date (RFC 9110), counted from now_epoch (os.time() by default)
function M.retry_after(value, now_epoch)
  if not value then return nil end
  local n = tonumber(value:match("^%s*([%d.]+)%s*$") or "")
  if n then return n end
  local d, mon, y, hh, mm, ss = value:match("^%a+, (%d+) (%a+) (%d+) (%d+):(%d+):(%d+) GMT$")
  if not d or not MONTHS[mon] then return nil end
  -- days since the epoch (UTC), by the civil-from-days algorithm's inverse
  local yy, m = tonumber(y), MONTHS[mon]
  if m <= 2 then yy = yy - 1 end
  local era = yy // 400
  local yoe = yy - era * 400
  local doy = (153 * (m + (m > 2 and -3 or 9)) + 2) // 5 + tonumber(d) - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  local days = era * 146097 + doe - 719468
  local t = days * 86400 + tonumber(hh) * 3600 + tonumber(mm) * 60 + tonumber(ss)
  return math.max(0, t - (now_epoch or os.time()))
end

-- backoff(retry, opts, rand) -> seconds before retry number `retry` (1, 2, ...): the base
-- doubled each time, capped, times a jitter in [0.5, 1)
function M.backoff(retry, opts, rand)
  local d = math.min(opts.max_delay_s, opts.base_delay_s * 2 ^ (retry - 1))
  return d * (0.5 + 0.5 * rand())
end

-- redact(text, secrets) -> text with every secret (a list of strings) replaced by [redacted]
function M.redact(text, secrets)
  text = tostring(text)
  for _, s in ipairs(secrets or {}) do
    if type(s) == "string" and #s > 0 then
      local i = 1
      while true do
        local a, b = text:find(s, i, true)
        if not a then break end
        text = text:sub(1, a - 1) .. "[redacted]" .. text:sub(b + 1)
        i = a + #"[redacted]"
      end
    end
  end
  return text
end

local HOOKS = { rand = true, on_start = true, on_attempt = true, on_retry = true, on_done = true, on_tick = true }

local function options(o)
  local out = {}
  for k, v in pairs(M.DEFAULTS) do out[k] = v end
  for k, v in pairs(o or {}) do
    if M.DEFAULTS[k] == nil and not HOOKS[k] then error(("http.run: unknown option '%s'"):format(tostring(k)), 3) end
    out[k] = v
  end
  if math.type(out.concurrency) ~= "integer" or out.concurrency < 1 then error("http.run: concurrency is a whole number >= 1", 3) end
  if math.type(out.retries) ~= "integer" or out.retries < 0 then error("http.run: retries is a whole number >= 0", 3) end
  for _, k in ipairs({ "base_delay_s", "max_delay_s", "connect_timeout_s", "timeout_s", "max_retry_after_s" }) do
    if type(out[k]) ~= "number" or not (out[k] > 0) then error(("http.run: %s is a positive number"):format(k), 3) end
  end
  out.rand = out.rand or math.random
  return out
end

-- run(requests, opts) -> results, in the requests' order. A request: { url =, method = "GET" |
-- "POST", headers = { "Name: value", ... }, body = }. A result: { status = the last attempt's
-- HTTP status (0 when none came), body =, headers = { name = value }, error = nil or why the
-- last attempt failed (a transport error, a timeout, a Retry-After too long), retries =,
-- attempts = { { status =, error =, started_s =, total_s =, wait_s = the wait before it } ... },
-- latency_s = from the first attempt's start to the last one's end }. opts: M.DEFAULTS' keys,
-- rand (a function giving [0, 1), for the jitter), and hooks (for a caller's progress,
-- kreach.generate.progress): on_start(i) as request i's attempt starts, on_attempt(i, attempt)
-- after each attempt, on_retry(i, attempt, wait_s, retry) when the attempt is to be retried
-- (number `retry`) after wait_s, on_done(i, result) as soon as request i's result is final (so
-- that a caller can keep it before the others end), on_tick() on each turn of the loop (about
-- every 50 ms while requests are in flight).
function M.run(requests, opts)
  local o = options(opts)
  local m = core.multi()
  local n = #requests
  local results, queue = {}, {}
  for i = 1, n do
    results[i] = { attempts = {}, retries = 0 }
    queue[#queue + 1] = { i = i, at = 0, wait = 0 }
  end
  local active, done_n = 0, 0
  local started = {}
  local ok, err = pcall(function()
    while done_n < n do
      local now = kcore.now()
      -- start what may start
      table.sort(queue, function(a, b) return a.at < b.at or (a.at == b.at and a.i < b.i) end)
      while active < o.concurrency and queue[1] and queue[1].at <= now do
        local q = table.remove(queue, 1)
        local r = requests[q.i]
        m:add{ id = q.i, url = r.url, method = r.method or "GET", headers = r.headers, body = r.body,
               connect_timeout_ms = math.floor(o.connect_timeout_s * 1000 + 0.5),
               timeout_ms = math.floor(o.timeout_s * 1000 + 0.5) }
        started[q.i] = { t = kcore.now(), wait = q.wait }
        if not results[q.i].first_t then results[q.i].first_t = started[q.i].t end
        active = active + 1
        if o.on_start then o.on_start(q.i) end
      end
      if o.on_tick then o.on_tick() end
      if active == 0 then
        -- nothing in flight: wait for the next retry's time
        local next_at = queue[1] and queue[1].at or now
        -- (in steps, where a caller's on_tick counts the wait down)
        if next_at > now then util.sleep(o.on_tick and math.min(next_at - now, 0.2) or next_at - now) end
      else
        local next_at = queue[1] and queue[1].at
        local wait = 0.05
        if next_at and active < o.concurrency then wait = math.max(0, math.min(wait, next_at - kcore.now())) end
        local finished = m:poll(wait)
        for _, f in ipairs(finished) do
          active = active - 1
          local i = f.id
          local res = results[i]
          local st = started[i]
          local t_end = kcore.now()
          local hdrs = M.headers(f.headers)
          local att = { status = f.status, error = f.error, timed_out = f.timed_out or false, started_s = st.t - res.first_t,
                        total_s = t_end - st.t, wait_s = st.wait }
          res.attempts[#res.attempts + 1] = att
          res.status, res.body, res.headers, res.error = f.status, f.body, hdrs, f.error
          res.latency_s = t_end - res.first_t
          if o.on_attempt then o.on_attempt(i, att) end
          -- a URL libcurl will not fetch (a scheme other than http and https: code 1; a
          -- malformed URL: code 3) fails the same way again: no retry
          local again = (f.error ~= nil and f.code ~= 1 and f.code ~= 3) or M.retryable_status(f.status)
          if again and res.retries < o.retries then
            local delay = M.backoff(res.retries + 1, o, o.rand)
            local ra = f.status == 429 or f.status == 503
            ra = ra and M.retry_after(hdrs["retry-after"]) or nil
            if ra and ra > o.max_retry_after_s then
              res.error = ("the server asked to retry after %g s, more than the %g s allowed"):format(ra, o.max_retry_after_s)
              done_n = done_n + 1
              if o.on_done then o.on_done(i, res) end
            else
              if ra and ra > delay then delay = ra end
              res.retries = res.retries + 1
              queue[#queue + 1] = { i = i, at = kcore.now() + delay, wait = delay }
              if o.on_retry then o.on_retry(i, att, delay, res.retries) end
            end
          else
            done_n = done_n + 1
            if o.on_done then o.on_done(i, res) end
          end
        end
      end
    end
  end)
  m:close()
  if not ok then error(err, 0) end
  for _, r in ipairs(results) do r.first_t = nil end
  return results
end

-- available() -> true, or false and why (libcurl could not be loaded)
M.available = core.available

return M
