-- kreach.generate.progress: what `kreach generate` shows on stderr while its requests run
-- (issue 35): requests done and in flight, the retries with their wait and reason, and an ETA.
-- On a terminal, one status line redrawn in place; otherwise (a log, CI) one line per event that
-- matters (a retry, every 10% done), with no carriage return. The formatting is pure functions
-- (M.eta_s, M.duration, M.status_line, M.retry_line, M.done_line), tested with known answers;
-- the tracker feeds them from kreach.http's hooks (on_start, on_retry, on_done, on_tick).
local M = {}

M.MIN_DONE = 3     -- requests done before an ETA is given (a median of fewer says little)
M.STEP_PCT = 10    -- without a terminal, a line each time this much more is done
M.WIDTH = 118      -- the terminal's status line's longest
M.REDRAW_S = 0.2   -- on a terminal, the status line's shortest redraw interval between events

-- median(xs) -> the median of a list of numbers (the lower middle one for an even count), or nil
function M.median(xs)
  if #xs == 0 then return nil end
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  return s[(#s + 1) // 2]
end

-- eta_s(remaining, latencies, concurrency) -> seconds until `remaining` more requests are done,
-- from the median latency of those done, `concurrency` at a time; nil before M.MIN_DONE are done
function M.eta_s(remaining, latencies, concurrency)
  if #latencies < M.MIN_DONE then return nil end
  if remaining <= 0 then return 0 end
  return M.median(latencies) * math.ceil(remaining / math.max(1, concurrency))
end

-- duration(s) -> "<1 s", "45 s", "3 min", "2 h 5 min"
function M.duration(s)
  if s < 0.5 then return "<1 s" end
  if s < 59.5 then return ("%d s"):format(math.floor(s + 0.5)) end
  local min = math.floor(s / 60 + 0.5)
  if min < 60 then return ("%d min"):format(min) end
  return ("%d h %d min"):format(min // 60, min % 60)
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

-- ---- the tracker ----

local Tracker = {}
Tracker.__index = Tracker

-- new{ total =, concurrency =, retries =, tty =, out = (io.stderr), now = (a clock in seconds),
-- quiet = } -> a tracker. Its methods are kreach.http's hooks' bodies, and line(text) writes a
-- line of the caller's own without breaking the status line.
function M.new(o)
  assert(type(o.now) == "function", "progress.new: now (a clock) is required")
  return setmetatable({ total = o.total, concurrency = o.concurrency or 1, retries = o.retries or 0, tty = o.tty,
                        out = o.out or io.stderr, now = o.now, quiet = o.quiet, done = 0, in_flight = 0,
                        latencies = {}, waiting = {}, step = 0, drawn = nil, shown = false }, Tracker)
end

function Tracker:state()
  local t = self.now()
  local n, soonest, why = 0, nil, nil
  for _, w in pairs(self.waiting) do
    n = n + 1
    if not soonest or w.at < soonest then soonest, why = w.at, w.reason end
  end
  return { done = self.done, total = self.total, in_flight = self.in_flight, retrying = n,
           retry_in_s = soonest and soonest - t, retry_reason = why,
           eta_s = M.eta_s(self.total - self.done, self.latencies, self.concurrency) }
end

function Tracker:draw()
  if self.quiet or not self.tty then return end
  -- cut to the width of most terminals: a line that wraps is not redrawn in place
  self.out:write("\r", M.status_line(self:state()):sub(1, M.WIDTH), "\27[K")
  self.out:flush()
  self.drawn, self.shown = self.now(), true
end

function Tracker:clear()
  if self.shown then self.out:write("\r\27[K"); self.out:flush(); self.shown = false end
end

-- a request (key: any value naming it) starts, or starts again after its wait
function Tracker:start(key)
  self.waiting[key] = nil
  self.in_flight = self.in_flight + 1
  self:draw()
end

-- an attempt failed and the request waits wait_s before its retry number `retry`
function Tracker:retry(key, label, wait_s, reason, retry)
  self.in_flight = self.in_flight - 1
  self.waiting[key] = { at = self.now() + wait_s, reason = reason }
  if self.quiet then return end
  if self.tty then self:draw()
  else
    self.out:write(M.retry_line{ label = label, wait_s = wait_s, reason = reason, retry = retry, retries = self.retries }, "\n")
    self.out:flush()
  end
end

-- a request's result is final
function Tracker:finished(key, latency_s)
  self.waiting[key] = nil
  self.in_flight = self.in_flight - 1
  self.done = self.done + 1
  if latency_s then self.latencies[#self.latencies + 1] = latency_s end
  if self.quiet then return end
  if self.tty then self:draw() return end
  local step = self.total > 0 and (100 * self.done // self.total) // M.STEP_PCT or 0
  if step > self.step or self.done == self.total then
    self.step = step
    self.out:write(M.done_line(self:state()), "\n")
    self.out:flush()
  end
end

-- while requests run: the terminal's line redrawn now and then (the waits count down)
function Tracker:tick()
  if self.tty and not self.quiet and (not self.drawn or self.now() - self.drawn >= M.REDRAW_S) then self:draw() end
end

-- line(text): a line of the caller's, above the status line
function Tracker:line(s)
  if self.quiet then return end
  self:clear()
  self.out:write(s, "\n")
  if self.tty and self.done < self.total then self:draw() else self.out:flush() end
end

-- close(): the status line erased (the summary follows on stdout)
function Tracker:close()
  self:clear()
end

return M
