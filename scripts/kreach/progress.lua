-- kreach.progress: the one progress display of every command that runs long (issue 37): eval and
-- bench (through kreach.run.campaign), generate (kreach.generate.progress, on top of this),
-- oracle over a suite, and whatever comes next (kreach report). It writes to standard error, so
-- a --json document on standard output stays the only thing there.
--   On a terminal: one status line redrawn in place ("\r", erase to the end of the line): done
--   of total, the percentage, the time elapsed, the time left, and the current item (last, so
--   that a long name is what the terminal's width cuts).
--   Off a terminal (a log, a pipe, CI): plain lines, no carriage return, no escape: a line per
--   item, or one each time every_pct more percent is done (and at the end).
--   KREACH_PROGRESS=plain gives the plain lines on a terminal too; KREACH_PROGRESS=off none of
--   the progress (lines a caller writes through the tracker, eval's result lines, still come).
-- The terminal is detected with kreach.core.util.isatty (isatty(3) on the descriptor), and the
-- line redrawn with "\r" and "\27[K" (erase to the end of the line, which every terminal
-- emulator in use knows): Debian's lua-term would give the same two, but the binary searches
-- no system Lua directory by default (docs/scripting.md, "Environment"), and a C module for one
-- isatty is not worth a build dependency.
--
-- The formatting is pure functions, tested with known answers (tests/lua/progress_spec.lua):
--   duration(s)                       "<1 s", "45 s", "3 min", "2 h 5 min"
--   median(xs), mean(xs)
--   eta_s(remaining, durations, {concurrency =, statistic = "mean"|"median", min_done =})
--                                     seconds left: the items' duration (their mean, or median)
--                                     times the rounds left; nil before min_done (1) are done
--   status_line(s), plain_line(s), item_line(s)   the three kinds of line (below)
--   fit(line)                         the status line cut to the width
--   due(step, done, total, every_pct) whether a plain line is due, and the new step
-- The tracker (new) feeds them:
--   local t = progress.new{ prefix = "kreach report", total = #items }   -- every_pct =, tty =, ...
--   for _, it in ipairs(items) do
--     t:start(it.name)            -- the current item (the status line shows it)
--     t:status("reading")         -- optional: what the current item is doing now
--     ...
--     t:finished()                -- or t:finished{ line = "what it gave" } (a line per item)
--   end
--   t:close()                     -- the status line erased
-- and t:line(text) writes a line of the caller's own without breaking the status line.
local core = require "kreach.core"
local text = require "kreach.text"
local util = require "kreach.core.util"

local M = {}

M.WIDTH = 118      -- the status line's longest: a line that wraps is not redrawn in place
M.REDRAW_S = 0.2   -- tick()'s shortest interval between redraws
M.MODES = { auto = true, plain = true, off = true }

-- ---- the formatting (pure) ----

-- duration(s) -> "<1 s", "45 s", "3 min", "2 h 5 min"
function M.duration(s)
  if s < 0.5 then return "<1 s" end
  if s < 59.5 then return ("%d s"):format(math.floor(s + 0.5)) end
  local min = math.floor(s / 60 + 0.5)
  if min < 60 then return ("%d min"):format(min) end
  return ("%d h %d min"):format(min // 60, min % 60)
end

-- median(xs) -> the median of a list of numbers (the lower middle one for an even count), or nil
function M.median(xs)
  if #xs == 0 then return nil end
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  return s[(#s + 1) // 2]
end

-- mean(xs) -> the mean of a list of numbers, or nil
function M.mean(xs)
  if #xs == 0 then return nil end
  local sum = 0
  for _, x in ipairs(xs) do sum = sum + x end
  return sum / #xs
end

-- eta_s(remaining, durations, {concurrency = 1, statistic = "mean" | "median", min_done = 1})
-- -> seconds until `remaining` more items are done, `concurrency` at a time, each taking the
-- mean (or the median) of `durations` (the items done so far); nil while fewer than min_done
-- durations are known
function M.eta_s(remaining, durations, o)
  o = o or {}
  if #durations < (o.min_done or 1) or #durations == 0 then return nil end
  if remaining <= 0 then return 0 end
  local per = (o.statistic == "median" and M.median or M.mean)(durations)
  return per * math.ceil(remaining / math.max(1, o.concurrency or 1))
end

local function pct(done, total)
  return total > 0 and math.floor(100 * done / total) or 100
end

local function eta_text(eta_s)
  return eta_s and ("ETA " .. M.duration(eta_s)) or "ETA unknown"
end

-- status_line{ prefix =, done =, total =, elapsed_s =, eta_s =, item =, what = } -> the
-- terminal's line: "kreach eval: 3 of 10 (30%), 2 min elapsed, ETA 5 min, 19_ReLU x.lua: timing"
-- (the item last, where the width cuts)
function M.status_line(s)
  local parts = { ("%s: %d of %d (%d%%)"):format(s.prefix, s.done, s.total, pct(s.done, s.total)) }
  if s.elapsed_s then parts[#parts + 1] = M.duration(s.elapsed_s) .. " elapsed" end
  parts[#parts + 1] = eta_text(s.eta_s)
  if s.item then parts[#parts + 1] = text.clean(s.item, 256) .. (s.what and (": " .. text.clean(s.what, 80)) or "") end
  return table.concat(parts, ", ")
end

-- plain_line{ prefix =, done =, total =, elapsed_s =, eta_s = } -> the log's line:
-- "kreach bench: 3 of 10 done (30%), 2 min elapsed, ETA 5 min"; at the end
-- "kreach bench: 10 of 10 done (100%) in 7 min"
function M.plain_line(s)
  local head = ("%s: %d of %d done (%d%%)"):format(s.prefix, s.done, s.total, pct(s.done, s.total))
  if s.done >= s.total then return head .. (s.elapsed_s and (" in " .. M.duration(s.elapsed_s)) or "") end
  return head .. (s.elapsed_s and (", " .. M.duration(s.elapsed_s) .. " elapsed") or "") .. ", " .. eta_text(s.eta_s)
end

-- item_line{ done =, total =, line =, eta_s = } -> an item's own line, numbered:
-- "[3/10] <line>  (ETA 5 min)"; the last one, or one with no ETA yet, without the parenthesis
function M.item_line(s)
  local l = ("[%d/%d] %s"):format(s.done, s.total, s.line)
  if s.done < s.total and s.eta_s then l = l .. ("  (%s)"):format(eta_text(s.eta_s)) end
  return l
end

-- fit(line) -> the line cut to M.WIDTH bytes, without half a UTF-8 sequence at the end
function M.fit(line)
  if #line <= M.WIDTH then return line end
  return (line:sub(1, M.WIDTH):gsub("[\xC0-\xFF][\x80-\xBF]*$", ""))
end

-- due(step, done, total, every_pct) -> whether a plain line is due now that `done` items are,
-- and the step to keep: with every_pct, one each time another every_pct percent is done, and the
-- last; without, one per item. `step` is the one due() returned before (0 at first).
function M.due(step, done, total, every_pct)
  if not every_pct or every_pct <= 0 then return true, done end
  local now = total > 0 and (100 * done // total) // every_pct or 0
  if now > step or done >= total then return true, now end
  return false, step
end

-- mode(tty, quiet) -> "tty", "plain" or "off": quiet, then KREACH_PROGRESS (auto, plain, off),
-- then whether the output is a terminal. Another KREACH_PROGRESS is said once on standard error
-- and taken as auto: a warning, not an error, since a tracker is made once a run has begun (a
-- campaign's run record, a generate turn) and a display setting must not fail it.
local warned = false
function M.mode(tty, quiet)
  if quiet then return "off" end
  local env = os.getenv("KREACH_PROGRESS")
  if env and env ~= "" and env ~= "auto" then
    if M.MODES[env] then return env end
    if not warned then
      warned = true
      io.stderr:write(("kreach: warning: KREACH_PROGRESS=%s is not auto, plain or off: taken as auto\n"):format(text.clean(env, 64)))
    end
  end
  return tty and "tty" or "plain"
end

-- isatty(f) -> whether f (io.stderr, the default, or io.stdout, or a descriptor number) is a
-- terminal
function M.isatty(f)
  if f == nil or f == io.stderr then return util.isatty(2) end
  if f == io.stdout then return util.isatty(1) end
  if math.type(f) == "integer" then return util.isatty(f) end
  return false
end

-- ---- the tracker ----

local Tracker = {}
Tracker.__index = Tracker
M.Tracker = Tracker

local NEW = { prefix = true, total = true, tty = true, out = true, now = true, quiet = true, every_pct = true,
              concurrency = true, statistic = true, min_done = true, status_text = true, plain_text = true }

-- new{...} -> a tracker.
--   prefix       the lines' beginning ("kreach eval"); total: the items
--   tty          whether `out` is a terminal (default: detected, when out is standard error)
--   out          where to write (default io.stderr)
--   quiet        none of the progress (the caller's own lines still come)
--   every_pct    off a terminal, a plain line each time this many more percent are done (and
--                at the end); default: one per item
--   concurrency, statistic, min_done   how the time left is estimated (eta_s)
--   now          a clock in seconds (default kreach.core.now)
--   status_text(state), plain_text(state)   the terminal's line and the log's line, replacing
--                status_line and plain_line (kreach.generate.progress's, with its retries)
-- A tracker's state(): { prefix, done, total, elapsed_s, eta_s, item, what }.
function M.new(o)
  for k in pairs(o) do
    if not NEW[k] then error(("progress.new: unknown field '%s'"):format(tostring(k)), 2) end
  end
  if math.type(o.total) ~= "integer" or o.total < 0 then error("progress.new: total must be an integer >= 0", 2) end
  local out = o.out or io.stderr
  local tty = o.tty
  if tty == nil then tty = out == io.stderr and M.isatty(2) end
  local now = o.now or core.now
  local t0 = now()
  return setmetatable({ prefix = o.prefix or "kreach", total = o.total, out = out, now = now,
                        mode = M.mode(tty, o.quiet), every_pct = o.every_pct,
                        eta_o = { concurrency = o.concurrency, statistic = o.statistic, min_done = o.min_done },
                        status_text = o.status_text or M.status_line, plain_text = o.plain_text or M.plain_line,
                        done = 0, durations = {}, started = {}, t0 = t0, last = t0, step = 0,
                        drawn = nil, shown = false }, Tracker)
end

-- whether the tracker writes a status line (a terminal) / plain lines / nothing of its own
function Tracker:tty() return self.mode == "tty" end
function Tracker:quiet() return self.mode == "off" end

function Tracker:eta_s()
  return M.eta_s(self.total - self.done, self.durations, self.eta_o)
end

function Tracker:state()
  return { prefix = self.prefix, done = self.done, total = self.total, elapsed_s = self.now() - self.t0,
           eta_s = self:eta_s(), item = self.item, what = self.what }
end

-- draw(): the status line, now (on a terminal; nothing otherwise)
function Tracker:draw()
  if self.mode ~= "tty" then return end
  self.out:write("\r", M.fit(self.status_text(self:state())), "\27[K")
  self.out:flush()
  self.drawn, self.shown = self.now(), true
end

-- clear(): the status line erased, where one is shown
function Tracker:clear()
  if self.shown then self.out:write("\r\27[K"); self.out:flush(); self.shown = false end
end

-- start(item [, key]): `item` (a name) is the current one; key (default the name) marks when it
-- started, for its duration
function Tracker:start(item, key)
  self.item, self.what = item, nil
  self.started[key == nil and item or key] = self.now()
  self:draw()
end

-- status(what [, item]): what the current item (or `item`, which becomes it) is doing now
function Tracker:status(what, item)
  if item ~= nil and item ~= self.item then self.item = item end
  self.what = what
  self:draw()
end

-- finished{ key =, line =, skipped =, duration_s = } (all optional): an item is done.
-- Its duration (for the time left) is duration_s, else the time since its start (by key, else
-- the current item's), else since the item before it finished; a skipped one (reused, taken from
-- a cache) counts as done but gives no duration. `line`: the item's own line, written numbered
-- (item_line) on a terminal and off it, even when quiet (then without the time left); without
-- it, off a terminal a plain line when one is due (every_pct). On a terminal the status line is
-- erased and drawn again at the next start(), status() or tick(): what the caller writes next
-- (on standard output, say) does not land on it.
function Tracker:finished(o)
  o = o or {}
  local t = self.now()
  local key = o.key
  if key == nil then key = self.item end
  local began = key ~= nil and self.started[key] or nil
  if key ~= nil then self.started[key] = nil end
  if not o.skipped then
    local d = o.duration_s
    if d == nil then d = t - (began or self.last) end
    if d then self.durations[#self.durations + 1] = d end
  end
  self.last = t
  self.done = self.done + 1
  self.item, self.what = nil, nil
  self:clear()
  if o.line then
    self.out:write(M.item_line{ done = self.done, total = self.total, line = o.line,
                                eta_s = self.mode ~= "off" and self:eta_s() or nil }, "\n")
    self.out:flush()
  elseif self.mode == "plain" then
    local due
    due, self.step = M.due(self.step, self.done, self.total, self.every_pct)
    if due then
      self.out:write(self.plain_text(self:state()), "\n")
      self.out:flush()
    end
  end
end

-- tick(): on a terminal, the status line redrawn when M.REDRAW_S has passed since the last time
-- (a clock that counts down; the elapsed time)
function Tracker:tick()
  if self.mode == "tty" and (not self.drawn or self.now() - self.drawn >= M.REDRAW_S) then self:draw() end
end

-- line(text): a line of the caller's, above the status line (written even when quiet: the
-- caller decides what to say)
function Tracker:line(s)
  self:clear()
  self.out:write(s, "\n")
  if self.mode == "tty" and self.done < self.total then self:draw() else self.out:flush() end
end

-- close(): the status line erased (a summary follows)
function Tracker:close()
  self:clear()
end

return M
