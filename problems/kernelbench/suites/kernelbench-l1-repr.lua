-- KernelBench level 1's representative subset of 18 problems, as upstream lists it.
return {
  name = "kernelbench-l1-repr",
  description = "KernelBench level 1, upstream's 18-problem representative subset",
  dir = "kernelbench/level1",
  ids = { 1, 3, 6, 18, 23, 26, 33, 36, 40, 42, 48, 54, 57, 65, 77, 82, 86, 87 },
  pending = {},
}
