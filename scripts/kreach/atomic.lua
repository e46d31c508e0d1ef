-- kreach.atomic: the files commands write (exports, reports). A file is written whole or not
-- at all: the bytes go to a temporary file beside it (mkstemp) that is renamed into place when
-- everything was written, so an error half-way (a full disk, a bad row) leaves the old file as
-- it was, and a reader never sees half an export. A path that resolves to a file the caller
-- protects (the results database, its -wal, -shm and -journal) is refused before anything is
-- written: `kreach results export --db r.db -o r.db` would otherwise replace the database.
local errors = require "kreach.errors"
local fs = require "kreach.core.fs"
local lfs = require "lfs"

local M = {}

local SIDE = { "", "-wal", "-shm", "-journal" }

-- The files of an SQLite database at `path`: the database and its side files, as resolved
-- paths (through links, and with the last name kept as given too, since a link named as the
-- database has its side files beside the link's target).
function M.database_files(path)
  local out, seen = {}, {}
  local function add(p) if p and not seen[p] then seen[p] = true; out[#out + 1] = p end end
  local bases = {}
  bases[#bases + 1] = (fs.resolve(path))
  local dir, base = path:match("^(.*)/([^/]*)$")
  if not dir then dir, base = ".", path end
  local rdir = fs.resolve(dir == "" and "/" or dir)
  if rdir and base ~= "" then bases[#bases + 1] = (rdir == "/" and "" or rdir) .. "/" .. base end
  for _, b in ipairs(bases) do
    for _, s in ipairs(SIDE) do add(b .. s) end
  end
  return out
end

local function same_inode(a, b)
  return a and b and a.dev == b.dev and a.ino == b.ino
end

-- The error a failed write raises: a kreach.errors error of status 1 (a command reports it and
-- exits with that status).
function M.write_error(msg) return errors.new("failed", msg) end

-- open(path, {protect = {paths}}) -> writer | nil, message, exit status.
-- path nil or "-": standard output. A path that exists and is not a regular file (a FIFO,
-- /dev/stdout) is written directly. Otherwise the writer holds a temporary file that
-- writer:commit() renames over the path. writer:write(...) raises on a write error (after
-- removing the temporary); writer:abort() removes it (also on garbage collection).
-- Refused: a path naming a protected file (status 2, a usage error), a directory (2); a
-- temporary that cannot be made (1).
function M.open(path, opts)
  opts = opts or {}
  if path == nil or path == "-" then
    return { path = "-", write = function(self, ...) io.stdout:write(...) return self end,
             commit = function() io.stdout:flush() return true end, abort = function() end }
  end
  local attr = lfs.attributes(path)
  if attr and attr.mode == "directory" then
    return nil, ("%s is a directory"):format(path), 2
  end
  local resolved, rerr = fs.resolve(path)
  if not resolved then return nil, rerr, 1 end
  for _, p in ipairs(opts.protect or {}) do
    if resolved == p or same_inode(attr, lfs.attributes(p)) then
      return nil, ("refusing to write %s: it is %s (choose another output file)"):format(path,
        p == resolved and ("the file " .. p) or ("the same file as " .. p)), 2
    end
  end
  if attr and attr.mode ~= "file" then
    local f, ferr = io.open(path, "w")
    if not f then return nil, ferr, 1 end
    return { path = path,
             write = function(self, ...)
               local ok, err = f:write(...)
               if not ok then error(M.write_error(err), 0) end
               return self
             end,
             -- close once: a commit that fails has closed the file already
             commit = function()
               if io.type(f) ~= "file" then return true end
               return f:close()
             end,
             abort = function() if io.type(f) == "file" then f:close() end end }
  end
  local w, werr = fs.writer(resolved)
  if not w then return nil, werr, 1 end
  local self = { path = path, temp = w:temp() }
  function self.write(s, ...)
    local ok, err = w:write(...)
    if not ok then w:abort(); error(M.write_error(err), 0) end
    return s
  end
  function self.commit() return w:commit() end
  function self.abort() w:abort() end
  return self
end

-- mkdirs(path) -> true, or nil and why: the directory and the ones above it, created where
-- missing (as mkdir -p)
function M.mkdirs(path)
  local cur = path:sub(1, 1) == "/" and "" or "."
  for part in path:gmatch("[^/]+") do
    cur = cur .. "/" .. part
    if lfs.attributes(cur, "mode") ~= "directory" then
      local ok, err = lfs.mkdir(cur)
      if not ok and lfs.attributes(cur, "mode") ~= "directory" then return nil, err end
    end
  end
  return true
end

-- tmpdir() -> a new private directory (mktemp -d, under $TMPDIR or /tmp), or nil and why. The
-- caller removes it (remove_tree).
function M.tmpdir()
  local p = io.popen("mktemp -d 2>&1")
  local d = p:read("l")
  local ok = p:close()
  if not ok or not d or d == "" or lfs.attributes(d, "mode") ~= "directory" then
    return nil, "mktemp -d failed: " .. tostring(d)
  end
  return d
end

-- remove_tree(path): the directory and everything below it, removed (links are removed, not
-- followed)
function M.remove_tree(path)
  for f in lfs.dir(path) do
    if f ~= "." and f ~= ".." then
      local p = path .. "/" .. f
      if lfs.symlinkattributes(p, "mode") == "directory" then M.remove_tree(p) else os.remove(p) end
    end
  end
  lfs.rmdir(path)
end

return M
