-- kreach.profile.shape: what every trace reader shares (kreach.profile.trace for the injection
-- library's JSON Lines, kreach.profile.kineto, kreach.profile.nsys): the common defaults and
-- order of a trace, and the conversions of numbers, grids and copy kinds. It requires nothing of
-- kreach's, so that the readers need not require kreach.profile.trace, which requires them to
-- dispatch on a file's format. The trace shape itself is described in kreach.profile.trace.
local M = {}

-- An integer from a number (rounded), or nil for anything else (NaN included).
function M.int(x)
  if type(x) ~= "number" or x ~= x then return nil end
  return math.tointeger(x) or math.floor(x + 0.5)
end

-- The order of records in a trace: by start, then by end.
function M.by_start(a, b)
  if a.start_ns ~= b.start_ns then return a.start_ns < b.start_ns end
  return a.end_ns < b.end_ns
end

-- finish(trace): the common defaults, everything sorted by start. Returns the trace.
function M.finish(t)
  t.kernels = t.kernels or {}
  t.memops = t.memops or {}
  t.ranges = t.ranges or {}
  t.dropped = t.dropped or 0
  t.meta = t.meta or {}
  table.sort(t.kernels, M.by_start)
  table.sort(t.memops, M.by_start)
  table.sort(t.ranges, M.by_start)
  return t
end

-- The three numbers of a grid or block: {x, y, z} from an array, or nil.
function M.dim3(v)
  if type(v) ~= "table" then return nil end
  local x, y, z = M.int(v[1]), M.int(v[2]), M.int(v[3])
  if not (x and y and z) then return nil end
  return { x, y, z }
end

-- The CUPTI copy kinds (CUpti_ActivityMemcpyKind), for readers that get a number.
M.COPY_KINDS = { [0] = "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" }

return M
