-- kreach.problem.catalog: the suites and problems `kreach list` shows, loaded in a loader process
-- (`kreach list-loader`, a hidden command) rather than in the command's own. Problem and suite
-- files are trusted code (docs/scripting.md), but a mistake in one (a loop that never ends, a
-- pattern that backtracks for ever inside a C call, an error) must not stop the listing: the
-- loader announces each file before loading it and reports it on one line; the parent gives
-- each file a time limit, kills a loader that runs past it, reports that file, and starts a new
-- loader on the files after it.
local core = require "kreach.core"
local proc = require "kreach.core.proc"
local codec = require "kreach.json"
local errors = require "kreach.errors"
local problem = require "kreach.problem"
local text = require "kreach.text"

local M = {}

M.DEFAULT_TIMEOUT_S = 10
M.STARTUP_S = 30 -- a loader's own start (the binary, its libraries) is not the file's fault

-- the loader's lines: kreach.json, non-finite numbers as bare tokens (as the results store's)
local json = {
  encode = function(v) return codec.encode(v, { nonfinite = "token" }) end,
  decode = codec.decode,
}

-- ---- the loader's side ----

local function problem_row(path)
  local p = problem.load(path)
  local inst = p:instantiate()
  local shapes = {}
  for _, a in ipairs(inst.args) do
    if a.kind == "input" then shapes[#shapes + 1] = table.concat(a.shape, "x") end
  end
  return { id = p.id, name = p.name, category = p.category, subcategory = p.subcategory, inputs = table.concat(shapes, "; "),
           bytes = inst.bytes, flops = inst.flops }
end

local function suite_row(name)
  local s = problem.load_suite(name)
  return { name = s.name, description = s.description, path = s.path, files = s.files, ids = s.ids,
           pending = s.pending }
end

-- serve(kind, items): the loader. kind "suite" (items are suite names) or "problem" (paths).
-- For each item: "begin <i>", then "ok <json>" or "fail <json message>"; flushed at once.
function M.serve(kind, items)
  local fn = kind == "suite" and suite_row or problem_row
  for i, item in ipairs(items) do
    io.stdout:write("begin ", i, "\n")
    io.stdout:flush()
    local ok, v = pcall(fn, item)
    if ok then
      io.stdout:write("ok ", json.encode(v), "\n")
    else
      io.stdout:write("fail ", json.encode(errors.message(v)), "\n") -- no position of kreach's own
    end
    io.stdout:flush()
  end
end

-- ---- the parent's side ----

local function tail(s, n)
  s = (s or ""):gsub("%s+$", "")
  if #s > n then s = "..." .. s:sub(-n) end
  return s
end

-- load(kind, items, {timeout_s =}) -> results, one per item in order: { item =, value = } or
-- { item =, why = }. Never raises for what a file does.
function M.load(kind, items, opts)
  opts = opts or {}
  local limit = opts.timeout_s or M.DEFAULT_TIMEOUT_S
  local results = {}
  local first = 1
  while first <= #items do
    local argv = { core.executable(), "list-loader", kind }
    for i = first, #items do argv[#argv + 1] = items[i] end
    local w, err = proc.spawn(argv)
    if not w then
      for i = first, #items do results[i] = { item = items[i], why = "cannot start a loader: " .. tostring(err) } end
      break
    end
    local current -- the index (into items) of the file being loaded
    local timed_out = false
    while true do
      local line, why = w:read_line(current and limit or math.max(limit, M.STARTUP_S))
      if not line then
        timed_out = why == "timeout"
        break
      end
      local b = line:match("^begin (%d+)$")
      if b then
        current = first + tonumber(b) - 1
      elseif current and not results[current] then
        local ok_json = line:match("^ok (.*)$")
        local fail_json = line:match("^fail (.*)$")
        if ok_json then
          local ok, v = pcall(json.decode, ok_json)
          results[current] = ok and { item = items[current], value = v }
            or { item = items[current], why = "the loader's answer did not decode" }
        elseif fail_json then
          local ok, v = pcall(json.decode, fail_json)
          results[current] = { item = items[current], why = text.clean(ok and tostring(v) or fail_json, 4096) }
        end
      end
    end
    if timed_out then w:kill() end
    local how, code, name = w:wait()
    local stderr = w:stderr()
    w:free()
    -- where the next loader starts: after the file that hung or killed this one
    local stuck = current and not results[current] and current or (not current and first or nil)
    if stuck then
      local why
      if timed_out then
        why = ("ran past its time limit of %g s (an endless loop? see --timeout)"):format(current and limit or math.max(limit, M.STARTUP_S))
      elseif how == "signaled" then
        why = ("the loader died of %s while loading it%s"):format(name, stderr ~= "" and (": " .. tail(stderr, 1000)) or "")
      else
        why = ("the loader exited with status %d while loading it%s"):format(code, stderr ~= "" and (": " .. tail(stderr, 1000)) or "")
      end
      results[stuck] = { item = items[stuck], why = text.clean(why, 4096) }
      first = stuck + 1
    else
      -- the loader answered every file it began; any it did not begin are left to the next
      local nxt = #items + 1
      for i = first, #items do if not results[i] then nxt = i; break end end
      if nxt <= #items and nxt == first then
        results[nxt] = { item = items[nxt], why = "the loader ended without loading it" }
        nxt = nxt + 1
      end
      first = nxt
    end
  end
  return results
end

return M
