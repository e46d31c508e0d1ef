-- Runs busted specs through the kreach binary: kreach tests/lua/runner.lua [--gpu] SPEC...
-- busted and its helpers come from lua-deps/ beside the binary (copied there by the build, so
-- a carried build directory has them), or from $KREACH_TEST_LUA_DEPS. With --gpu, exits 77
-- (skipped) when there is no usable GPU.
local args = { ... }
-- this folder, for the specs' shared helpers (support.lua)
package.path = ((arg[0] or ""):match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local gpu = args[1] == "--gpu"
if gpu then table.remove(args, 1) end

local bin = arg[-1] or "kreach"
local bindir = bin:match("^(.*)/[^/]*$") or "."
local deps = os.getenv("KREACH_TEST_LUA_DEPS") or (bindir .. "/lua-deps")
package.path = deps .. "/share/?.lua;" .. deps .. "/share/?/init.lua;" .. package.path
package.cpath = deps .. "/lib/?.so;" .. package.cpath

if gpu then
  local ok, why = require("kreach").has_device()
  if not ok then
    io.stderr:write("skipped: no CUDA device: ", why, "\n")
    os.exit(77)
  end
end

-- busted reads its command line from the global `arg`
local argv = { "--output=plainTerminal", "--verbose" }
for _, a in ipairs(args) do argv[#argv + 1] = a end
arg = argv
require("busted.runner")({ standalone = false })
