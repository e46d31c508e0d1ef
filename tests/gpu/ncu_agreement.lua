-- kreach's cold-mode times against Nsight Compute's: three different kernels (a memory-bound
-- copy, an arithmetic-bound FMA chain, a shared-memory transpose), each timed by kreach.judge.timing
-- in cold mode and profiled by `ncu --clock-control none --cache-control all` (its
-- gpu__time_duration), in separate processes. The medians must agree within 3%.
-- usage: kreach tests/gpu/ncu_agreement.lua            (the test; exit 77 without a GPU or ncu)
--        kreach tests/gpu/ncu_agreement.lua --launch N  (what ncu profiles: N cold launches each)
local kreach = require "kreach"
kreach.skip_without_device()
local timing = require "kreach.judge.timing"
local stats = require "kreach.stats"

local SOURCE = [[
extern "C" __global__ void kr_copy(const float4 *__restrict__ x, float4 *__restrict__ y, long long n4) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) y[i] = x[i];
}
extern "C" __global__ void kr_fma(float *y, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 1e-4f, d = blockIdx.x * 1e-5f;
  for (int i = 0; i < iters; i++) { a = a * b + c; d = d * b + c; c = c * 0.9999f + a * 1e-7f; }
  if (a + d == 0.123f) y[blockIdx.x] = a + c + d;
}
extern "C" __global__ void kr_transpose(const float *__restrict__ x, float *__restrict__ y, int n) {
  __shared__ float tile[32][33];
  int bx = blockIdx.x * 32, by = blockIdx.y * 32;
  for (int j = threadIdx.y; j < 32; j += 8) tile[j][threadIdx.x] = x[(long long)(by + j) * n + bx + threadIdx.x];
  __syncthreads();
  for (int j = threadIdx.y; j < 32; j += 8) y[(long long)(bx + j) * n + by + threadIdx.x] = tile[threadIdx.x][j];
}
]]

local prog = assert(kreach.build{ source = SOURCE })
local sms = kreach.device().sm_count
local n = 64 * 2 ^ 20                  -- 256 MiB of floats
local x = kreach.empty({ n }, "f32"):uniform(0, 1, 1)
local y = kreach.empty({ n }, "f32")
local tn = 8192                         -- 8192^2 floats: 256 MiB
local cases = {
  { name = "kr_copy", call = function() prog.kr_copy{ grid = sms * 8, block = 256 }(x, y, n // 4) end },
  { name = "kr_fma", call = function() prog.kr_fma{ grid = sms * 8, block = 256 }(y, 20000) end },
  { name = "kr_transpose", call = function() prog.kr_transpose{ grid = { tn // 32, tn // 32 }, block = { 32, 8 } }(x, y, tn) end },
}

if arg[1] == "--launch" then
  local reps = tonumber(arg[2]) or 20
  for _, c in ipairs(cases) do
    for _ = 1, reps do
      require("kreach.core.timing").flush(2)
      c.call()
    end
    kreach.synchronize()
  end
  os.exit(0)
end

local function find_ncu()
  for _, p in ipairs({ os.getenv("KREACH_NCU") or "", "ncu", "/usr/local/cuda/bin/ncu" }) do
    if p ~= "" and os.execute(("command -v %q >/dev/null 2>&1"):format(p)) then return p end
  end
  local h = io.popen("ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1")
  local p = h:read("l")
  h:close()
  return p
end

local ncu = find_ncu()
if not ncu then
  io.stderr:write("skipped: no ncu (Nsight Compute) on this machine\n")
  os.exit(77)
end

-- kreach's cold medians
local mine = {}
for _, c in ipairs(cases) do
  local r = timing.measure({ { name = c.name, call = c.call } }, { mode = "cold", budget_s = 1 })
  mine[c.name] = r.subjects[c.name].summary.median
end

-- ncu's, in a process of its own
local reps = 20
local cmd = ("%q --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv -k regex:^kr_ %q %q --launch %d 2>&1"):format(
  ncu, kreach.executable(), arg[0], reps)
local p = io.popen(cmd)
local out = p:read("a")
p:close()
local theirs = {}
for line in out:gmatch("[^\n]+") do
  -- "ID","Process ID","Process Name","Host Name","Kernel Name",...,"Metric Name","Metric Unit",
  -- "Metric Value" (ncu 2025 writes the unit as "ns" and the value with thousands separators)
  local fields = {}
  for f in line:gmatch('"([^"]*)"') do fields[#fields + 1] = f end
  local name = fields[5] and fields[5]:match("^(kr_%w+)")
  if name and line:find("gpu__time_duration", 1, true) then
    local unit, value = fields[#fields - 1], tonumber((fields[#fields]:gsub(",", "")))
    local scale = ({ ns = 1e-6, nsecond = 1e-6, us = 1e-3, usecond = 1e-3, ms = 1, msecond = 1, s = 1e3, second = 1e3 })[unit]
    if value and scale then
      theirs[name] = theirs[name] or {}
      table.insert(theirs[name], value * scale)
    end
  end
end

local ok = true
print(("%-14s %12s %12s %8s"):format("kernel", "kreach ms", "ncu ms", "diff"))
for _, c in ipairs(cases) do
  local t = theirs[c.name]
  if not t or #t < reps then
    print(("%-14s ncu gave %d values (wanted %d)"):format(c.name, t and #t or 0, reps))
    ok = false
  else
    local m = stats.median(t)
    local d = (mine[c.name] - m) / m
    print(("%-14s %12.4f %12.4f %7.2f%%"):format(c.name, mine[c.name], m, 100 * d))
    io.write(("result ncu_diff_%s %.3g %% kreach cold median against ncu gpu__time_duration (target within 3)\n"):format(c.name:sub(4), 100 * d))
    if math.abs(d) > 0.03 then ok = false end
  end
end
if not ok then
  io.stderr:write("ncu output (end):\n", out:sub(-3000), "\n")
  os.exit(1)
end
