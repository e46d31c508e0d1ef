-- What the busted specs share (tests/lua/runner.lua puts this folder on package.path): new
-- temporary directories, and whole files read and written as bytes.
local lfs = require "lfs"

local M = {}

-- A new empty directory; the caller removes it.
function M.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(lfs.mkdir(d))
  return d
end

function M.slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

function M.spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

return M
