-- kreach export --format kernelbench <problem|suite> -o DIR: one KernelBench-format Python file
-- per problem (class Model, get_inputs, get_init_inputs) with kreach's semantics.
local kreach = require "kreach"
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local export = require "kreach.problem.export"
local lfs = require "lfs"
local output = require "kreach.atomic"
local problem = require "kreach.problem"

return {
  summary = "Export problems as KernelBench-format Python files.",
  parser = function(p)
    p:argument("what", "A problem (file, id or name) or a suite.")
    -- the default of kreach results export --format too: kernelbench
    p:option("--format", "Output format (the only one, and the default of kreach results export too).", "kernelbench"):choices({ "kernelbench" })
    p:option("-o --output", "The directory to write into (one file per problem; made if missing)."):args(1):argname("<dir>")
    p:option("--dtype", "The problems' dtype: f32, bf16 or f16.", "f32"):choices(cli.DTYPES)
  end,
  run = function(args)
    if not args.output then errors.usage("-o DIR is required") end
    local files
    local is_suite = false
    for _, s in ipairs(kreach.suites()) do if s == args.what then is_suite = true end end
    if is_suite then files = kreach.load_suite(args.what).files else files = { problem.resolve(args.what) } end
    local mode = lfs.attributes(args.output, "mode")
    if mode and mode ~= "directory" then
      errors.usage("-o %s is a %s, not a directory (the export writes one file per problem into it)", args.output, mode)
    elseif not mode then
      local ok, err = lfs.mkdir(args.output)
      if not ok then errors.failed("cannot create the directory %s: %s", args.output, err) end
    end
    local written = {} -- file name -> the problem file it was exported from
    for _, f in ipairs(files) do
      local p = problem.load(f)
      local inst = p:instantiate{ dtype = args.dtype }
      inst:validate()
      -- a file name (kreach.problem.define refuses a name that is not one), so the export stays
      -- in the output directory
      local base = p.name
      if written[base] then
        errors.load("%s: problem '%s' has the name of %s, exported already (two problems of one suite share a name)",
          f, p.name, written[base])
      end
      written[base] = f
      local path = ("%s/%s.py"):format(args.output, base)
      -- written whole or not at all (a temporary renamed into place)
      local out, oerr, ostatus = output.open(path)
      if not out then errors.raise(ostatus, ("cannot write %s: %s"):format(path, tostring(oerr))) end
      local ok, werr = pcall(out.write, out, export.kernelbench(inst))
      if ok then ok, werr = out:commit() else out:abort() end
      if not ok then errors.failed("cannot write %s: %s", path, errors.message(werr)) end
      io.write(path, "\n")
    end
    return 0
  end,
}
