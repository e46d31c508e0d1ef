-- KernelBench level 1's 35 convolutions (50 and 54 to 87): standard, transposed, depthwise,
-- separable, pointwise and dilated, in 1-D, 2-D and 3-D. One suite, so that their baselines'
-- sweeps are one command: kreach bench kernelbench-l1-conv, kreach oracle kernelbench-l1-conv.
local ids = { 50 }
for id = 54, 87 do ids[#ids + 1] = id end
return {
  name = "kernelbench-l1-conv",
  description = "KernelBench level 1, its 35 convolutions (50, 54-87)",
  dir = "kernelbench/level1",
  ids = ids,
  pending = {},
}
