-- kreach.run.builds: the build pool (docs/evaluation.md, "Builds ahead of the GPU: --jobs").
-- A campaign's candidates are built ahead of the GPU worker by up to `jobs` sealed worker
-- processes at once (the worker job `build`: kreach.judge.job.build), which compile them into
-- the compile caches (NVRTC's for a Lua candidate, PyTorch's extensions and Triton's for a
-- KernelBench-format one); the GPU worker then finds them built and only loads and times. A
-- build that fails is data: its verdict (compile_error, invalid_candidate) becomes the item's,
-- and the item never reaches the GPU. The pool is serviced by its owner (kreach.run.campaign),
-- between evaluations and while a GPU worker runs (kreach.run.worker.run's idle), with no
-- thread: each build is a worker stepped without blocking (kreach.run.worker.start).
--
-- While a call is timed the pool can be paused: its builds' processes (and all they started:
-- the Python worker, ninja, nvcc) are stopped with SIGSTOP and continued with SIGCONT after,
-- their phases' clocks stopped meanwhile, and no build starts. Whether that is needed is
-- measured (experiments/bench/builds_beside.lua); kreach.judge.policy.BUILDS.pause says what is done.
local core = require "kreach.core"
local lfs = require "lfs"
local worker = require "kreach.run.worker"

local M = {}

-- ---- options ----

-- The number of cores of this machine (the default of --jobs).
function M.cores()
  local f = io.open("/proc/cpuinfo", "r")
  local n = 0
  if f then
    for l in f:lines() do if l:match("^processor%s*:") then n = n + 1 end end
    f:close()
  end
  return math.max(n, 1)
end

-- parse_jobs(s) -> a whole number of build workers (at least 1), or nil and why
function M.parse_jobs(s)
  local n = math.tointeger(tonumber(tostring(s)))
  if not n or n < 1 or not tostring(s):match("^%s*%d+%s*$") then
    return nil, ("--jobs: '%s' is not a whole number of build workers (1 or more)"):format(tostring(s))
  end
  return n
end

-- parse_jobs_or_zero(s) -> as parse_jobs, with 0 taken (no build workers: kreach eval's
-- --jobs 0, each candidate built by its GPU worker)
function M.parse_jobs_or_zero(s)
  if tostring(s):match("^%s*0+%s*$") then return 0 end
  local n = M.parse_jobs(s)
  if not n then return nil, ("--jobs: '%s' is not a whole number of build workers (0: none, each candidate built by its GPU worker)"):format(tostring(s)) end
  return n
end

-- ---- stopping and continuing a build's processes ----

-- children() -> { [ppid] = { pid, ... } } of this machine's processes, from /proc
local function children()
  local kids = {}
  local ok, iter, st = pcall(lfs.dir, "/proc")
  if not ok then return kids end
  for name in iter, st do
    if name:match("^%d+$") then
      local f = io.open("/proc/" .. name .. "/stat", "r")
      if f then
        local s = f:read("a") or ""
        f:close()
        -- the command's name is in parentheses and may hold anything: the last ")" ends it
        local ppid = s:match(".*%)%s+%S+%s+(%d+)")
        if ppid then
          local p = tonumber(ppid)
          kids[p] = kids[p] or {}
          table.insert(kids[p], tonumber(name))
        end
      end
    end
  end
  return kids
end

-- tree(pid) -> pid and its descendants, parents before their children
function M.tree(pid)
  local kids, out, seen = children(), {}, {}
  local function walk(p)
    if seen[p] then return end
    seen[p] = true
    out[#out + 1] = p
    for _, c in ipairs(kids[p] or {}) do walk(c) end
  end
  walk(pid)
  return out
end

-- signal(pids, "STOP"|"CONT"): kill(1) of the shell; a process that ended meanwhile is no error
local function signal(pids, sig)
  if #pids == 0 then return end
  local words = {}
  for i, p in ipairs(pids) do words[i] = tostring(math.tointeger(p)) end
  os.execute(("kill -s %s %s 2>/dev/null"):format(sig, table.concat(words, " ")))
end

-- stop_tree(pid): SIGSTOP to the process and its descendants, parents first (a stopped parent
-- starts no more children); a second pass catches a child started during the first
function M.stop_tree(pid)
  local stopped = {}
  for _ = 1, 2 do
    local new = {}
    for _, p in ipairs(M.tree(pid)) do
      if not stopped[p] then stopped[p] = true; new[#new + 1] = p end
    end
    signal(new, "STOP")
  end
end

-- cont_tree(pid): SIGCONT to the process and its descendants, children first (so that none
-- runs alone long under a stopped parent)
function M.cont_tree(pid)
  local t = M.tree(pid)
  local rev = {}
  for i = #t, 1, -1 do rev[#rev + 1] = t[i] end
  signal(rev, "CONT")
end

-- state(pid) -> the process's state letter ("R", "S", "T" stopped, ...), or nil when gone
function M.state(pid)
  local f = io.open("/proc/" .. tostring(pid) .. "/stat", "r")
  if not f then return nil end
  local s = f:read("a") or ""
  f:close()
  return s:match(".*%)%s+(%S+)")
end

-- ---- the pool ----

local Pool = {}
Pool.__index = Pool

-- new({jobs =, pause = bool, log = function(line), start = worker.start}) -> a pool of `jobs`
-- build workers; pause: whether pause() stops the builds (kreach.judge.policy.BUILDS.pause; false: pause()
-- and resume() do nothing, builds run beside the timed calls). start: how a build's worker is
-- started (kreach.run.worker.start's arguments and result; tests give their own argv).
function M.new(o)
  o = o or {}
  local jobs = o.jobs or M.cores()
  if math.type(jobs) ~= "integer" or jobs < 1 then error("builds.new: jobs must be a whole number of at least 1", 2) end
  return setmetatable({ jobs = jobs, pause_builds = o.pause ~= false, log = o.log or function() end,
                        start = o.start or worker.start, queue = {}, qhead = 1, qtail = 0, running = {}, finished = {},
                        submitted = {}, started_order = {}, paused = false, paused_s = 0, n_paused = 0,
                        max_running = 0 }, Pool)
end

-- submit(key, argv, opts): a build to run (opts: kreach.run.worker.start's); queued in order,
-- started when a worker is free. A key already submitted is not built twice.
function Pool:submit(key, argv, opts)
  if self.submitted[key] then return end
  self.submitted[key] = true
  self.qtail = self.qtail + 1
  self.queue[self.qtail] = { key = key, argv = argv, opts = opts or {} }
end

-- Whether a build of the key was submitted.
function Pool:has(key) return self.submitted[key] == true end

-- The number of builds queued or running.
function Pool:pending()
  return (self.qtail - self.qhead + 1) + #self.running
end

local function complete(self, key, ok, v, t0)
  self.finished[key] = { ok = ok, result = ok and v or nil, verdict = (not ok) and v or nil,
                         wall_s = core.now() - t0 }
end

-- service(wait_s): starts queued builds while fewer than `jobs` run (not while paused), and
-- reads what the running ones wrote; wait_s (default 0): how long to wait for the first of
-- them to write something.
function Pool:service(wait_s)
  local now = core.now
  if not self.paused then
    while #self.running < self.jobs and self.qhead <= self.qtail do
      local b = self.queue[self.qhead]
      self.queue[self.qhead] = nil
      self.qhead = self.qhead + 1
      b.t0 = now()
      self.started_order[#self.started_order + 1] = b.key
      local r, failed = self.start(b.argv, b.opts)
      if r then
        b.r = r
        self.running[#self.running + 1] = b
      else
        complete(self, b.key, false, failed, b.t0)
      end
    end
  end
  if #self.running > self.max_running then self.max_running = #self.running end
  local wait = wait_s or 0
  local still = {}
  for i, b in ipairs(self.running) do
    -- the first waits; the others are read without waiting
    local done, res = b.r:step((i == 1 and not self.paused) and wait or 0)
    if done == nil then still[#still + 1] = b else complete(self, b.key, done, res, b.t0) end
  end
  self.running = still
end

-- result(key) -> nil while its build is queued or running; else { ok, result (the build
-- job's), verdict (of a worker that failed), wall_s }
function Pool:result(key) return self.finished[key] end

-- wait(key, idle) -> the build's result (as result's), servicing the pool until it is there;
-- nil when the key was never submitted.
function Pool:wait(key)
  if not self.submitted[key] then return nil end
  while not self.finished[key] do
    if self.paused then self:resume() end
    self:service(0.05)
  end
  return self.finished[key]
end

-- pause(): while a call is timed (kreach.run.pair's time job, its timed phases): the running
-- builds' processes stopped, and none started, until resume(). Nothing when the pool was made
-- with pause = false.
function Pool:pause()
  if not self.pause_builds or self.paused then return end
  self.paused = true
  self.paused_at = core.now()
  self.n_paused = self.n_paused + 1
  for _, b in ipairs(self.running) do
    b.r:pause()
    local pid = b.r:pid()
    if pid then M.stop_tree(pid) end
  end
end

function Pool:resume()
  if not self.paused then return end
  for _, b in ipairs(self.running) do
    local pid = b.r:pid()
    if pid then M.cont_tree(pid) end
    b.r:resume()
  end
  self.paused = false
  self.paused_s = self.paused_s + (core.now() - self.paused_at)
end

-- close(): the builds still queued are dropped and the running ones killed (a campaign that
-- ends, or fails).
function Pool:close()
  if self.paused then self:resume() end
  for _, b in ipairs(self.running) do b.r:kill() end
  self.running = {}
  self.queue, self.qhead, self.qtail = {}, 1, 0
end

-- stats() -> { jobs, built, failed, max_running, paused (times), paused_s }
function Pool:stats()
  local built, failed = 0, 0
  for _, f in pairs(self.finished) do
    if f.ok and f.result and f.result.built then built = built + 1 else failed = failed + 1 end
  end
  return { jobs = self.jobs, built = built, failed = failed, max_running = self.max_running,
           paused = self.n_paused, paused_s = self.paused_s }
end

-- ---- what a build's result means for its item ----

-- The verdicts of a build that are the item's own: what the GPU worker would find again from
-- the same bytes (its load and its compile), so the item is not sent there.
M.FINAL = { compile_error = true, invalid_candidate = true }

-- verdict_of(entry) -> the item's verdict when its build decided it, else nil (built: the GPU
-- worker loads it from the caches), and a note when the build's worker failed (a timeout, a
-- crash: not the candidate's verdict; the GPU worker builds it again and judges it)
function M.verdict_of(entry)
  if not entry then return nil end
  if entry.ok then
    local v = entry.result and entry.result.verdict
    if type(v) == "table" and M.FINAL[v.verdict] then return v end
    return nil
  end
  local v = entry.verdict
  return nil, ("its build ahead failed (%s: %s); the GPU worker builds it"):format(tostring(v and v.verdict), tostring(v and v.reason))
end

return M
