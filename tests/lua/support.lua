-- What the busted specs share (tests/lua/runner.lua puts this folder on package.path): new
-- temporary directories, and whole files read and written as bytes.
local lfs = require "lfs"
local output = require "kreach.atomic"

local M = {}

-- Every directory tmpdir() made, removed when the spec's Lua state closes (busted's exit and
-- kreach's end both close it, which runs this finalizer), so that a spec that fails half-way, or
-- keeps its directory for a later test, leaves nothing in /tmp. KREACH_KEEP_TMP=1 keeps them.
local made = {}
M._reaper = setmetatable({}, { __gc = function()
  if os.getenv("KREACH_KEEP_TMP") == "1" then return end
  for _, d in ipairs(made) do
    if lfs.attributes(d, "mode") == "directory" then M.rm_tree(d) end
  end
end })

-- A new empty directory (kreach.atomic.tmpdir: mktemp -d), removed at the latest when the spec
-- ends (above).
function M.tmpdir()
  local d = assert(output.tmpdir())
  made[#made + 1] = d
  return d
end

-- tmpfile([suffix]) -> the path of a file (not yet created) in a new temporary directory, for a
-- spec that needs one file
function M.tmpfile(suffix)
  return M.tmpdir() .. "/f" .. (suffix or "")
end

-- Removes a directory and everything in it (kreach.atomic.remove_tree: links are removed, not
-- followed).
M.rm_tree = output.remove_tree

-- tmpdirs() -> tmpdir (a new empty directory, remembered), cleanup (removes them all): for a
-- spec's teardown
function M.tmpdirs()
  local dirs = {}
  return function()
    local d = M.tmpdir()
    dirs[#dirs + 1] = d
    return d
  end, function()
    for _, d in ipairs(dirs) do M.rm_tree(d) end
    dirs = {}
  end
end

-- host_python() -> the python3 with (CPU) torch that the host device's specs compare with
-- ($KREACH_PYTHON, else Debian's /usr/bin/python3), or nil and why such a spec cannot run: the
-- host device is not active (ctest sets KREACH_DEVICE=host for host_ specs), or torch is missing.
-- The spec then fails with that reason, never skips.
function M.host_python()
  local ok, host = pcall(require, "kreach.host")
  if not ok or not host.active() then
    return nil, "KREACH_DEVICE=host is not set (or this kreach has no host device): ctest sets it for host_ specs"
  end
  local py = os.getenv("KREACH_PYTHON") or "/usr/bin/python3"
  if not os.execute(py .. " -c 'import torch' >/dev/null 2>&1") then
    return nil, py .. " cannot import torch: run tools/install-deps"
  end
  return py
end

-- host_python_or_fail(it) -> host_python()'s python3; or nil, after adding (with the spec's
-- busted `it`) a test that fails saying why: inside a describe block,
-- `local PYTHON = support.host_python_or_fail(it); if not PYTHON then return end`
function M.host_python_or_fail(it)
  local py, why = M.host_python()
  if not py then it("runs on the host device, with python3-torch", function() error(why) end) end
  return py
end

function M.slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

function M.spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- write(dir, name, text) -> dir/name, written with text
function M.write(dir, name, text)
  local path = dir .. "/" .. name
  M.spit(path, text)
  return path
end

-- sh(cmd) -> the output of a shell line (its standard error merged) and its exit status.
function M.sh(cmd)
  local f = io.popen(cmd .. ' 2>&1; echo "rc=$?"')
  local out = f:read("a")
  f:close()
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return (out:gsub("rc=%d+%s*$", "")), rc
end

-- ---- random specs and the CPU emulation of kernels (kreach.emulate) ----

-- A minimal valid problem file's text (ReLU on 8 elements), for specs that break it one field
-- at a time.
M.GOOD_PROBLEM = [[
local kreach = require "kreach"
return kreach.problem{
  id = 1, name = "t", suite = "test", category = "activation", description = "d",
  sizes = { n = 8 },
  args = { kreach.input("x", { "n" }), kreach.output("y", { "n" }) },
  reference = function(ops, x, y) ops.relu(x, y) end,
  flops = function(s) return s.n end,
  torch = { model = "class Model: pass" },
}
]]

-- seed(name) -> the spec's seed: $KREACH_SEED, else the time; printed with how to repeat it.
function M.seed(name)
  local seed = tonumber(os.getenv("KREACH_SEED")) or os.time() % 100000
  print(("%s: seed %d (KREACH_SEED=%d repeats it)"):format(name, seed, seed))
  return seed
end

-- rng(seed) -> rand(n), a whole number in 1..n from a 64-bit LCG started at seed.
function M.rng(seed)
  local st = seed
  return function(n)
    st = (st * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return (st >> 33) % n + 1
  end
end

-- A C++ initializer list of the numbers of t ("{0}" when t is empty, which C++ refuses).
function M.c_list(t) return "{" .. (#t > 0 and table.concat(t, ",") or "0") .. "}" end

-- C++ for an emulation's driver: emu_vec<T>(doubles, n), the values rounded to T.
M.EMU_VEC = [[
template <typename T> static std::vector<T> emu_vec(const double *v, size_t n) {
  std::vector<T> r(n); for (size_t i = 0; i < n; i++) r[i] = st<T>((typename Acc<T>::type)v[i]); return r; }
]]

-- emu_main(n) -> C++ main() calling case_1() .. case_n() in turn (each prints its line).
function M.emu_main(n)
  local main = { "int main() {" }
  for c = 1, n do main[#main + 1] = ("  case_%d(); fflush(stdout);"):format(c) end
  main[#main + 1] = "  return 0;\n}"
  return table.concat(main, "\n")
end

-- emu_lines(out, n) -> for each case 1..n, the numbers of its output line "<case> <numbers...>";
-- asserts that every case printed exactly one line and nothing else was printed.
function M.emu_lines(out, n)
  local by = {}
  for line in out:gmatch("[^\n]+") do
    local c, rest = line:match("^(%d+) (.*)$")
    assert(c, "unexpected output: " .. line)
    c = tonumber(c)
    assert(by[c] == nil, "case " .. c .. " printed twice")
    local vals = {}
    for v in rest:gmatch("%S+") do vals[#vals + 1] = tonumber(v) end
    by[c] = vals
  end
  for c = 1, n do assert(by[c], ("case %d printed nothing:\n%s"):format(c, out)) end
  return by
end

-- emu_series(out) -> for each case, the values of its output lines "<case> <value>", in order
-- (a case that prints one value per element); asserts that every line is such a line.
function M.emu_series(out)
  local by = {}
  for line in out:gmatch("[^\n]+") do
    local c, v = line:match("^(%d+) (%-?%d+)$")
    assert(c, "unexpected output: " .. line)
    c = tonumber(c)
    by[c] = by[c] or {}
    by[c][#by[c] + 1] = tonumber(v)
  end
  return by
end

-- json_result(cmd) -> the table of the JSON object a command (a shell line, its standard error
-- merged) prints last, and its whole output; asserts that there is one (`kreach check --json`).
function M.json_result(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  p:close()
  local line = out:match("(%b{})%s*$")
  local ok, res = pcall(require("cjson").decode, line or "")
  assert(ok and type(res) == "table" and res.verdict, "kreach check printed no result:\n" .. out)
  return res, out
end

-- ---- convolutions on host arrays, in double (the GPU specs' reference) ----

function M.rel_l2(got, ref)
  local num, den = 0.0, 0.0
  for i = 1, #ref do
    num = num + (got[i] - ref[i]) ^ 2
    den = den + ref[i] ^ 2
  end
  return math.sqrt(num / den)
end

-- Pads a per-dimension list to 3 spatial dimensions (1-D and 2-D as 3-D with unit dims).
local function to3(list, nsp, fill)
  local out = {}
  for i = 1, 3 - nsp do out[i] = fill end
  for i = 1, nsp do out[3 - nsp + i] = list[i] end
  return out
end

-- conv_reference(c, X, W, B) -> Y: the fp64 reference (the transposed convolution scatters, as
-- PyTorch defines it; the other gathers). c: { transposed, x = shape, w = shape, y = shape, stride, padding,
-- dilation, groups } (per-dimension lists of length nsp); X, W, B flat host arrays.
function M.conv_reference(c, X, W, B)
  local nsp = #c.x - 2
  local N, Cin = c.x[1], c.x[2]
  local Cout = c.y[2]
  local g = c.groups
  local xi, wk, yo = to3({ table.unpack(c.x, 3) }, nsp, 1), to3({ table.unpack(c.w, 3) }, nsp, 1),
    to3({ table.unpack(c.y, 3) }, nsp, 1)
  local s, p, d = to3(c.stride, nsp, 1), to3(c.padding, nsp, 0), to3(c.dilation, nsp, 1)
  local cin_g, cout_g = Cin // g, Cout // g
  local ysz = yo[1] * yo[2] * yo[3]
  local xsz = xi[1] * xi[2] * xi[3]
  local ksz = wk[1] * wk[2] * wk[3]
  local A, TAP = yo, xi -- the positions looped over, and the extents the taps must fall in
  if c.transposed then A, TAP = xi, yo end
  local Y = {}
  for n = 0, N - 1 do
    for co = 0, Cout - 1 do
      local b = B and B[co + 1] or 0.0
      for o = 1, ysz do Y[(n * Cout + co) * ysz + o] = b end
    end
  end
  for n = 0, N - 1 do
    for gi = 0, g - 1 do
      for cil = 0, cin_g - 1 do
        local ci = gi * cin_g + cil
        for col = 0, cout_g - 1 do
          local co = gi * cout_g + col
          -- forward: w[co, cil, k]; transposed: w[ci, col, k]
          local wbase = c.transposed and (ci * cout_g + col) * ksz or (co * cin_g + cil) * ksz
          local xbase = (n * Cin + ci) * xsz
          local ybase = (n * Cout + co) * ysz
          for kd = 0, wk[1] - 1 do for kh = 0, wk[2] - 1 do for kw = 0, wk[3] - 1 do
            local wv = W[wbase + (kd * wk[2] + kh) * wk[3] + kw + 1]
            -- a convolution gathers (for each output position, the input its tap reads), a
            -- transposed one scatters (for each input position, the output its tap writes): the
            -- same loops over one side's positions, a the loop's, t the tap's
            for a1 = 0, A[1] - 1 do
              local t1 = a1 * s[1] - p[1] + kd * d[1]
              if t1 >= 0 and t1 < TAP[1] then
                for a2 = 0, A[2] - 1 do
                  local t2 = a2 * s[2] - p[2] + kh * d[2]
                  if t2 >= 0 and t2 < TAP[2] then
                    for a3 = 0, A[3] - 1 do
                      local t3 = a3 * s[3] - p[3] + kw * d[3]
                      if t3 >= 0 and t3 < TAP[3] then
                        local o1, o2, o3, i1, i2, i3 = a1, a2, a3, t1, t2, t3
                        if c.transposed then o1, o2, o3, i1, i2, i3 = t1, t2, t3, a1, a2, a3 end
                        local yq = ybase + (o1 * yo[2] + o2) * yo[3] + o3 + 1
                        Y[yq] = Y[yq] + X[xbase + (i1 * xi[2] + i2) * xi[3] + i3 + 1] * wv
                      end
                    end
                  end
                end
              end
            end
          end end end
        end
      end
    end
  end
  return Y
end

-- y's shape as PyTorch computes it
function M.conv_out_shape(c)
  local nsp = #c.x - 2
  local y = { c.x[1], c.transposed and c.w[2] * c.groups or c.w[1] }
  for i = 1, nsp do
    local k, s, p, d = c.w[2 + i], c.stride[i], c.padding[i], c.dilation[i]
    if c.transposed then
      y[2 + i] = (c.x[2 + i] - 1) * s - 2 * p + d * (k - 1) + (c.output_padding and c.output_padding[i] or 0) + 1
    else
      y[2 + i] = (c.x[2 + i] + 2 * p - d * (k - 1) - 1) // s + 1
    end
  end
  return y
end


-- ---- the scripted HTTP server of the HTTP tests (tests/http_server.py, 127.0.0.1 only) ----

-- http_server(script) -> the base URL ("http://127.0.0.1:PORT"), log() (the requests it received
-- so far, decoded) and stop(). script: { ["/path"] = { step, ... } } as the server reads it.
-- KREACH_TEST_PYTHON names the python3 (default python3).
function M.http_server(script)
  local proc = require "kreach.core.proc"
  local cjson = require "cjson"
  local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
  local dir = M.tmpdir()
  M.spit(dir .. "/script.json", cjson.encode(script))
  local w = assert(proc.spawn({ os.getenv("KREACH_TEST_PYTHON") or "python3", here .. "/../http_server.py",
                                dir .. "/script.json", dir .. "/log.jsonl" }))
  local line = w:read_line(20)
  local port = line and line:match("^port (%d+)$")
  assert(port, "the test server did not start: " .. tostring(line) .. " " .. tostring(w:stderr()))
  local function log()
    local out = {}
    local f = io.open(dir .. "/log.jsonl")
    if not f then return out end
    for l in f:lines() do out[#out + 1] = cjson.decode(l) end
    f:close()
    return out
  end
  local function stop() w:kill(); w:wait(); w:free() end
  return "http://127.0.0.1:" .. port, log, stop
end


-- stand_in_gpu(dev, evaluate) -> restore(): kreach eval's campaign without a GPU, for the specs of
-- what the parent does (the store, resume, shards, the key, the progress): kreach.device.require
-- gives `dev` (a table; a uuid for { uuid, name = "a stand-in" }; or a function returning the
-- device, for a spec that changes it between runs), no calibration is taken, and
-- kreach.run.evaluate.evaluate is `evaluate` (item, o, ctx) -> record; restore() puts all three back
function M.stand_in_gpu(dev, evaluate)
  local device = require "kreach.device"
  local campaign = require "kreach.run.campaign"
  local ev = require "kreach.run.evaluate"
  local get = dev
  if type(dev) == "table" then get = function() return dev end
  elseif type(dev) ~= "function" then get = function() return { uuid = dev, name = "a stand-in" } end end
  local saved = { device.require, campaign.calibration, ev.evaluate }
  device.require = get
  campaign.calibration = function() return nil end
  ev.evaluate = evaluate
  return function() device.require, campaign.calibration, ev.evaluate = saved[1], saved[2], saved[3] end
end

return M
