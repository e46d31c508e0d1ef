-- kreach.device: the GPU a command needs, for the internal modules (the facade's
-- kreach.require_device, kreach.skip_without_device and kreach.time_ms are these).
local core = require "kreach.core"
local event = require "kreach.core.event"
local errors = require "kreach.errors"
local text = require "kreach.text"

local M = {}

-- What the host device (KREACH_DEVICE=host) does not do, said where a command needs a GPU.
M.HOST_REFUSAL = "this is the host device (KREACH_DEVICE=host), kreach's CUDA emulation on the CPU: it computes "
  .. "kreach's own operators (kreach oracle, the values check) but runs no candidate and times nothing; "
  .. "unset KREACH_DEVICE (or give --device N) on a machine with a GPU"

-- The commands that run on the host device at small sizes (`kreach --device host <cmd> ...
-- --small`), tried one by one without a GPU: the no-GPU message of these, and only these,
-- says so. The others run candidates or time them (check, eval, bench, scan-trivial,
-- calibrate, profile, generate --eval), which the host device refuses (HOST_REFUSAL).
M.HOST_SMALL = { oracle = true }

-- The command line to suggest for the host device, or nil: the binary sets arg[0] to the
-- command's name and arg[1..] to its arguments (bindings/main.c); a script's arg[0] is a path.
local function host_retry()
  local a = rawget(_G, "arg")
  local name = type(a) == "table" and a[0]
  if type(name) ~= "string" or not M.HOST_SMALL[name] then return nil end
  local words, sized = { "kreach", "--device", "host", name }, false
  for i = 1, #a do
    local w = tostring(a[i])
    if w == "--small" or w == "--size" or w:match("^%-%-size=") then sized = true end
    words[#words + 1] = w:match("^[%w_%-%./=,:+]+$") and w or text.shell_quote(w)
  end
  if not sized then words[#words + 1] = "--small" end
  return table.concat(words, " ")
end

-- require([what]) -> the device's properties; raises the user error "no CUDA device: <why>"
-- (exit status 77: skipped) unless a GPU is usable, adding the host device's command line
-- where the command runs there (HOST_SMALL). With `what` (the command, as the user
-- typed it: "kreach check"), the host device is refused too, with HOST_REFUSAL: `what` runs
-- candidates or times, which only a GPU does. Without it the host device is a device (its
-- operators run; kreach.judge.oracle, scripts).
function M.require(what)
  local ok, why = core.has_device()
  if not ok then
    local retry = not what and host_retry()
    if retry then
      why = ("%s; without a GPU, the host device (kreach's CUDA emulation on the CPU) runs this at small sizes: %s"):format(why, retry)
    end
    errors.no_device(why)
  end
  local dev = core.device()
  if what and dev.host then errors.no_device("%s needs a GPU; %s", what, M.HOST_REFUSAL) end
  return dev
end

-- cuda() -> the device's properties where it is a GPU, else nil (no device, or the host
-- device): for what describes the GPU (kreach generate's prompt), never raises.
function M.cuda()
  if not core.has_device() then return nil end
  local dev = core.device()
  if dev.host then return nil end
  return dev
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
