-- KernelBench level 1 as shipped (upstream commit 423217d): all 100 problems.
local ids = {}
for id = 1, 100 do ids[#ids + 1] = id end
return {
  name = "kernelbench-l1",
  description = "KernelBench level 1: single-operator problems",
  dir = "kernelbench/level1",
  ids = ids,
  pending = {},
}
