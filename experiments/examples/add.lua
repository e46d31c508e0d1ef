-- experiments/examples/add.lua: kreach experiments/examples/add.lua (the README's first script)
local kreach = require "kreach"

local prog = assert(kreach.build{ source = [[
extern "C" __global__ void add(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
]] })

local n = 1 << 20
local x = kreach.empty({ n }):uniform(0, 1, 42)
local y = kreach.zeros({ n })
prog.add{ grid = (n + 255) // 256, block = 256 }(y, x, n)
print(y:to_table(1, 4)[1] == x:to_table(1, 1)[1])
