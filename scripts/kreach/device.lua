-- kreach.device: the GPU a command needs, for the internal modules (the facade's
-- kreach.require_device and kreach.skip_without_device are these).
local core = require "kreach.core"
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

return M
