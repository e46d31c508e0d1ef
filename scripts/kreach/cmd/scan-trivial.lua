-- kreach scan-trivial <suite|problem ...>: runs the built-in trivial candidates (kreach.judge.trivial)
-- on every problem and prints which ones each passes under KernelBench's rule and under
-- kreach's policy. Runs the problems at their shipped sizes unless --size is given.
local kreach = require "kreach"
local check = require "kreach.judge.check"
local cli = require "kreach.cli"
local json = require "kreach.json"
local problem = require "kreach.problem"
local scan = require "kreach.judge.trivial"

local function cell(r, v01)
  if r.na then return "n/a" end
  local kb = v01 and r.kernelbench_v01 or r.kernelbench
  return (kb and "PASS" or "fail") .. "/" .. (r.kreach and "PASS" or "fail")
end

return {
  summary = "Score trivial outputs on a suite under KernelBench's rule and kreach's (needs a GPU).",
  parser = function(p)
    p:argument("what", "A suite, or problems (files, ids or names)."):args("+")
    cli.problem_options(p)
    p:option("--seed", "Seed of the trials' inputs (default 1).", nil):convert(cli.nonnegative_integer)
    p:option("--trials", "Number of trials (default 5).", nil):convert(cli.positive_integer)
    p:flag("--json", "Print one JSON object at the end.")
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then
      io.stderr:write("kreach scan-trivial: ", err, "\n")
      return 2
    end
    local files = {}
    for _, w in ipairs(args.what) do
      local ok, s = pcall(kreach.load_suite, w)
      if ok then for _, f in ipairs(s.files) do files[#files + 1] = f end
      else files[#files + 1] = problem.resolve(w) end
    end
    kreach.require_device("kreach scan-trivial")
    local policy = { seed = args.seed, trials = args.trials }
    local rows = {}
    local names = scan.CANDIDATES
    local kb_tol = check.DEFAULTS.kernelbench_tol[args.dtype] or 1e-4
    if not args.json then
      io.write(("trivial candidates at %s: each cell is KernelBench's rule (allclose, tol %g) / kreach's policy\n"):format(args.dtype, kb_tol))
      io.write(("%4s %-40s %-7s"):format("id", "problem", "output"))
      for _, n in ipairs(names) do io.write((" %-10s"):format(n)) end
      io.write("\n")
    end
    for _, f in ipairs(files) do
      local p = problem.load(f)
      local row
      local ok, e = pcall(function()
        local sz = {}
        for k, v in pairs(sizes) do if p.sizes[k] ~= nil then sz[k] = v end end
        local inst = p:instantiate{ dtype = args.dtype, sizes = sz }
        inst:validate()
        row = scan.scan(inst, { policy = policy })
      end)
      if not ok then row = { problem = p.name, id = p.id, dtype = args.dtype, error = tostring(e) } end
      rows[#rows + 1] = row
      if not args.json then
        if row.error then
          io.write(("%4d %-40s ERROR: %s\n"):format(p.id, p.name:sub(1, 40), row.error:gsub("\n", " | "):sub(1, 200)))
        else
          for oname, o in pairs(row.outputs) do
            io.write(("%4d %-40s %-7s"):format(p.id, p.name:sub(1, 40), oname:sub(1, 7)))
            for _, n in ipairs(names) do io.write((" %-10s"):format(cell(o[n]))) end
            io.write("\n")
          end
          for _, note in ipairs(row.notes or {}) do io.write("     note: ", note, "\n") end
        end
        io.flush()
      end
      collectgarbage()
    end
    -- the summary: problems each candidate passes under each rule
    local count = scan.passes(rows, names)
    if args.json then
      io.write(json.encode({ dtype = args.dtype, kernelbench_tol = kb_tol, problems = rows, passes = count }), "\n")
    else
      io.write("\npasses (problem ids):\n")
      for _, n in ipairs(names) do
        local c = count[n]
        io.write(("  %-10s KernelBench (tol %g): %d [%s]; KernelBench v0.1 (tol 1e-2): %d [%s]; kreach: %d [%s]\n"):format(n, kb_tol,
          #c.kb, table.concat(c.kb, " "), #c.kb01, table.concat(c.kb01, " "), #c.kr, table.concat(c.kr, " ")))
      end
    end
    local any = false
    for _, n in ipairs(names) do if #count[n].kr > 0 then any = true end end
    return any and 1 or 0
  end,
}
