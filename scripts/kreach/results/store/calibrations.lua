-- kreach.results.store.calibrations: the calibrations table of the results database (a device's
-- measured copy bandwidth and peak rates, newest first by device uuid), its CREATE statement and
-- its methods, installed on the store by kreach.results.store.
local common = require "kreach.results.store.common"

local enc, dec, now, need, cuda_int = common.enc, common.dec, common.now, common.need, common.cuda_int
local exec, query = common.exec, common.query

local M = { SQL = [[
CREATE TABLE calibrations(id INTEGER PRIMARY KEY, device_uuid TEXT NOT NULL, device_name TEXT,
  measured_at TEXT, driver_version INTEGER, copy_bytes_per_s REAL, flops_per_s TEXT, details TEXT);
]] }
local T = {}
M.methods = T

function T:save_calibration(c)
  need(c, "device_uuid", "string", "save_calibration")
  exec(self, [[INSERT INTO calibrations(device_uuid, device_name, measured_at, driver_version,
      copy_bytes_per_s, flops_per_s, details) VALUES (?, ?, ?, ?, ?, ?, ?)]],
    c.device_uuid, c.device_name, c.measured_at or now(), cuda_int(c.driver_version),
    c.copy_bytes_per_s, enc(c.flops_per_s), enc(c.details))
  return self.sql:last_insert_rowid()
end

function T:calibration(uuid)
  if type(uuid) ~= "string" then error("calibration: a device uuid string expected", 2) end
  local r = query(self, "SELECT * FROM calibrations WHERE device_uuid = ? ORDER BY id DESC LIMIT 1", uuid)[1]
  if r then dec(self, r, "calibration", "flops_per_s"); dec(self, r, "calibration", "details") end
  return r
end

return M
