-- What the Lua experiments share about the runs of list.json (addressable_fraction.lua,
-- profiler_check.lua): the list, a run's command line (an argv list: nothing goes through a
-- shell), running it plain, and running it under the injection library with its steps stored
-- and reported (kreach.profile.run, what `kreach profile --steps step` does).
local kreach = require "kreach"
local profile_run = require "kreach.profile.run"

local M = {}

-- list.json of the folder `dir` (experiments/workloads).
function M.load(dir)
  local f = assert(io.open(dir .. "/list.json"))
  local list = require("cjson").decode(f:read("a"))
  f:close()
  return list
end

-- The program's argv: python, the script as a path from the repository root `root`, its options
-- from the list, then the words of `extra` (a list; nil for none).
function M.program(run, root, python, extra)
  local argv = { python, root .. "/" .. run.argv[1] }
  for j = 2, #run.argv do argv[#argv + 1] = run.argv[j] end
  for _, w in ipairs(extra or {}) do argv[#argv + 1] = w end
  return argv
end

-- `argv` run under `taskset -c pin` (the same CPUs for every run), or as it is without a pin.
function M.pinned(argv, pin)
  if not pin then return argv end
  local out = { "taskset", "-c", pin }
  for _, a in ipairs(argv) do out[#out + 1] = a end
  return out
end

-- execute(argv, {timeout_s =}) -> its output (standard output, then standard error) and whether
-- it exited 0. The program is killed, with everything it started, at its time limit.
function M.execute(argv, opts)
  opts = opts or {}
  local w, err = kreach.proc.spawn(argv)
  if not w then return err .. "\n", false end
  local out, stopped = {}, false
  local deadline = opts.timeout_s and kreach.now() + opts.timeout_s
  while true do
    local line, why = w:read_line(deadline and math.max(deadline - kreach.now(), 0) or nil)
    if not line then
      if why ~= "eof" then stopped = true; w:kill() end
      break
    end
    out[#out + 1] = line .. "\n"
  end
  local how, code = w:wait()
  out[#out + 1] = w:stderr()
  w:free()
  if stopped then out[#out + 1] = ("\n(stopped after %g s)"):format(opts.timeout_s) end
  return table.concat(out), how == "exited" and code == 0 and not stopped
end

-- profile(run, argv, {db =, kinds =, alternate =, timeout_s =}) -> the profile (kreach.profile.run's
-- result: report, stdout, stderr, exit, stored; and output, its standard output then its
-- standard error), or nil, why and that output. The steps are the 'step' ranges, stored in `db` under the
-- run's name; `kinds` sets KREACH_TRACE_KINDS (nil: every kind); `alternate` traces every other
-- step only (KREACH_TRACE_ALTERNATE=step). A program that fails is a failure here even when its
-- trace reads.
function M.profile(run, argv, opts)
  opts = opts or {}
  local res, err, so_far = profile_run.profile(argv, { steps = "step", db = opts.db, workload = run.name,
    kinds = opts.kinds, alternate = opts.alternate and "step" or nil, timeout_s = opts.timeout_s })
  local ran = res or so_far or {}
  local out = (ran.stdout or "") .. (ran.stderr or "")
  if not res then return nil, err, out end
  if not res.ok then return nil, "the program " .. profile_run.exit_text(res.exit), out end
  res.output = out
  return res
end

-- The program's line `<word> <json>` (common.py prints `knobs {...}` and `summary {...}`),
-- decoded, from its output `out`; nil where it has none or it does not decode.
function M.program_line(out, word)
  local line
  for l in (out or ""):gmatch("[^\n]+") do
    if l:sub(1, #word + 2) == word .. " {" then line = l:sub(#word + 2) end
  end
  if not line then return nil end
  local ok, v = pcall(require("kreach.json").decode, line)
  return ok and v or nil
end

-- The figures of one profile's report (kreach.profile.report.build's) that the experiments
-- keep: kernels and dropped records, GPU-busy share of the wall, the vendor libraries' share
-- (vendor_gpu), the addressable share of GPU and wall time, the unclassified share, the
-- largest addressable kernel (top) and every family's share of GPU time (families).
function M.figures(rep)
  local row = {
    knobs = rep.knobs,
    kernels = rep.totals.kernels, dropped = rep.totals.dropped,
    gpu_s = rep.totals.gpu_s, wall_s_traced = rep.wall_s,
    busy = rep.totals.busy_frac,
    vendor_gpu = rep.not_addressable.frac_gpu,
    addr_gpu = rep.addressable.frac_gpu, addr_wall = rep.addressable.frac_wall,
    unclassified_gpu = rep.unclassified.frac_gpu,
    families = {},
  }
  for _, f in ipairs(rep.families) do row.families[f.family] = f.frac_gpu end
  if rep.unclassified.count > 0 then row.families.unclassified = rep.unclassified.frac_gpu end
  for _, k in ipairs(rep.kernels) do
    if k.addressable then row.top = { name = k.name, family = k.family, frac_gpu = k.frac_gpu }; break end
  end
  return row
end

return M
