-- kreach.generate.manifest: the files kreach generate writes into --out: each candidate, and
-- manifest.json, the JSON array of {file, problem, origin} that `kreach eval` reads. An existing
-- manifest's entries are kept (an entry for the same file is replaced); one that does not read
-- is the user's to fix, never overwritten. Every file is written whole or not at all
-- (kreach.atomic), never over the results database.
local errors = require "kreach.errors"
local json = require "kreach.json"
local output = require "kreach.atomic"
local text = require "kreach.text"

local M = {}

-- write_file(path, text, db_path): the file whole or not at all, never over the results database
function M.write_file(path, body, db_path)
  local out, err, status = output.open(path, { protect = output.database_files(db_path) })
  if not out then errors.raise(status, ("cannot write %s: %s"):format(path, tostring(err))) end
  out:write(body)
  local ok, cerr = out:commit()
  if not ok then errors.failed("cannot write %s: %s", path, tostring(cerr)) end
end

local Manifest = {}
Manifest.__index = Manifest

-- open(dir, db_path) -> the manifest of dir (dir/manifest.json's entries, or none); a file there
-- that is not a manifest raises a file error
function M.open(dir, db_path)
  local self = setmetatable({ dir = dir, path = dir .. "/manifest.json", db_path = db_path,
                              entries = {}, by_file = {} }, Manifest)
  local f = io.open(self.path, "r")
  if f then
    local body = f:read("a")
    f:close()
    local ok, old = pcall(json.decode, body)
    if not ok or type(old) ~= "table" then
      errors.file(self.path, "not a manifest (a JSON array of {file, problem, origin}): " .. text.clean(tostring(old), 200))
    end
    for i, e in ipairs(old) do
      if type(e) ~= "table" or type(e.file) ~= "string" then
        errors.file(self.path, ("entry %d has no file name"):format(i))
      end
      self.entries[#self.entries + 1] = e
      self.by_file[e.file] = #self.entries
    end
  end
  return self
end

-- add(file, code, entry): writes the candidate dir/file and puts its entry (replacing one for
-- the same file)
function Manifest:add(file, code, entry)
  M.write_file(self.dir .. "/" .. file, code, self.db_path)
  local i = self.by_file[file]
  if i then self.entries[i] = entry
  else self.entries[#self.entries + 1] = entry; self.by_file[file] = #self.entries end
end

-- save(): writes manifest.json
function Manifest:save()
  M.write_file(self.path, json.encode(json.array(self.entries)) .. "\n", self.db_path)
end

return M
