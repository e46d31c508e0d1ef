-- kreach show <problem>: its arguments with shapes, dtypes and distributions, its sizes, the
-- bytes and flops of its speed-of-light bound, and the PyTorch code.
local kreach = require "kreach"
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local problem = require "kreach.problem"


-- A parameter's init rule as text, as it comes out for this instance (kreach.problem.init_rule:
-- a convolution's fan_in computed from the weight's shape)
local function init_rule(a)
  local ok, r = pcall(problem.init_rule, a)
  return ok and type(r) == "string" and r or nil
end
return {
  summary = "Show a problem: arguments, shapes, bytes, flops and the PyTorch code.",
  parser = function(p)
    p:argument("problem", "A problem file, id or name.")
    cli.problem_options(p)
    p:flag("--json", "Print JSON.")
  end,
  run = function(args)
    local sizes, err = cli.sizes(args.size)
    if not sizes then errors.usage(err) end
    local p = kreach.load_problem(args.problem)
    local inst = p:instantiate{ dtype = args.dtype, sizes = sizes }
    inst:validate()
    if args.json then
      local a = {}
      for i, x in ipairs(inst.args) do
        a[i] = { kind = x.kind, name = x.name, shape = x.shape, dtype = x.dtype, value = x.value,
                 dist = x.dist and x.dist.text, domain = x.domain, init = init_rule(x) }
      end
      io.write(json.encode({ id = p.id, name = p.name, path = p.path, category = p.category,
        subcategory = p.subcategory, description = p.description, dtype = inst.dtype, sizes = inst.sizes, args = a,
        bytes = inst.bytes, flops = inst.flops, torch = p.def.torch }), "\n")
      return 0
    end
    local category = p.subcategory and (p.category .. "/" .. p.subcategory) or p.category
    io.write(("%s (%s, problem %d of %s)\n%s\nfile: %s\n\n"):format(p.name, category, p.id, p.suite,
      p.description, p.path))
    local names = {}
    for k in pairs(inst.sizes) do names[#names + 1] = k end
    table.sort(names)
    local sz = {}
    for _, k in ipairs(names) do sz[#sz + 1] = k .. " = " .. inst.sizes[k] end
    io.write("sizes: ", table.concat(sz, ", "), "\n\narguments at ", inst.dtype, ":\n")
    for _, a in ipairs(inst.args) do
      if a.kind == "scalar" then
        io.write(("  %-7s %-16s = %s\n"):format(a.kind, a.name, tostring(a.value)))
      else
        local extra = a.dist and ("  %s"):format(a.dist.text) or (init_rule(a) and "  init " .. init_rule(a) or "")
        if a.domain then extra = extra .. ("  (domain: %s)"):format(a.domain) end
        io.write(("  %-7s %-16s %-5s {%s}  %.3f GB%s\n"):format(a.kind, a.name, a.dtype,
          table.concat(a.shape, ", "), a.nbytes / 1e9, extra))
      end
    end
    -- bytes is a whole count unless the problem's bytes function returned a fraction
    local bytes = math.tointeger(inst.bytes) and ("%d"):format(inst.bytes) or ("%.0f"):format(inst.bytes)
    io.write(("\nbytes (compulsory traffic): %s (%.3f GB)\nflops: %.6g\narithmetic intensity: %.3g flop/byte\n"):format(
      bytes, inst.bytes / 1e9, inst.flops, inst.flops / math.max(inst.bytes, 1)))
    io.write("\nPyTorch:\n", p.def.torch.model)
    if p.def.torch.init then io.write("init: ", p.def.torch.init, "\n") end
    return 0
  end,
}
