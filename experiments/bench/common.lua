-- Helpers shared by the benchmark scripts: order statistics and the result lines that
-- tools/h200 gathers into its closing table ("result <name> <value> <unit> <what>").
local M = {}

function M.median(xs)
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local n = #s
  if n == 0 then return 0 / 0 end
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

function M.min(xs)
  local m = math.huge
  for _, x in ipairs(xs) do if x < m then m = x end end
  return m
end

function M.result(name, value, unit, what)
  io.write(("result %s %.6g %s %s\n"):format(name, value, unit, what))
  io.flush()
end

-- the campaign benchmarks' helpers (build_jobs, campaign_throughput, builds_beside)

-- the five level-1 example candidates of examples/, which those benchmarks copy
M.LUA_EXAMPLES = { "001_matmul_tiled.lua", "023_softmax_online.lua", "026_gelu_float4.lua",
                   "036_rmsnorm_columns.lua", "048_mean_columns.lua" }

-- sh(cmd) -> its standard output, and whether it succeeded
function M.sh(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

-- tmpdir() -> a new temporary folder's path
function M.tmpdir() return (M.sh("mktemp -d"):gsub("%s+$", "")) end

function M.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

function M.write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

return M
