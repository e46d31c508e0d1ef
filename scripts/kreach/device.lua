-- kreach.device: the GPU a command needs, for the internal modules (the facade's
-- kreach.require_device, kreach.skip_without_device and kreach.time_ms are these).
local core = require "kreach.core"
local event = require "kreach.core.event"
local errors = require "kreach.errors"

local M = {}

-- require() -> the device's properties; raises the user error "no CUDA device: <why>" (exit
-- status 77: skipped) unless a GPU is usable.
function M.require()
  local ok, why = core.has_device()
  if not ok then errors.no_device(why) end
  return core.device()
end

-- For test and benchmark scripts: exit 77 (skipped) without a GPU.
function M.skip_without()
  local ok, why = core.has_device()
  if not ok then
    io.stderr:write("skipped: no CUDA device: ", why, "\n")
    os.exit(77)
  end
end

-- time_ms(fn, ...) -> milliseconds: `fn(...)` between two events on the harness stream (one
-- call; statistics belong to the timing layer).
function M.time_ms(fn, ...)
  local a, b = event.new(), event.new()
  a:record()
  fn(...)
  b:record()
  local ms = a:elapsed_ms(b)
  a:free()
  b:free()
  return ms
end

return M
