-- kreach.problem.registry: where problems are. The roots problem files are looked for under,
-- the suites there (problems/<...>/suites/<name>.lua) and their problem files in id order,
-- loading a problem file (in kreach.problem.files' sandbox), and resolving what a user typed (a
-- path, an id, a suite's id or a name, loosely) to a file.
local errors = require "kreach.errors"
local files = require "kreach.problem.files"
local home = require "kreach.home"
local lfs = require "lfs"
local define = require "kreach.problem.define"
local text = require "kreach.text"

local M = {}

local file_env, run_file = files.file_env, files.run_file
local Problem = define.Problem

local function dir_exists(p)
  return lfs.attributes(p, "mode") == "directory"
end

-- Where problem files are looked for: $KREACH_PROBLEMS (a colon-separated list), ./problems,
-- and kreach.home's places: problems/ beside or above the binary's directory (a build tree
-- inside the repository), share/kreach/problems beside the binary's bin/ (an installed kreach:
-- cmake --install), else the source tree's (a build directory outside it). The second result:
-- every place looked at.
function M.roots()
  local roots = {}
  local env = os.getenv("KREACH_PROBLEMS")
  if env and env ~= "" then
    for p in env:gmatch("[^:]+") do
      -- a root that is not a directory is a mistake in the variable, said rather than skipped
      -- (the problems the user meant to add would otherwise be silently missing)
      local mode = lfs.attributes(p, "mode")
      if mode ~= "directory" then
        errors.usage("KREACH_PROBLEMS: %s is not a directory (%s)", p, mode and ("it is a " .. mode) or "no such file or directory")
      end
      roots[#roots + 1] = p
    end
  end
  if dir_exists("problems") then roots[#roots + 1] = "problems" end
  local found, looked = home.dirs("problems", "problems")
  for _, d in ipairs(found) do roots[#roots + 1] = d end
  table.insert(looked, 1, "./problems")
  return roots, looked
end

-- The id a suite's file must declare, by path (filled by load_suite): a file a suite lists as
-- problem 5 that says id = 1 is a mistake the suite's lookups would hide.
local suite_ids = {}

-- Loads a problem file. opts.sizes and opts.dtype are kept for instantiate. Errors name the
-- file: a syntax error with its line, a bad field with its name.
function M.load(path, opts)
  -- strict globals: a problem file reads the standard library and assigns no globals
  local chunk, err = loadfile(path, "t", file_env("problem", true))
  if not chunk then errors.file(path, err) end
  local ok, p = run_file(path, chunk)
  if not ok then
    -- a user error raised while it loads (a bad kreach.problem{...}) keeps its status
    errors.file(path, errors.message(p), errors.is(p) and p.status or nil)
  end
  if getmetatable(p) ~= Problem then
    errors.load("%s: the file must return kreach.problem{...}, it returned %s", path, type(p))
  end
  local want = suite_ids[path]
  if want and p.id ~= want then
    errors.load("%s: the file says id = %d, but its name makes it problem %d of its suite (files are <id>_<Name>.lua)",
      path, p.id, want)
  end
  p.path = path
  p.load_opts = opts
  return p
end

-- Suites: problems/<...>/suites/<name>.lua returns { name =, description =, dir =, ids = {...},
-- pending = {...}, bare_ids = } (pending: ids listed upstream whose port arrives later;
-- bare_ids = false: a bare number does not name this suite's problems, `<suite>/<id>` does,
-- for a suite whose ids repeat KernelBench's, as dlrm-bench's 1 to 12).
function M.find_suite(name)
  for _, root in ipairs(M.roots()) do
    for sub in lfs.dir(root) do
      local p = ("%s/%s/suites/%s.lua"):format(root, sub, name)
      if sub:sub(1, 1) ~= "." and lfs.attributes(p, "mode") == "file" then return p, root end
    end
  end
  return nil
end

function M.suites()
  local r, seen = {}, {}
  for _, root in ipairs(M.roots()) do
    for sub in lfs.dir(root) do
      local d = ("%s/%s/suites"):format(root, sub)
      if sub:sub(1, 1) ~= "." and dir_exists(d) then
        for f in lfs.dir(d) do
          local n = f:match("^(.+)%.lua$")
          if n and not seen[n] then seen[n] = true; r[#r + 1] = n end
        end
      end
    end
  end
  table.sort(r)
  return r
end

-- A suite's problem files in id order, and the ids still to come.
function M.load_suite(name)
  local path, root = M.find_suite(name)
  if not path then errors.usage("no suite '%s' (suites: %s)", name, table.concat(M.suites(), ", ")) end
  local chunk, lerr = loadfile(path, "t", file_env("suite", false))
  if not chunk then errors.file(path, lerr) end
  local ok, s = run_file(path, chunk)
  if not ok then errors.file(path, errors.message(s)) end
  if type(s) ~= "table" or type(s.ids) ~= "table" or type(s.dir) ~= "string" then
    errors.load("%s: a suite returns { name =, description =, dir =, ids = {...} }", path)
  end
  if s.bare_ids ~= nil and type(s.bare_ids) ~= "boolean" then
    errors.load("%s: bare_ids is a boolean (false: its problems are named %s/<id>, as %s/1, or by name), not %s",
      path, name, name, type(s.bare_ids))
  end
  local dir = root .. "/" .. s.dir
  if not dir_exists(dir) then
    errors.load("%s: dir '%s' is not a directory (%s; dir is relative to %s)", path, s.dir, dir, root)
  end
  local files, twice = {}, {}
  for f in lfs.dir(dir) do
    local id = tonumber(f:match("^(%d+)_.*%.lua$") or "")
    if id then
      if files[id] then twice[id] = { files[id], dir .. "/" .. f } end
      files[id] = dir .. "/" .. f
    end
  end
  local list, listed = {}, {}
  for _, id in ipairs(s.ids) do
    if listed[id] then errors.load("%s: ids lists problem %s twice", path, tostring(id)) end
    listed[id] = true
    if not files[id] then errors.load("%s: problem %s has no file in %s", path, tostring(id), dir) end
    if twice[id] then
      local a, b = twice[id][1], twice[id][2]
      if a > b then a, b = b, a end
      errors.load("%s: problem %s has two files in %s: %s and %s", path, tostring(id), dir,
        a:match("[^/]+$"), b:match("[^/]+$"))
    end
    list[#list + 1] = files[id]
    suite_ids[files[id]] = id
  end
  return { name = s.name or name, description = s.description, path = path, files = list,
           ids = s.ids, pending = s.pending or {}, bare_ids = s.bare_ids ~= false }
end

-- A name that is not exact (issue 35), tried once the exact ones fail: in any case, the whole
-- name ("19_relu") or the part after its id ("relu"); then a unique prefix ("3_batched") or
-- suffix ("_reverse") of either. Several files at one stage is a usage error that names them;
-- none, a "did you mean" from the edit distance. A number is an id, never part of a name.
-- entries: { file =, plain = "19_ReLU", suite = } from the suites searched; `where` ends the
-- "no problem" message. Returns the file, or nil plus the message's " did you mean" tail.
local function loose_match(what, entries, where)
  if what:match("^%d+$") then return nil, "" end
  local q = what:lower()
  local function pick(test)
    local found, seen = {}, {}
    for _, e in ipairs(entries) do
      local plain = e.plain:lower()
      local part = plain:match("^%d+_(.+)$") or plain
      if not seen[e.file] and (test(plain) or test(part)) then
        seen[e.file] = true
        found[#found + 1] = e
      end
    end
    return found
  end
  local found = pick(function(n) return n == q end)
  if #found == 0 then
    found = pick(function(n) return n:sub(1, #q) == q or (#n > #q and n:sub(-#q) == q) end)
  end
  if #found == 1 then return found[1].file end
  if #found > 1 then
    local count, names = {}, {}
    for _, e in ipairs(found) do count[e.plain] = (count[e.plain] or 0) + 1 end
    for i, e in ipairs(found) do
      if i > 8 then names[#names + 1] = ("and %d more"):format(#found - 8); break end
      names[i] = count[e.plain] > 1 and (e.suite .. "/" .. e.plain) or e.plain
    end
    errors.usage("'%s' could be %d problems%s: %s (type more of the name)", what, #found, where,
      table.concat(names, ", "))
  end
  local lower, by_lower = {}, {}
  for _, e in ipairs(entries) do
    local plain = e.plain:lower()
    for _, n in ipairs{ plain, plain:match("^%d+_(.+)$") } do
      if not by_lower[n] then by_lower[n] = e.plain; lower[#lower + 1] = n end
    end
  end
  local near = text.suggest(q, lower)
  return nil, near and (": did you mean '%s'?"):format(by_lower[near]) or ""
end

local function entries_of(s, into)
  for _, f in ipairs(s.files) do
    local base = f:match("([^/]+)%.lua$")
    into[#into + 1] = { file = f, plain = (base:gsub("^0+(%d)", "%1")), suite = s.name }
  end
  return into
end

-- Resolves what a user typed: a path, a suite's problem by id ("19", "019"), by suite and id
-- ("dlrm-bench/3", "kernelbench-l1/19") or by name ("19_ReLU", and loosely "relu": see
-- loose_match). Searches the suite `suite` (default: every suite; a bare id only the suites
-- whose ids are bare, not dlrm-bench's).
function M.resolve(what, suite)
  local mode = lfs.attributes(what, "mode")
  if mode == "file" then return what end
  -- <suite>/<id or name>, where <suite> is a suite and no such file exists
  local sname, rest = what:match("^([%w_%-]+)/([^/]+)$")
  if sname and not mode and M.find_suite(sname) then
    local s = M.load_suite(sname)
    local id = tonumber(rest)
    for i, f in ipairs(s.files) do
      local base = f:match("([^/]+)%.lua$")
      if (id and s.ids[i] == id) or base == rest or base:gsub("^0+(%d)", "%1") == rest then return f end
    end
    for _, pid in ipairs(s.pending) do
      if id == pid then errors.usage("problem %s of %s is not ported yet (kreach list %s)", rest, sname, sname) end
    end
    local f, hint = loose_match(rest, entries_of(s, {}), " of " .. sname)
    if f then return f end
    errors.usage("no problem '%s' in the suite %s (kreach list %s)%s", rest, sname, sname, hint)
  end
  -- what looks like a path (ids and names have no '/' and no '.lua') is a file that cannot be
  -- loaded (status 3), not a name to search the suites for
  if what:find("/", 1, true) or what:match("%.lua$") then
    errors.file(what, mode and ("cannot read the problem: it is a %s, not a file"):format(mode)
      or "cannot read the problem: no such file")
  end
  local names = suite and { suite } or M.suites()
  local id = tonumber(what)
  -- a suite that does not load does not hide the problems of the others; it is said when
  -- nothing matched, since the problem may be one of its own (status 3 then)
  local broken, entries = nil, {}
  for _, sn in ipairs(names) do
    local ok, s = pcall(M.load_suite, sn)
    if not ok then
      if not errors.is(s) or suite then error(s, 0) end
      broken = broken or s
    else
      entries_of(s, entries)
      for i, f in ipairs(s.files) do
        local base = f:match("([^/]+)%.lua$")
        local plain = base:gsub("^0+(%d)", "%1")
        if (id and s.bare_ids and s.ids[i] == id) or base == what or plain == what then return f end
      end
    end
  end
  -- a loose match could be wrong while a suite that does not load might hold the exact name
  if broken then
    errors.load("no problem '%s' in the suites that load (and one does not: %s)", what, errors.message(broken))
  end
  local f, hint = loose_match(what, entries, suite and (" of " .. suite) or "")
  if f then return f end
  errors.usage("no problem '%s' (a path, an id or a name from a suite)%s", what, hint)
end

return M
