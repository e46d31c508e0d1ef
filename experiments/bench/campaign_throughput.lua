-- Benchmark (GPU): a campaign's throughput, candidates per hour, with the builds ahead of the
-- GPU worker (kreach eval --jobs, docs/evaluation.md). Two campaigns, each from a cold compile
-- cache (a fresh KREACH_CACHE_DIR) and a fresh database (its device calibrated once, before):
--   lua  N_LUA Lua candidates made from examples/ (the five level-1 examples, each copy with a
--        distinguishing comment in its CUDA source, so none shares an NVRTC cache entry)
--   py   N_PY KernelBench-format candidates made from
--        tests/candidates/kernelbench/019_relu_load_inline.py (each with a distinguishing
--        comment in its CUDA source: each load_inline build is cold); skipped without a
--        python3 with CUDA PyTorch (KREACH_PYTHON)
-- each run with every --jobs value given (default 0 1 16; 0 is the old way: each candidate
-- built by its GPU worker). Prints the wall time, candidates per hour, the verdicts, and the
-- spread of the candidates' times between the runs (the same candidates, timed under each
-- --jobs: builds beside the timed calls must not move them).
--   kreach experiments/bench/campaign_throughput.lua [n_lua] [n_py] [jobs ...]
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local kreach = require "kreach"
local common = require "common"
local json = require "kreach.json"
local pair = require "kreach.run.pair"
kreach.skip_without_device()

-- each line as it is written: a run cut off by a time limit keeps what it printed
io.stdout:setvbuf("line")
local root = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../.."
local n_lua = math.tointeger(tonumber(arg[1] or "40")) or 40
local n_py = math.tointeger(tonumber(arg[2] or "20")) or 20
local jobs = {}
for i = 3, #arg do jobs[#jobs + 1] = assert(math.tointeger(tonumber(arg[i])), "jobs must be whole numbers") end
if #jobs == 0 then jobs = { 0, 1, 16 } end

local sh, tmpdir, read, write = common.sh, common.tmpdir, common.read, common.write

-- the candidates
local LUA_EXAMPLES = common.LUA_EXAMPLES
local function make_lua(dir, n)
  for v = 1, n do
    local name = LUA_EXAMPLES[(v - 1) % #LUA_EXAMPLES + 1]
    local text, k = read(root .. "/examples/" .. name):gsub("source = %[%[", ("source = [[\n// throughput variant %d\n"):format(v), 1)
    assert(k == 1)
    write(("%s/%s_v%03d.lua"):format(dir, name:match("^(%d+)_"), v), text)
  end
end
local function make_py(dir, n)
  local src = read(root .. "/tests/candidates/kernelbench/019_relu_load_inline.py")
  for v = 1, n do
    -- a distinct CUDA source and extension name: a cold build each
    local text, k = src:gsub('#include <torch/extension.h>', ("// throughput variant %d\n#include <torch/extension.h>"):format(v), 1)
    assert(k == 1)
    text = text:gsub('name="kreach_test_relu"', ('name="kreach_relu_v%d"'):format(v), 1)
    write(("%s/019_v%03d.py"):format(dir, v), text)
  end
end

-- a database with this device's calibration, copied for each run
local template = os.tmpname()
assert(select(2, sh(("%q calibrate --db %q >/dev/null 2>&1"):format(kreach.executable(), template))), "kreach calibrate failed")

local function campaign(kind, dir, n, j)
  local cache, db = tmpdir(), os.tmpname()
  sh(("cp %q %q"):format(template, db))
  local cmd = ("KREACH_CACHE_DIR=%q %q eval kernelbench-l1 %q --db %q --jobs %d --json 2>/dev/null"):format(
    cache, kreach.executable(), dir, db, j)
  local t0 = kreach.now()
  local out = sh(cmd)
  local wall = kreach.now() - t0
  sh(("rm -rf %q %q %q-wal %q-shm"):format(cache, db, db, db))
  local ok, res = pcall(json.decode, out)
  if not ok or type(res) ~= "table" or not res.evaluations then
    io.write(("%s --jobs %d: kreach eval gave no JSON: %s\n"):format(kind, j, out:sub(1, 400)))
    return nil
  end
  local verdicts, times = {}, {}
  for _, e in ipairs(res.evaluations) do
    verdicts[e.verdict] = (verdicts[e.verdict] or 0) + 1
    if e.candidate_ms then times[e.candidate_path:match("([^/]+)$")] = e.candidate_ms end
  end
  local vs = {}
  for v, c in pairs(verdicts) do vs[#vs + 1] = ("%s %d"):format(v, c) end
  table.sort(vs)
  io.write(("%-3s --jobs %-3d %3d candidates in %7.1f s: %7.0f per hour  (%s)\n"):format(kind, j, n, wall, 3600 * n / wall,
    table.concat(vs, ", ")))
  common.result(("campaign_%s_jobs%d_per_hour"):format(kind, j), 3600 * n / wall, "candidates/h",
    ("kreach eval of %d %s candidates, cold caches, --jobs %d"):format(n, kind, j))
  return times
end

-- the spread of each candidate's time over the runs, (max - min) / median
local function spreads(kind, runs)
  local names, worst, all = {}, 0, {}
  for name in pairs(runs[1] or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local xs = {}
    for _, r in ipairs(runs) do if r[name] then xs[#xs + 1] = r[name] end end
    if #xs == #runs and #xs >= 2 then
      local lo, hi = common.min(xs), -math.huge
      for _, x in ipairs(xs) do hi = math.max(hi, x) end
      local s = (hi - lo) / common.median(xs)
      all[#all + 1] = s
      worst = math.max(worst, s)
    end
  end
  if #all > 0 then
    io.write(("%s: the same candidates' times over the --jobs runs: median spread %.2f%%, worst %.2f%% (%d candidates)\n"):format(
      kind, 100 * common.median(all), 100 * worst, #all))
    common.result(("campaign_%s_time_spread_pct"):format(kind), 100 * common.median(all), "%",
      "median over candidates of (max-min)/median of its time across the --jobs runs")
  end
end

local lua_dir = tmpdir()
make_lua(lua_dir, n_lua)
local runs = {}
for _, j in ipairs(jobs) do runs[#runs + 1] = campaign("lua", lua_dir, n_lua, j) end
spreads("lua", runs)

local py, why = pair.find_python()
if not py then
  io.write("py: skipped: ", tostring(why), "\n")
else
  local py_dir = tmpdir()
  make_py(py_dir, n_py)
  runs = {}
  for _, j in ipairs(jobs) do runs[#runs + 1] = campaign("py", py_dir, n_py, j) end
  spreads("py", runs)
  sh(("rm -rf %q"):format(py_dir))
end
sh(("rm -rf %q %q"):format(lua_dir, template))
