-- kreach.profile.nsys: reads Nsight Systems SQLite exports (nsys export --type sqlite) into the
-- common trace shape (kreach.profile.trace, with kreach.profile.shape's helpers), through
-- kreach.core.sqlite.
--
-- Tables read (each optional: nsys leaves out a table it has no rows for):
--   CUPTI_ACTIVITY_KIND_KERNEL   start, end, deviceId, streamId, correlationId, gridX..Z,
--                                blockX..Z, registersPerThread, staticSharedMemory,
--                                dynamicSharedMemory, demangledName/shortName/mangledName
--                                (ids into StringIds)
--   CUPTI_ACTIVITY_KIND_MEMCPY   start, end, deviceId, streamId, correlationId, bytes, copyKind
--   CUPTI_ACTIVITY_KIND_MEMSET   start, end, deviceId, streamId, correlationId, bytes
--   NVTX_EVENTS                  push/pop (eventType 59) and start/end (60) ranges: start, end,
--                                text or textId (into StringIds)
--   TARGET_INFO_GPU              the device's name and properties, when present
-- Times are nanoseconds from the start of the session.
local sqlite = require "kreach.core.sqlite"
local shape = require "kreach.profile.shape"

local M = {}

local NVTX_PUSHPOP, NVTX_STARTEND = 59, 60

local function columns(db, tbl)
  local rows, err = db:query("PRAGMA table_info(" .. tbl .. ")")
  if not rows then return nil, err end
  local cols = {}
  for _, r in ipairs(rows) do cols[r.name] = true end
  return cols
end

local function col(cols, name, alias)
  return cols[name] and ("t." .. name .. " AS " .. (alias or name)) or ("NULL AS " .. (alias or name))
end

local int = shape.int

-- read(path) -> trace, or nil and why.
function M.read(path, opts)
  local db, err = sqlite.open(path, { readonly = true, create = false })
  if not db then return nil, ("%s: %s"):format(path, tostring(err)) end
  local ok, res, rerr = pcall(function()
    local tables = {}
    local rows, qerr = db:query("SELECT name FROM sqlite_master WHERE type = 'table'")
    if not rows then return nil, qerr end
    for _, r in ipairs(rows) do tables[r.name] = true end
    if not tables.StringIds and (tables.CUPTI_ACTIVITY_KIND_KERNEL or tables.NVTX_EVENTS) then
      return nil, "not an Nsight Systems export: no StringIds table"
    end
    if not (tables.CUPTI_ACTIVITY_KIND_KERNEL or tables.CUPTI_ACTIVITY_KIND_MEMCPY or tables.NVTX_EVENTS or tables.StringIds) then
      return nil, "not an Nsight Systems export (no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS tables)"
    end
    local t = { source = "nsys", kernels = {}, memops = {}, ranges = {}, dropped = 0, meta = { path = path } }

    if tables.CUPTI_ACTIVITY_KIND_KERNEL then
      local c, cerr = columns(db, "CUPTI_ACTIVITY_KIND_KERNEL")
      if not c then return nil, cerr end
      local name_col = c.demangledName and "demangledName" or (c.shortName and "shortName" or nil)
      if not name_col then return nil, "CUPTI_ACTIVITY_KIND_KERNEL has no demangledName or shortName column" end
      local sql = "SELECT t.start AS start, t.\"end\" AS \"end\", " .. table.concat({
          col(c, "deviceId"), col(c, "streamId"), col(c, "correlationId"), col(c, "gridX"), col(c, "gridY"),
          col(c, "gridZ"), col(c, "blockX"), col(c, "blockY"), col(c, "blockZ"), col(c, "registersPerThread"),
          col(c, "staticSharedMemory"), col(c, "dynamicSharedMemory") }, ", ") ..
        ", n.value AS name" .. (c.mangledName and ", m.value AS mangled" or ", NULL AS mangled") ..
        " FROM CUPTI_ACTIVITY_KIND_KERNEL t LEFT JOIN StringIds n ON n.id = t." .. name_col ..
        (c.mangledName and " LEFT JOIN StringIds m ON m.id = t.mangledName" or "") .. " ORDER BY t.start"
      local ks, kerr = db:query(sql)
      if not ks then return nil, kerr end
      for i, r in ipairs(ks) do
        local s, e = int(r.start), int(r["end"])
        if not s or not e then return nil, ("CUPTI_ACTIVITY_KIND_KERNEL row %d: no start or end"):format(i) end
        local shared
        if r.staticSharedMemory or r.dynamicSharedMemory then
          shared = (int(r.staticSharedMemory) or 0) + (int(r.dynamicSharedMemory) or 0)
        end
        local grid = r.gridX and { int(r.gridX), int(r.gridY), int(r.gridZ) } or nil
        local block = r.blockX and { int(r.blockX), int(r.blockY), int(r.blockZ) } or nil
        t.kernels[i] = { name = r.name or r.mangled or "?", mangled = r.mangled, start_ns = s, end_ns = e,
          device = int(r.deviceId), stream = int(r.streamId), grid = grid, block = block,
          registers = int(r.registersPerThread), shared_bytes = shared, correlation = int(r.correlationId) }
      end
    end

    for kind, tbl in pairs({ memcpy = "CUPTI_ACTIVITY_KIND_MEMCPY", memset = "CUPTI_ACTIVITY_KIND_MEMSET" }) do
      if tables[tbl] then
        local c, cerr = columns(db, tbl)
        if not c then return nil, cerr end
        local sql = "SELECT t.start AS start, t.\"end\" AS \"end\", " .. table.concat({ col(c, "deviceId"),
          col(c, "streamId"), col(c, "correlationId"), col(c, "bytes"), col(c, "copyKind") }, ", ") ..
          " FROM " .. tbl .. " t ORDER BY t.start"
        local ms, merr = db:query(sql)
        if not ms then return nil, merr end
        for _, r in ipairs(ms) do
          local ck = r.copyKind
          if type(ck) == "number" then ck = shape.COPY_KINDS[int(ck)] end
          t.memops[#t.memops + 1] = { kind = kind, start_ns = int(r.start), end_ns = int(r["end"]), bytes = int(r.bytes),
            copy_kind = kind == "memcpy" and (type(ck) == "string" and ck or nil) or nil, device = int(r.deviceId),
            stream = int(r.streamId), correlation = int(r.correlationId) }
        end
      end
    end

    if tables.NVTX_EVENTS then
      local c, cerr = columns(db, "NVTX_EVENTS")
      if not c then return nil, cerr end
      local text = c.textId and "COALESCE(t.text, s.value)" or "t.text"
      local sql = "SELECT t.start AS start, t.\"end\" AS \"end\", " .. text .. " AS name FROM NVTX_EVENTS t" ..
        (c.textId and " LEFT JOIN StringIds s ON s.id = t.textId" or "") ..
        (" WHERE t.eventType IN (%d, %d) AND t.\"end\" IS NOT NULL ORDER BY t.start"):format(NVTX_PUSHPOP, NVTX_STARTEND)
      local rs, nerr = db:query(sql)
      if not rs then return nil, nerr end
      for _, r in ipairs(rs) do
        if type(r.name) == "string" then
          t.ranges[#t.ranges + 1] = { name = r.name, start_ns = int(r.start), end_ns = int(r["end"]) }
        end
      end
    end

    if tables.TARGET_INFO_GPU then
      local gs = db:query("SELECT * FROM TARGET_INFO_GPU")
      if gs and gs[1] then t.device = gs[1] end
    end
    return shape.finish(t)
  end)
  if db.close then db:close() end
  -- (what the reader raised, without the reader's own position: the message is about the file)
  if not ok then return nil, ("%s: %s"):format(path, (tostring(res):gsub("^[^\n]-%.lua:%d+: ", ""))) end
  if not res then return nil, ("%s: %s"):format(path, tostring(rerr)) end
  return res
end

return M
