-- kreach list [suite]: the suites, or the problems of one suite with their sizes.
local kreach = require "kreach"

return {
  summary = "List the problem suites, or the problems of a suite.",
  parser = function(p)
    p:argument("suite", "A suite (kreach list shows them)."):args("?")
    p:flag("--json", "Print JSON.")
  end,
  run = function(args)
    if not args.suite then
      for _, name in ipairs(kreach.suites()) do
        local s = kreach.load_suite(name)
        io.write(("%-24s %3d problems%s  %s\n"):format(name, #s.files,
          #s.pending > 0 and (" (+%d to come)"):format(#s.pending) or "", s.description or ""))
      end
      return 0
    end
    local s = kreach.load_suite(args.suite)
    local rows = {}
    for _, f in ipairs(s.files) do
      local p = require("kreach.problem").load(f)
      local inst = p:instantiate()
      local shapes = {}
      for _, a in ipairs(inst.args) do
        if a.kind == "input" then shapes[#shapes + 1] = table.concat(a.shape, "x") end
      end
      rows[#rows + 1] = { id = p.id, name = p.name, category = p.category,
        inputs = table.concat(shapes, "; "), bytes = inst.bytes, flops = inst.flops }
    end
    if args.json then
      io.write(require("cjson").encode({ suite = s.name, problems = rows, pending = s.pending }), "\n")
      return 0
    end
    io.write(("%s: %s\n"):format(s.name, s.description or ""))
    io.write(("%4s  %-44s %-13s %12s  %s\n"):format("id", "name", "category", "GB", "inputs"))
    for _, r in ipairs(rows) do
      io.write(("%4d  %-44s %-13s %12.3f  %s\n"):format(r.id, r.name, r.category, r.bytes / 1e9, r.inputs))
    end
    if #s.pending > 0 then
      local ids = {}
      for i, id in ipairs(s.pending) do ids[i] = tostring(id) end
      io.write(("to come: %s\n"):format(table.concat(ids, ", ")))
    end
    return 0
  end,
}
