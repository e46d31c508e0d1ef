-- kreach.profile.trace: GPU activity traces in one shape, whatever recorded them. Readers for the
-- injection library's JSON Lines (here), PyTorch profiler Chrome traces (kreach.profile.kineto)
-- and Nsight Systems SQLite exports (kreach.profile.nsys); step selection by NVTX range.
--
-- The shape every reader returns (times are integer nanoseconds; the store saves exactly this):
--   { source = "cupti"|"kineto"|"nsys", command = {argv...}|nil, workload =, knobs =, device =,
--     wall_s =, window = {start_ns, end_ns}|nil, dropped = integer, meta = {...},
--     kernels = { {name=, mangled=, start_ns=, end_ns=, device=, stream=, grid={x,y,z},
--                  block={x,y,z}, registers=, shared_bytes=, correlation=}, ... },
--     memops = { {kind="memcpy"|"memset", start_ns=, end_ns=, bytes=, copy_kind=, device=, stream=}, ... },
--     ranges = { {name=, start_ns=, end_ns=[, gpu=true][, domain=]}, ... } }
-- (gpu: a PyTorch trace's GPU projection of a host range; domain: a named NVTX domain's range).
-- Readers return nil and "<file>:<line>: <what>" for a malformed file; misuse raises.
--
-- The readers of the other formats require kreach.profile.shape, not this module, so there is no
-- require cycle: this module requires them to dispatch on a file's format.
local lfs = require "lfs"
local cjson_safe = require "cjson.safe"
local shape = require "kreach.profile.shape"
local kineto = require "kreach.profile.kineto"
local nsys = require "kreach.profile.nsys"

local M = {}

M.FORMATS = { "kreach", "kineto", "nsys" }
M.JSONL_VERSION = 1
-- The activity kinds the injection library can record (KREACH_TRACE_KINDS; a trace's header
-- lists those it did), in this order.
M.TRACE_KINDS = { "kernel", "memcpy", "memset", "marker" }

-- ---- helpers shared by the readers (kreach.profile.shape; kept here for callers of old) ----

local int = shape.int
M.int = shape.int
local by_start = shape.by_start
M.finish = shape.finish -- finish(trace): the common defaults, everything sorted by start
M.dim3 = shape.dim3     -- {x, y, z} from an array, or nil
M.COPY_KINDS = shape.COPY_KINDS

-- ---- the injection library's JSON Lines ----

-- The exact integer value of `"key": 123` in a line of JSON: lua-cjson decodes numbers as
-- doubles, which cannot hold CUPTI's nanosecond timestamps (about 1.7e18) exactly.
local function exact_int(line, key)
  local digits = line:match('"' .. key .. '"%s*:%s*(%-?%d+)%s*[,}]')
  return digits and math.tointeger(tonumber(digits)) or nil
end

local function decode_line(line)
  local obj, err = cjson_safe.decode(line)
  if obj == nil then return nil, "not JSON: " .. tostring(err) end
  if type(obj) ~= "table" or obj[1] ~= nil then return nil, "not a JSON object" end
  return obj
end

local function str(v) if type(v) == "string" then return v end end
local function num(v) if type(v) == "number" then return int(v) end end

-- The exact value of an integer field of the record: the line's digits, read where the decoded
-- object agrees (a key of a nested object, or a key given twice, could be the first match)
local function exact_field(obj, line, key)
  local v, d = exact_int(line, key), obj[key]
  if v == nil or type(d) ~= "number" or math.abs(d - v) > math.max(1, math.abs(d)) * 2 ^ -50 then return nil end
  return v
end

-- A record's start and end: integers, in order, and (a timed record) not before the header's
-- start_ns, which the library reads from CUPTI's clock before any record (docs/profiling-inject.md)
local function interval(obj, line, what, t)
  local s, e = exact_field(obj, line, "start"), exact_field(obj, line, "end")
  if not s then return nil, ("%s without an integer 'start'"):format(what) end
  if not e then return nil, ("%s without an integer 'end'"):format(what) end
  if e < s then return nil, ("%s ends (%d) before it starts (%d)"):format(what, e, s) end
  local t0 = t.meta.header and t.meta.header.start_ns
  if t0 and s < t0 and not (s == 0 and e == 0) then
    return nil, ("%s starts (%d) before the trace does (the header's start_ns, %d)"):format(what, s, t0)
  end
  return s, e
end

local RECORD = {}

-- A record whose times CUPTI could not collect (start and end 0: a kernel still running at
-- exit) is counted in meta.untimed and left out.
local function untimed(t, s, e)
  if s == 0 and e == 0 then
    t.meta.untimed = (t.meta.untimed or 0) + 1
    return true
  end
end

function RECORD.kernel(t, obj, line)
  local s, e = interval(obj, line, "kernel", t)
  if not s then return nil, e end
  local name = str(obj.name) or str(obj.mangled)
  if not name then return nil, "kernel without a 'name'" end
  t.counts.kernels = t.counts.kernels + 1
  if untimed(t, s, e) then return true end
  local shared
  if obj.static_shared or obj.dynamic_shared then shared = (num(obj.static_shared) or 0) + (num(obj.dynamic_shared) or 0) end
  t.kernels[#t.kernels + 1] = { name = name, mangled = str(obj.mangled), start_ns = s, end_ns = e,
    device = num(obj.device), stream = num(obj.stream), grid = M.dim3(obj.grid), block = M.dim3(obj.block),
    registers = num(obj.registers), shared_bytes = shared, correlation = exact_int(line, "correlation") }
  return true
end

local function memop(kind)
  return function(t, obj, line)
    local s, e = interval(obj, line, kind, t)
    if not s then return nil, e end
    t.counts[kind .. "s"] = t.counts[kind .. "s"] + 1
    if untimed(t, s, e) then return true end
    local ck = obj.copy_kind
    if type(ck) == "number" then ck = M.COPY_KINDS[int(ck)] end
    t.memops[#t.memops + 1] = { kind = kind, start_ns = s, end_ns = e, bytes = exact_int(line, "bytes"),
      copy_kind = kind == "memcpy" and str(ck) or nil, device = num(obj.device), stream = num(obj.stream),
      correlation = exact_int(line, "correlation") }
    return true
  end
end
RECORD.memcpy = memop("memcpy")
RECORD.memset = memop("memset")

function RECORD.range(t, obj, line)
  local s, e = interval(obj, line, "range", t)
  if not s then return nil, e end
  if not str(obj.name) then return nil, "range without a 'name'" end
  t.counts.ranges = t.counts.ranges + 1
  t.ranges[#t.ranges + 1] = { name = obj.name, start_ns = s, end_ns = e, domain = str(obj.domain) }
  return true
end

-- The header record (the file's first) into t.meta.header (and t.device, t.command): true, or
-- nil and what is wrong with it.
local function read_header(t, obj, line)
  local v = exact_int(line, "version")
  if v ~= M.JSONL_VERSION then
    local ver = obj.version
    local shown = v and ("%d"):format(v) or type(ver) ~= "number" and ("%q (not a number)"):format(tostring(ver))
      or ("%s (not an integer)"):format(tostring(ver))
    return nil, ("trace format version %s, this kreach reads version %d"):format(shown, M.JSONL_VERSION)
  end
  t.meta.header = { version = v, pid = num(obj.pid), cupti_version = obj.cupti_version,
                    start_ns = exact_int(line, "start_ns") }
  -- what the library traced (KREACH_TRACE_KINDS); traces written before the field have all four
  if type(obj.kinds) == "table" then
    local kinds = {}
    for _, k in ipairs(obj.kinds) do
      if type(k) ~= "string" then return nil, "the header's 'kinds' is not a list of names" end
      kinds[#kinds + 1] = k
    end
    t.meta.header.kinds = kinds
  end
  -- KREACH_TRACE_ALTERNATE: kernels, memcpys and memsets traced in every other range of this name
  if obj.alternate ~= nil then
    if type(obj.alternate) ~= "string" or obj.alternate == "" then
      return nil, "the header's 'alternate' is not a range name"
    end
    t.meta.header.alternate = obj.alternate
  end
  if type(obj.device) == "table" then t.device = obj.device end
  if type(obj.command) == "table" then t.command = obj.command end
  return true
end

-- The footer record: its counts checked against the records read (t.counts), t.dropped and
-- t.meta.footer set: true, or nil and what is wrong with it.
local function read_footer(t, obj, line)
  local want = t.counts
  for _, k in ipairs({ "kernels", "memcpys", "memsets", "ranges" }) do
    local c = num(obj[k])
    if c == nil then return nil, ("the footer has no '%s' count"):format(k) end
    if c ~= want[k] then
      return nil, ("the footer counts %d %s, the file has %d"):format(c, k, want[k])
    end
  end
  if obj.dropped ~= nil and not (num(obj.dropped) and num(obj.dropped) >= 0) then
    local d = obj.dropped
    return nil, ("the footer's 'dropped' is %s, not a count"):format(type(d) == "number" and ("%.14g"):format(d) or tostring(d))
  end
  t.dropped = num(obj.dropped) or 0
  t.meta.footer = { buffers = num(obj.buffers), end_ns = exact_int(line, "end_ns"),
                    alternate_ranges = num(obj.alternate_ranges), switches_on = num(obj.switches_on),
                    switches_off = num(obj.switches_off), switch_on_ns = num(obj.switch_on_ns),
                    switch_off_ns = num(obj.switch_off_ns) }
  return true
end

-- read_kreach(path, {allow_partial =}) -> trace, or nil and "<file>:<line>: <what>". The format
-- is the injection library's (docs/profiling-inject.md). A file without its footer (the
-- program was killed before it exited) is an error unless allow_partial, which marks the trace
-- meta.partial; that error comes with a third value, "partial" (the file is a trace, its
-- program did not exit normally), where every other (a file missing, unreadable, not a trace
-- or malformed) has none. The footer's counts must match the records read. Records of an unknown type
-- are skipped and counted in meta.unknown_records, so that a newer library's extra records do
-- not break an older reader.
function M.read_kreach(path, opts)
  opts = opts or {}
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local probe, perr = f:read(0)
  if probe == nil and perr then
    f:close()
    return nil, ("%s: %s"):format(path, perr)
  end
  local t = { source = "cupti", kernels = {}, memops = {}, ranges = {}, dropped = 0, meta = { path = path },
              counts = { kernels = 0, memcpys = 0, memsets = 0, ranges = 0 } }
  local n, header, footer, unknown = 0, nil, nil, 0
  local function fail(msg)
    f:close()
    return nil, ("%s:%d: %s"):format(path, n, msg)
  end
  for line in f:lines() do
    n = n + 1
    line = line:gsub("\r$", "")
    if line:find("%S") then
      local obj, derr = decode_line(line)
      if not obj and header and not footer and f:read(0) == nil then
        -- the last line, cut off where the program stopped writing (the library writes whole
        -- lines, in chunks of up to 1 MiB): a partial trace, which --allow-partial reads up to it
        local at_end = f:seek("end", -1)
        local last = at_end and f:read(1)
        if last ~= "\n" then
          if not opts.allow_partial then
            f:close()
            return nil, ("%s:%d: the last line is cut off (%s): the program did not exit normally, so the trace is incomplete (--allow-partial analyses the lines before it)"):format(path, n, derr), "partial"
          end
          t.meta.cut_line = n
          break
        end
      end
      if not obj then return fail(derr) end
      local ty = obj.type
      if not header then
        if ty ~= "header" then return fail("not a kreach trace: the first record is not a header") end
        local ok, herr = read_header(t, obj, line)
        if not ok then return fail(herr) end
        header = obj
      elseif footer then
        return fail("a record after the footer")
      elseif ty == "footer" then
        footer = obj
        local ok, ferr = read_footer(t, obj, line)
        if not ok then return fail(ferr) end
      elseif type(ty) ~= "string" then
        return fail("a record without a 'type'")
      elseif ty == "header" then
        return fail("a second header")
      elseif RECORD[ty] then
        local ok, rerr = RECORD[ty](t, obj, line)
        if not ok then return fail(rerr) end
      else
        unknown = unknown + 1
      end
    end
  end
  f:close()
  t.counts = nil
  if not header then return nil, ("%s: empty: not a kreach trace"):format(path) end
  if not footer then
    if not opts.allow_partial then
      return nil, ("%s:%d: no footer: the program did not exit normally (killed or crashed?), so the trace may be incomplete (--allow-partial analyses what it holds)"):format(path, n),
        "partial"
    end
    t.meta.partial = true
  end
  if unknown > 0 then t.meta.unknown_records = unknown end
  return M.finish(t)
end

-- ---- all formats ----

-- detect(path) -> "kreach" | "kineto" | "nsys", or nil and why.
function M.detect(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local head, rerr = f:read(4096)
  f:close()
  -- (a directory opens, and fails to read)
  if head == nil and rerr then return nil, ("%s: %s"):format(path, rerr) end
  head = head or ""
  if head:sub(1, 16) == "SQLite format 3\0" then return "nsys" end
  if head:sub(1, 2) == "\31\139" then
    return nil, ("%s is gzip-compressed: kreach reads plain JSON only (gunzip it first)"):format(path)
  end
  local first = head:match("^%s*([^\n]*)")
  if first and first:find('"type"%s*:%s*"header"') then return "kreach" end
  if head:find('"traceEvents"') or head:match("^%s*%[") or head:find('"schemaVersion"') then return "kineto" end
  if head:match("^%s*{") then return "kineto" end
  return nil, ("%s: not a trace kreach knows (kreach JSON Lines, a PyTorch profiler Chrome trace, or an Nsight Systems SQLite export)"):format(path)
end

-- read(path, {format = "auto"|"kreach"|"kineto"|"nsys", allow_partial =}) -> trace, or nil and
-- why (naming the file), and "partial" as a third value when the trace is only incomplete
-- (read_kreach); an unknown format raises.
function M.read(path, opts)
  opts = opts or {}
  -- a pipe would be read twice (the format's guess, then the reader) and block; a device such
  -- as /dev/zero never ends
  local mode = lfs.attributes(path, "mode")
  if mode and mode ~= "file" then
    return nil, ("%s: not a regular file (a %s): a trace is read from a file"):format(path, mode)
  end
  local format = opts.format or "auto"
  if format == "auto" then
    local f, err = M.detect(path)
    if not f then return nil, err end
    format = f
  end
  if format == "kreach" or format == "cupti" then return M.read_kreach(path, opts) end
  if format == "kineto" then return kineto.read(path, opts) end
  if format == "nsys" then return nsys.read(path, opts) end
  error(("unknown trace format '%s' (auto, kreach, kineto or nsys)"):format(tostring(format)), 2)
end

-- ---- step selection ----

-- Whether a range's name is the one asked for: the same, or the same followed by "#<n>" (the
-- PyTorch profiler names its steps ProfilerStep#0, ProfilerStep#1, ...).
function M.range_matches(name, want)
  if name == want then return true end
  local rest = name:sub(#want + 1)
  return name:sub(1, #want) == want and rest:match("^#%d+$") ~= nil
end

local function merge(intervals)
  table.sort(intervals, function(a, b) return a[1] < b[1] end)
  local out = {}
  for _, iv in ipairs(intervals) do
    local last = out[#out]
    if last and iv[1] <= last[2] then
      if iv[2] > last[2] then last[2] = iv[2] end
    else
      out[#out + 1] = { iv[1], iv[2] }
    end
  end
  return out
end
M.merge = merge

-- The records whose start lies in one of the sorted, disjoint, half-open intervals [s, e).
local function inside(records, intervals)
  local out, j = {}, 1
  for _, r in ipairs(records) do
    while intervals[j] and r.start_ns >= intervals[j][2] do j = j + 1 end
    local iv = intervals[j]
    if not iv then break end
    if r.start_ns >= iv[1] then out[#out + 1] = r end
  end
  return out
end

local function range_names(ranges)
  local seen, names = {}, {}
  for _, r in ipairs(ranges) do
    local base = r.name:gsub("#%d+$", "")
    if not seen[base] then seen[base] = true; names[#names + 1] = base end
    if #names >= 8 then break end
  end
  return names
end

-- A trace the library recorded with KREACH_TRACE_ALTERNATE=NAME (kreach profile --alternate)
-- holds kernels and memory operations from the 1st, 3rd, 5th... push of NAME to the next push
-- only. Of the chosen `matches` (all of NAME, in push order), returns the traced ones' intervals
-- and the alternation as meta.selection keeps it, or nil and why.
local function split_alternate(trace, name, matches, first, last)
  for _, r in ipairs(matches) do
    if r.name ~= name then
      return nil, ("the trace traced every other '%s' range (KREACH_TRACE_ALTERNATE), which counts ranges of exactly that name; '%s' is another"):format(name, r.name)
    end
  end
  local f = trace.meta and trace.meta.footer
  if f and (f.alternate_ranges or 0) < #matches then
    return nil, ("the library saw %d pushes of '%s' but the trace holds %d such ranges, so which were traced is not known"):format(
      f.alternate_ranges or 0, name, #matches)
  end
  local traced, steps_ns, from = {}, {}, nil
  for i = first, last do
    local r = matches[i]
    if i % 2 == 1 then
      traced[#traced + 1] = { r.start_ns, r.end_ns }
      from = from or i
    end
    if from then steps_ns[#steps_ns + 1] = r.end_ns - r.start_ns end
  end
  if #traced == 0 then
    return nil, ("no traced '%s' range is left after the skip (every other one is traced: the 1st, 3rd...)"):format(name)
  end
  return traced, { traced = #traced, untraced = (last - first + 1) - #traced, steps_ns = steps_ns, from = from }
end

-- select(trace, {range =, skip =, count =}) -> a new trace holding the kernels and memory
-- operations that start inside the chosen ranges, or nil and why. With `range`: the ranges of
-- that name (host ranges; the GPU projections of a PyTorch trace when it has no host range of
-- that name), in time order, after skipping the first `skip` (warm-up) and keeping `count` (all
-- by default); the window spans them and wall_s is their summed length. Without: the window is
-- the first kernel's start to the last kernel's end, and wall_s its length. Either way
-- meta.selection records the intervals the report measures busy time over.
-- A trace that alternated (split_alternate) is measured over its traced chosen ranges only, and
-- meta.selection.alternate holds { traced =, untraced =, steps_ns = the chosen ranges' lengths
-- from the first traced one on, traced and untraced in turn, from = that one's place among all
-- the ranges of the name (1: the first, in which tracing was on already) }; such a trace needs
-- `range` to be the name it alternated on.
function M.select(trace, opts)
  opts = opts or {}
  local out = {}
  for k, v in pairs(trace) do out[k] = v end
  local meta = {}
  for k, v in pairs(trace.meta or {}) do meta[k] = v end
  out.meta = meta
  local alternate = meta.header and meta.header.alternate
  if alternate and opts.range ~= alternate then
    return nil, ("the trace traced kernels in every other '%s' range only (KREACH_TRACE_ALTERNATE): measure it over those steps (--steps %s)"):format(
      alternate, alternate)
  end
  local intervals
  if opts.range then
    local skip = opts.skip or 0
    if math.type(skip) ~= "integer" or skip < 0 then error("skip: a non-negative integer expected", 2) end
    local function collect(gpu)
      local m = {}
      for _, r in ipairs(trace.ranges or {}) do
        if (r.gpu and true or false) == gpu and M.range_matches(r.name, opts.range) then m[#m + 1] = r end
      end
      return m
    end
    local matches = collect(false)
    if #matches == 0 then matches = collect(true) end
    if #matches == 0 then
      local names = range_names(trace.ranges or {})
      return nil, ("no range named '%s' in the trace (%s)"):format(opts.range,
        #names > 0 and ("its ranges: " .. table.concat(names, ", ")) or "it has no ranges")
    end
    table.sort(matches, by_start)
    if skip >= #matches then
      return nil, ("skipping %d leaves none of the %d '%s' ranges"):format(skip, #matches, opts.range)
    end
    local last = #matches
    if opts.count then last = math.min(last, skip + opts.count) end
    local chosen, alt = {}, nil
    if alternate then
      chosen, alt = split_alternate(trace, alternate, matches, skip + 1, last)
      if not chosen then return nil, alt end
    else
      for i = skip + 1, last do chosen[#chosen + 1] = { matches[i].start_ns, matches[i].end_ns } end
    end
    intervals = merge(chosen)
    meta.selection = { range = opts.range, skip = skip, selected = last - skip, total = #matches, intervals = intervals,
                       alternate = alt }
  else
    local ks = trace.kernels or {}
    if #ks == 0 then
      out.window, out.wall_s = nil, nil
      meta.selection = { intervals = {} }
      out.kernels, out.memops = {}, {}
      return out
    end
    local s, e = ks[1].start_ns, ks[1].end_ns
    for _, k in ipairs(ks) do
      if k.start_ns < s then s = k.start_ns end
      if k.end_ns > e then e = k.end_ns end
    end
    intervals = { { s, e } }
    meta.selection = { intervals = intervals }
    -- every kernel is inside by construction; memory operations must start by the last end
    out.kernels = ks
    out.memops = {}
    for _, m in ipairs(trace.memops or {}) do
      if m.start_ns >= s and m.start_ns <= e then out.memops[#out.memops + 1] = m end
    end
  end
  local wall = 0
  for _, iv in ipairs(intervals) do wall = wall + (iv[2] - iv[1]) end
  if opts.range then
    out.kernels = inside(trace.kernels or {}, intervals)
    out.memops = inside(trace.memops or {}, intervals)
  end
  out.window = { intervals[1][1], intervals[#intervals][2] }
  out.wall_s = wall / 1e9
  return out
end

-- summary(trace) -> { kernels =, memcpys =, memsets =, ranges =, dropped = }
function M.summary(t)
  local s = { kernels = #(t.kernels or {}), memcpys = 0, memsets = 0, ranges = #(t.ranges or {}), dropped = t.dropped or 0 }
  for _, m in ipairs(t.memops or {}) do
    if m.kind == "memcpy" then s.memcpys = s.memcpys + 1 else s.memsets = s.memsets + 1 end
  end
  return s
end

return M
