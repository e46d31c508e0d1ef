-- kreach.generate.progress: what `kreach generate` shows on stderr while its requests run
-- (issue 35), on top of kreach.progress (issue 37: the terminal, the plain lines, the time left
-- are that module's): requests done and in flight, the retries with their wait and reason, and
-- an ETA from the median latency of the requests done, `concurrency` at a time. On a terminal,
-- one status line redrawn in place; otherwise (a log, CI) one line per event that matters (a
-- retry, every 10% done), with no carriage return. The formatting is pure functions
-- (M.eta_s, M.status_line, M.retry_line, M.done_line; M.duration and M.median are
-- kreach.progress's), tested with known answers; the tracker feeds them from kreach.http's
-- hooks (on_start, on_retry, on_done, on_tick).
local base = require "kreach.progress"

local M = {}

M.MIN_DONE = 3     -- requests done before an ETA is given (a median of fewer says little)
M.STEP_PCT = 10    -- without a terminal, a line each time this much more is done

M.median = base.median
M.duration = base.duration

-- eta_s(remaining, latencies, concurrency) -> seconds until `remaining` more requests are done,
-- from the median latency of those done, `concurrency` at a time; nil before M.MIN_DONE are done
function M.eta_s(remaining, latencies, concurrency)
  return base.eta_s(remaining, latencies, { concurrency = concurrency, statistic = "median", min_done = M.MIN_DONE })
end

-- reason(attempt) -> why an attempt is retried, short: its HTTP status, "timeout" or
-- "transport error"
function M.reason(att)
  if att.status and att.status > 0 then return tostring(att.status) end
  if att.timed_out then return "timeout" end
  return "transport error"
end

local function eta_text(eta_s)
  return eta_s and ("ETA " .. M.duration(eta_s)) or "ETA unknown"
end

-- status_line{ done =, total =, in_flight =, retrying = n waiting for a retry, retry_in_s = the
-- soonest one's wait left, retry_reason =, eta_s = } -> the terminal's status line
function M.status_line(s)
  local parts = { ("kreach generate: %d of %d requests done"):format(s.done, s.total), ("%d in flight"):format(s.in_flight) }
  if (s.retrying or 0) > 0 then
    parts[#parts + 1] = ("%d retrying in %.1f s (%s)"):format(s.retrying, math.max(0, s.retry_in_s or 0), s.retry_reason or "?")
  end
  parts[#parts + 1] = eta_text(s.eta_s)
  return table.concat(parts, ", ")
end

-- retry_line{ label =, wait_s =, reason =, retry = n, retries = the most } -> the log's line for
-- a retry
function M.retry_line(r)
  return ("kreach generate: %s: %s, retrying in %.1f s (retry %d of %d)"):format(r.label, r.reason, r.wait_s, r.retry, r.retries)
end

-- done_line{ done =, total =, eta_s = } -> the log's line for a step of M.STEP_PCT
function M.done_line(s)
  local pct = s.total > 0 and math.floor(100 * s.done / s.total) or 100
  if s.done >= s.total then return ("kreach generate: %d of %d requests done (100%%)"):format(s.done, s.total) end
  return ("kreach generate: %d of %d requests done (%d%%), %s"):format(s.done, s.total, pct, eta_text(s.eta_s))
end

-- ---- the tracker: kreach.progress's, with the requests in flight and waiting ----

local Tracker = {}
Tracker.__index = Tracker

-- new{ total =, concurrency =, retries =, tty =, out = (io.stderr), now = (a clock in seconds),
-- quiet = } -> a tracker. Its methods are kreach.http's hooks' bodies, and line(text) writes a
-- line of the caller's own without breaking the status line.
function M.new(o)
  assert(type(o.now) == "function", "progress.new: now (a clock) is required")
  local self = setmetatable({ total = o.total, retries = o.retries or 0, now = o.now, in_flight = 0, waiting = {} }, Tracker)
  self.base = base.new{ prefix = "kreach generate", total = o.total, concurrency = o.concurrency or 1, tty = o.tty,
                        out = o.out or io.stderr, now = o.now, quiet = o.quiet, every_pct = M.STEP_PCT,
                        statistic = "median", min_done = M.MIN_DONE,
                        status_text = function() return M.status_line(self:state()) end,
                        plain_text = function() return M.done_line(self:state()) end }
  return self
end

function Tracker:state()
  local t = self.now()
  local n, soonest, why = 0, nil, nil
  for _, w in pairs(self.waiting) do
    n = n + 1
    if not soonest or w.at < soonest then soonest, why = w.at, w.reason end
  end
  return { done = self.base.done, total = self.total, in_flight = self.in_flight, retrying = n,
           retry_in_s = soonest and soonest - t, retry_reason = why, eta_s = self.base:eta_s() }
end

-- a request (key: any value naming it) starts, or starts again after its wait
function Tracker:start(key)
  self.waiting[key] = nil
  self.in_flight = self.in_flight + 1
  self.base:draw()
end

-- an attempt failed and the request waits wait_s before its retry number `retry`
function Tracker:retry(key, label, wait_s, reason, retry)
  self.in_flight = self.in_flight - 1
  self.waiting[key] = { at = self.now() + wait_s, reason = reason }
  if self.base:tty() then self.base:draw()
  elseif not self.base:quiet() then
    self.base:line(M.retry_line{ label = label, wait_s = wait_s, reason = reason, retry = retry, retries = self.retries })
  end
end

-- a request's result is final; latency_s: its latency (nil: not counted in the ETA)
function Tracker:finished(key, latency_s)
  self.waiting[key] = nil
  self.in_flight = self.in_flight - 1
  self.base:finished{ duration_s = latency_s, skipped = latency_s == nil }
  -- requests run side by side: the line stays up between them
  if self.base.done < self.total then self.base:draw() end
end

-- while requests run: the terminal's line redrawn now and then (the waits count down)
function Tracker:tick()
  self.base:tick()
end

-- line(text): a line of the caller's, above the status line (none when quiet)
function Tracker:line(s)
  if self.base:quiet() then return end
  self.base:line(s)
end

-- close(): the status line erased (the summary follows on stdout)
function Tracker:close()
  self.base:close()
end

return M
