-- kreach.profile.kineto: reads PyTorch profiler (Kineto) Chrome traces, the JSON that
-- prof.export_chrome_trace(path) and tensorboard_trace_handler write, into the common trace
-- shape (kreach.profile.trace, with kreach.profile.shape's helpers). Plain JSON only: a .json.gz must be decompressed first.
--
-- What is read: complete events ("ph": "X") of category "kernel" (older Kineto: "Kernel"),
-- "gpu_memcpy"/"gpu_memset" ("Memcpy"/"Memset"), "user_annotation" (host ranges, including
-- the profiler's ProfilerStep#N) and "gpu_user_annotation" (their GPU projections, marked gpu).
-- ts and dur are microseconds with nanosecond decimals, relative to baseTimeNanoseconds; the
-- trace keeps them relative (ns). Kernel arguments: "device", "stream", "correlation", "grid",
-- "block", "registers per thread", "shared memory" (static plus dynamic).
local cjson_safe = require "cjson.safe"
local shape = require "kreach.profile.shape"

local M = {}

local int = shape.int

local function ns(us) return int(us * 1000) end
local TS_LIMIT_US = 2 ^ 62 / 1000 -- an event's start, so that start + duration stay integers in ns
local DUR_LIMIT_US = 86400e6      -- a day: no kernel, copy or range of a trace lasts longer

local function line_of(text, pos)
  local line = 1
  for _ in text:sub(1, math.max(pos - 1, 0)):gmatch("\n") do line = line + 1 end
  return line
end

-- copy kind from Kineto's name: "Memcpy HtoD (Pageable -> Device)" -> "HtoD"
local function copy_kind(name)
  return name:match("^Memcpy (%a+)") or name:match("[Mm]emcpy%s*(%a+)")
end

local CATS = {
  kernel = "kernel", gpu_memcpy = "memcpy", memcpy = "memcpy", gpu_memset = "memset", memset = "memset",
  user_annotation = "range", gpu_user_annotation = "gpu_range",
}

-- read(path) -> trace, or nil and "<file>:<line>: <what>" (JSON syntax errors carry the line;
-- an event missing a field names the event's index in traceEvents).
function M.read(path, opts)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text, rerr = f:read("a")
  f:close()
  if not text then return nil, ("%s: %s"):format(path, tostring(rerr)) end
  if text:sub(1, 2) == "\31\139" then
    return nil, ("%s is gzip-compressed: kreach reads plain JSON only (gunzip it first)"):format(path)
  end
  local doc, derr = cjson_safe.decode(text)
  if doc == nil then
    local pos = tonumber(tostring(derr):match("at character (%d+)"))
    if pos then return nil, ("%s:%d: not JSON: %s"):format(path, line_of(text, pos), derr) end
    return nil, ("%s: not JSON: %s"):format(path, tostring(derr))
  end
  text = nil
  local events
  if type(doc) == "table" and doc[1] ~= nil then events = doc
  elseif type(doc) == "table" and type(doc.traceEvents) == "table" then events = doc.traceEvents
  else return nil, ("%s:1: not a Chrome trace: no 'traceEvents' list"):format(path) end

  local t = { source = "kineto", kernels = {}, memops = {}, ranges = {}, dropped = 0, meta = { path = path } }
  if type(doc.deviceProperties) == "table" and type(doc.deviceProperties[1]) == "table" then
    t.device = doc.deviceProperties[1]
  end
  t.meta.schema_version = type(doc.schemaVersion) == "number" and doc.schemaVersion or nil
  t.meta.base_time_ns = type(doc.baseTimeNanoseconds) == "number" and doc.baseTimeNanoseconds or nil
  if type(doc.distributedInfo) == "table" then t.meta.distributed = doc.distributedInfo end
  local null = cjson_safe.null
  for i, ev in ipairs(events) do
    if type(ev) ~= "table" then
      return nil, ("%s: traceEvents[%d] is not an object"):format(path, i)
    end
    local cat = type(ev.cat) == "string" and CATS[ev.cat:lower()] or nil
    if not cat and ev.ph == "X" and type(ev.name) == "string" and ev.name:match("^ProfilerStep#%d+$") then cat = "range" end
    if cat and ev.ph == "X" then
      local function bad(what)
        return nil, ("%s: traceEvents[%d] (%s '%s'): %s"):format(path, i, ev.cat or cat, tostring(ev.name), what)
      end
      if type(ev.ts) ~= "number" then return bad("no numeric 'ts'") end
      if type(ev.dur) ~= "number" then return bad("no numeric 'dur'") end
      -- the reader takes NaN and Infinity: times are finite, and in nanoseconds fit 63 bits
      if not (math.abs(ev.ts) < TS_LIMIT_US) then return bad(("'ts' is %s, not a time in microseconds (finite, below %.3g)"):format(ev.ts ~= ev.ts and "NaN" or tostring(ev.ts), TS_LIMIT_US)) end
      if ev.dur < 0 then return bad("a negative 'dur'") end
      if not (ev.dur <= DUR_LIMIT_US) then return bad(("'dur' is %s, not a duration in microseconds (finite, at most a day)"):format(ev.dur ~= ev.dur and "NaN" or tostring(ev.dur))) end
      if type(ev.name) ~= "string" then return bad("no 'name'") end
      local s = ns(ev.ts)
      local e = s + ns(ev.dur)
      local a = type(ev.args) == "table" and ev.args or {}
      local function n(key) local v = a[key]; if v ~= null and type(v) == "number" then return int(v) end end
      if cat == "kernel" then
        t.kernels[#t.kernels + 1] = { name = ev.name, start_ns = s, end_ns = e, device = n("device"), stream = n("stream") or int(tonumber(ev.tid)),
          grid = shape.dim3(a.grid), block = shape.dim3(a.block), registers = n("registers per thread"),
          shared_bytes = n("shared memory"), correlation = n("correlation") }
      elseif cat == "memcpy" or cat == "memset" then
        t.memops[#t.memops + 1] = { kind = cat, start_ns = s, end_ns = e, bytes = n("bytes"),
          copy_kind = cat == "memcpy" and copy_kind(ev.name) or nil, device = n("device"), stream = n("stream"),
          correlation = n("correlation") }
      else
        t.ranges[#t.ranges + 1] = { name = ev.name, start_ns = s, end_ns = e, gpu = cat == "gpu_range" or nil }
      end
    end
  end
  return shape.finish(t)
end

return M
