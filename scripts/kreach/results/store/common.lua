-- kreach.results.store.common: what the results database's table files share with
-- kreach.results.store: the JSON codec of the stored columns (non-finite numbers as bare tokens),
-- the damaged-column reading (a column that does not read is left out and noted on the store),
-- the statement runners that raise a database error, the argument checks and the clock. No
-- table of its own.
local util = require "kreach.core.util"
local errors = require "kreach.errors"
local codec = require "kreach.json"

local M = {}

-- ---- JSON: kreach.json, with non-finite numbers as bare tokens (the store reads them back) ----
local json = {
  encode = function(v) return codec.encode(v, { nonfinite = "token" }) end,
  decode = codec.decode,
}
M.json = json

function M.enc(v) if v == nil then return nil end return json.encode(v) end

-- ---- damaged columns ----
-- A stored column that cannot be read as what it holds (JSON text that does not decode, a text
-- in a REAL column: someone edited the file with the sqlite3 shell) does not make the rest of
-- the database unreadable: the row is read without that field, and the damage is noted on the
-- store (self.damaged: { what =, id =, column =, why = }, one entry each) and reported through
-- self.warn(message), which writes "kreach: warning: <message>" to standard error unless the
-- caller set its own (kreach results collects them and exits 1 after writing what it read).
local function default_warn(msg) io.stderr:write("kreach: warning: ", msg, "\n") end

function M.damage(self, what, id, column, why)
  local d = { what = what, id = id, column = column, why = tostring(why) }
  d.message = ("%s: %s %s: column '%s' cannot be read (%s); left out"):format(self.path, what,
    tostring(id), column, d.why)
  self.damaged[#self.damaged + 1] = d
  local warn = self.warn
  if warn == nil then warn = default_warn end
  if warn then warn(d.message) end
end

-- dec(self, row, what, column[, id]): the JSON column of a row decoded in place (nil stays nil;
-- text that does not decode is left out, and noted as `what id`, id the row's own by default).
function M.dec(self, r, what, column, id)
  local v = r[column]
  if v == nil then return end
  if type(v) == "string" then
    local ok, x = pcall(json.decode, v)
    if ok then r[column] = x; return end
    v = x
  else
    v = ("a %s, not JSON text"):format(type(v))
  end
  r[column] = nil
  M.damage(self, what, id or r.id, column, v)
end

-- ---- helpers ----

function M.now() return os.date("!%Y-%m-%dT%H:%M:%SZ") end -- ISO-8601 UTC, to the second

function M.pid() return util.pid() end
function M.hostname() return util.hostname() end

-- CUDA versions as the integers CUDA reports (13000 for 13.0); kreach.versions() gives "13.0".
function M.cuda_int(v)
  if v == nil or v == false then return nil end
  if math.type(v) == "integer" then return v end
  local a, b = tostring(v):match("^(%d+)%.(%d+)")
  if a then return tonumber(a) * 1000 + tonumber(b) * 10 end
  return math.tointeger(tonumber(v))
end

function M.need(t, field, kind, what)
  local v = t[field]
  if type(v) ~= kind or (kind == "string" and v == "") then
    error(("%s: '%s' must be a%s %s (got %s)"):format(what, field, kind == "integer" and "n" or "",
      kind, v == nil and "nil" or type(v)), 3)
  end
  return v
end

function M.need_id(v, what)
  if math.type(v) ~= "integer" then
    error(("%s: an integer id expected, got %s"):format(what, v == nil and "nil" or math.type(v) or type(v)), 3)
  end
  return v
end

-- A failing statement raises "<path>: <sqlite's message>" as a kreach.errors database error
-- (exit status 3: the database cannot be used), never with a position.
function M.exec(self, sql, ...)
  local n, err = self.sql:exec(sql, ...)
  if not n then errors.database("%s: %s", self.path, err) end
  return n
end

function M.query(self, sql, ...)
  local rows, err = self.sql:query(sql, ...)
  if not rows then errors.database("%s: %s", self.path, err) end
  return rows
end

return M
