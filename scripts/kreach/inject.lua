-- kreach.inject: where kreach's CUPTI injection library (libkreach_inject.so) is, and the
-- environment a program started under it inherits. Shared by kreach.profile.run (a profiled
-- program, the library's trace mode) and kreach.pytorch (the Python worker, its guard mode:
-- runtime/inject/kr_guard.c). Needs no GPU.
local core = require "kreach.core"
local lfs = require "lfs"

local M = {}

-- Variables kreach sets in its own environment after it started (main.c: --device), which
-- /proc/self/environ, holding the environment the process started with, does not show.
local SET_AFTER_START = { "KREACH_DEVICE" }

local function is_file(path) return lfs.attributes(path, "mode") == "file" end

-- lib(override, executable) -> the injection library's path, or nil and why. override:
-- $KREACH_INJECT_LIB when nil ("" ignores it); else libkreach_inject.so beside the kreach binary
-- (executable, default this one: a build tree), else in lib/kreach beside its bin/ (installed).
function M.lib(override, executable)
  local lib = override
  if lib == nil then lib = os.getenv("KREACH_INJECT_LIB") end
  if lib == nil or lib == "" then
    local dir = (executable or core.executable()):match("^(.*)/[^/]*$") or "."
    local beside = dir .. "/libkreach_inject.so"
    local installed = dir .. "/../lib/kreach/libkreach_inject.so"
    lib = (not is_file(beside) and is_file(installed)) and installed or beside
  end
  if not is_file(lib) then
    return nil, ("the injection library is missing: %s (it is built next to the kreach binary; KREACH_INJECT_LIB names another)"):format(lib)
  end
  return lib
end

-- inherited() -> { NAME = value }: this process's environment, as it is now. Lua can only look a
-- name up, so the names come from /proc/self/environ (the environment the process started with)
-- and the variables kreach sets itself later, and each value from os.getenv.
function M.inherited()
  local env = {}
  local f = io.open("/proc/self/environ", "rb")
  local text = f and f:read("a") or ""
  if f then f:close() end
  for entry in text:gmatch("([^\0]*)\0") do
    local name = entry:match("^([^=]+)=")
    if name and env[name] == nil then env[name] = os.getenv(name) end
  end
  for _, name in ipairs(SET_AFTER_START) do env[name] = os.getenv(name) end
  return env
end

return M
