-- kreach.run.devices: a GPU worker per device (docs/evaluation.md, "A worker per GPU:
-- --devices"). `--devices 0,1,...` or `all` names the GPUs a campaign evaluates on; each gets
-- its own GPU worker, pinned with CUDA_VISIBLE_DEVICES, and items go to whichever is free.
-- This module holds the parsing and the dispatch as plain data and pure functions; the
-- campaign (kreach.run.campaign) runs the workers and writes every result itself.
local core = require "kreach.core"
local json = require "kreach.json"
local text = require "kreach.text"

local M = {}

M.MAX_DEVICES = 64

-- parse(s) -> { all = true } or a list of device numbers (ascending, each once), or nil and
-- why. s: "all", or numbers separated by commas ("0,1,3").
function M.parse(s)
  if type(s) ~= "string" then return nil, "--devices: a list of GPU numbers such as 0,1 or 'all' expected" end
  local t = s:match("^%s*(.-)%s*$")
  if t == "all" then return { all = true } end
  if t == "" then return nil, "--devices: empty (give GPU numbers such as 0,1, or 'all')" end
  local out, seen = {}, {}
  for part in (t .. ","):gmatch("([^,]*),") do
    local w = part:match("^%s*(.-)%s*$")
    local n = w:match("^%d+$") and math.tointeger(tonumber(w))
    if not n then return nil, ("--devices: '%s' is not a GPU number (in '%s')"):format(w, s) end
    if n >= M.MAX_DEVICES then return nil, ("--devices: %d is past the %d GPUs kreach can use"):format(n, M.MAX_DEVICES) end
    if seen[n] then return nil, ("--devices: GPU %d is named twice"):format(n) end
    seen[n] = true
    out[#out + 1] = n
  end
  table.sort(out)
  return out
end

-- resolve(parsed, count) -> the list of device numbers, or nil and why: `all` is 0..count-1;
-- a number must be below count (the GPUs this machine has).
function M.resolve(parsed, count)
  if count < 1 then return nil, "--devices: this machine has no GPU" end
  if parsed.all then
    local out = {}
    for i = 0, count - 1 do out[#out + 1] = i end
    return out
  end
  for _, n in ipairs(parsed) do
    if n >= count then
      return nil, ("--devices: there is no GPU %d (this machine has %d: 0 to %d)"):format(n, count, count - 1)
    end
  end
  return parsed
end

-- visible(n, parent) -> what CUDA_VISIBLE_DEVICES pins device n to: n itself, or, where
-- kreach runs with CUDA_VISIBLE_DEVICES set (parent: its value), the n-th entry of that list
-- (the numbers of --devices are the GPUs kreach sees), or nil and why.
function M.visible(n, parent)
  if not parent or parent == "" then return tostring(n) end
  local list = {}
  for e in (parent .. ","):gmatch("%s*([^,]-)%s*,") do list[#list + 1] = e end
  if not list[n + 1] or list[n + 1] == "" then
    return nil, ("--devices: GPU %d is not among the %d of CUDA_VISIBLE_DEVICES=%s"):format(n, #list, parent)
  end
  return list[n + 1]
end

-- env(n, parent) -> the variables a worker of device n gets: it sees that GPU alone, as its
-- device 0 (parent: as visible's), and kreach's device there is that one (KREACH_DEVICE=0, in
-- place of the parent's choice). CUDA_DEVICE_ORDER=PCI_BUS_ID makes the numbers nvidia-smi's.
function M.env(n, parent)
  local v = assert(M.visible(n, parent))
  return { "CUDA_VISIBLE_DEVICES=" .. v, "CUDA_DEVICE_ORDER=PCI_BUS_ID", "KREACH_DEVICE=0" }
end

-- probe(n) -> device n's properties (kreach info's: name, uuid, arch, ...), or nil and why:
-- `kreach info --json` run with the GPU pinned as a worker of it would be (no candidate runs).
function M.probe(n)
  local vis, verr = M.visible(n, os.getenv("CUDA_VISIBLE_DEVICES"))
  if not vis then return nil, verr end
  local p = io.popen(("CUDA_VISIBLE_DEVICES=%s CUDA_DEVICE_ORDER=PCI_BUS_ID KREACH_DEVICE=0 %s info --json 2>/dev/null"):format(
    text.shell_quote(vis), text.shell_quote(core.executable())))
  local out = p:read("a")
  p:close()
  local ok, info = pcall(json.decode, out)
  if not ok or type(info) ~= "table" or type(info.device) ~= "table" then
    return nil, ("GPU %d: %s"):format(n, ok and type(info) == "table" and tostring(info.error) or "kreach info gave nothing")
  end
  return info.device
end

-- count() -> the number of GPUs kreach sees (probing 0, 1, ... until one is missing)
function M.count()
  local n = 0
  while n < M.MAX_DEVICES and M.probe(n) do n = n + 1 end
  return n
end

-- ---- the dispatch ----

-- dispatcher(devices) -> the state of the dispatch: which device is free, which item each
-- busy one has. Plain data; take, give and idle below are its only changes.
function M.dispatcher(devices)
  local d = { devices = {}, free = {}, busy = {} }
  for i, n in ipairs(devices) do d.devices[i] = n; d.free[#d.free + 1] = n end
  return d
end

-- take(d, item) -> the device the item goes to (the lowest-numbered free one), or nil when
-- every device is busy.
function M.take(d, item)
  if #d.free == 0 then return nil end
  table.sort(d.free)
  local n = table.remove(d.free, 1)
  d.busy[n] = item
  return n
end

-- give(d, n) -> the item device n had: device n is free again.
function M.give(d, n)
  local item = d.busy[n]
  if item == nil then error(("devices.give: device %s is not busy"):format(tostring(n)), 2) end
  d.busy[n] = nil
  d.free[#d.free + 1] = n
  return item
end

-- idle(d) -> true when no device has an item.
function M.idle(d) return next(d.busy) == nil end

-- plan(durations, devices) -> for each item (in order) the device it runs on and when it
-- starts and ends, items going to whichever device is free first (ties: the lowest-numbered):
-- what the dispatch does with items of these durations, as a pure function (for tests and the
-- docs' arithmetic).
function M.plan(durations, devices)
  local at = {} -- device -> when it is free
  for _, n in ipairs(devices) do at[n] = 0 end
  local out = {}
  for i, dur in ipairs(durations) do
    local best
    for _, n in ipairs(devices) do
      if best == nil or at[n] < at[best] or (at[n] == at[best] and n < best) then best = n end
    end
    out[i] = { device = best, start = at[best], finish = at[best] + dur }
    at[best] = at[best] + dur
  end
  return out
end

return M
