-- kreach export --format kernelbench <problem|suite> -o DIR: one KernelBench-format Python file
-- per problem (class Model, get_inputs, get_init_inputs) with kreach's semantics.
local kreach = require "kreach"

return {
  summary = "Export problems as KernelBench-format Python files.",
  parser = function(p)
    p:argument("what", "A problem (file, id or name) or a suite.")
    p:option("--format", "Output format.", "kernelbench"):choices({ "kernelbench" })
    p:option("-o --output", "Directory to write into."):args(1)
    p:option("--dtype", "The problems' dtype: f32, bf16 or f16.", "f32"):choices(require("kreach.cli").DTYPES)
  end,
  run = function(args)
    if not args.output then
      io.stderr:write("kreach export: -o DIR is required\n")
      return 2
    end
    local problem = require "kreach.problem"
    local files
    local is_suite = false
    for _, s in ipairs(kreach.suites()) do if s == args.what then is_suite = true end end
    if is_suite then files = kreach.load_suite(args.what).files else files = { problem.resolve(args.what) } end
    local lfs = require "lfs"
    if lfs.attributes(args.output, "mode") ~= "directory" then
      local ok, err = lfs.mkdir(args.output)
      if not ok then
        io.stderr:write(("kreach export: cannot create %s: %s\n"):format(args.output, err))
        return 1
      end
    end
    local export = require "kreach.export"
    for _, f in ipairs(files) do
      local p = problem.load(f)
      local inst = p:instantiate{ dtype = args.dtype }
      inst:validate()
      local path = ("%s/%s.py"):format(args.output, p.name)
      -- written whole or not at all (a temporary renamed into place)
      local out, oerr, ostatus = require("kreach.output").open(path)
      local ok, werr = true, nil
      if out then
        ok, werr = pcall(out.write, out, export.kernelbench(inst))
        if ok then ok, werr = out:commit() else out:abort() end
      end
      if not out or not ok then
        io.stderr:write(("kreach export: cannot write %s: %s\n"):format(path, tostring(oerr or werr)))
        return out and 1 or ostatus
      end
      io.write(path, "\n")
    end
    return 0
  end,
}
