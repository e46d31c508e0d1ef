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

return M
