-- KernelBench level 1 as shipped (upstream commit 423217d): the problems ported so far.
-- The convolutions (50, 54 to 87) arrive with a later issue and are listed as pending.
local ids, pending = {}, {}
for id = 1, 100 do
  if id == 50 or (id >= 54 and id <= 87) then pending[#pending + 1] = id else ids[#ids + 1] = id end
end
return {
  name = "kernelbench-l1",
  description = "KernelBench level 1: single-operator problems",
  dir = "kernelbench/level1",
  ids = ids,
  pending = pending,
}
