-- kreach list [suite]: the suites, or the problems of one suite with their sizes. Suite and
-- problem files are trusted code, but each is loaded in a loader process with a time limit
-- (kreach.catalog): one that hangs or fails is reported with why, and the listing goes on
-- (exit status 3 at the end when one did not load).
local catalog = require "kreach.catalog"
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json" -- sorted keys: the same listing, the same text
local problem = require "kreach.problem"
local text = require "kreach.text"

local function basename(p) return p:match("([^/]+)$") or p end

return {
  summary = "List the problem suites, or the problems of a suite.",
  parser = function(p)
    p:argument("suite", "A suite (kreach list shows them)."):args("?")
    p:flag("--json", "Print JSON.")
    p:option("--timeout", "Seconds each suite or problem file may take to load.",
      tostring(catalog.DEFAULT_TIMEOUT_S)):convert(cli.positive_seconds)
  end,
  run = function(args)
    local timeout = args.timeout -- checked by the parser (cli.positive_seconds)
    if not args.suite then
      local names = problem.suites()
      if #names == 0 then
        -- nothing found is said, not listed as an empty success
        local roots, looked = problem.roots()
        io.stderr:write(("kreach list: no suites found (looked in: %s); problems of your own go in a directory named by KREACH_PROBLEMS\n"):format(
          table.concat(#roots > 0 and roots or looked, ", ")))
        if args.json then io.write('{"errors":[],"suites":[]}\n') end
        return 1
      end
      local res = catalog.load("suite", names, { timeout_s = timeout })
      local suites, errors = {}, {}
      for i, r in ipairs(res) do
        if r.value then
          local s = r.value
          suites[#suites + 1] = { name = names[i], problems = #s.files, pending = #s.pending, description = s.description }
        else
          errors[#errors + 1] = { name = names[i], path = problem.find_suite(names[i]), why = r.why }
        end
      end
      if args.json then
        io.write(json.encode({ suites = suites, errors = errors }), "\n")
      else
        local i, e = 1, 1
        for _, n in ipairs(names) do
          local s = suites[i]
          if s and s.name == n then
            io.write(("%-24s %3d problems%s  %s\n"):format(n, s.problems,
              s.pending > 0 and (" (+%d to come)"):format(s.pending) or "", s.description or ""))
            i = i + 1
          else
            io.write(("%-24s does not load: %s\n"):format(n, errors[e].why))
            e = e + 1
          end
        end
      end
      return #errors > 0 and 3 or 0
    end
    -- the suite: whether it exists is known without running it
    if not problem.find_suite(args.suite) then problem.load_suite(args.suite) end -- raises "no suite"
    local sres = catalog.load("suite", { args.suite }, { timeout_s = timeout })[1]
    if not sres.value then errors.load("suite %s does not load: %s", args.suite, sres.why) end
    local s = sres.value
    local res = catalog.load("problem", s.files, { timeout_s = timeout })
    local rows, errors = {}, {}
    for i, r in ipairs(res) do
      if r.value then rows[#rows + 1] = r.value
      else errors[#errors + 1] = { id = s.ids[i], path = s.files[i], why = r.why } end
    end
    if args.json then
      io.write(json.encode({ suite = s.name, problems = rows, pending = s.pending, errors = errors }), "\n")
      return #errors > 0 and 3 or 0
    end
    io.write(("%s: %s\n"):format(s.name, s.description or ""))
    -- the name column is as wide as the longest name (the convolutions' reach 80 characters)
    local nw = 44
    for _, r in ipairs(rows) do nw = math.max(nw, #r.name) end
    local head_fmt = "%4s  %-" .. nw .. "s %-13s %12s  %s\n"
    io.write(head_fmt:format("id", "name", "category", "GB", "inputs"))
    local ri, ei = 1, 1
    for i = 1, #res do
      if res[i].value then
        local r = rows[ri]
        ri = ri + 1
        io.write(("%4d  %-" .. nw .. "s %-13s %12.3f  %s\n"):format(r.id, r.name, r.category, r.bytes / 1e9, r.inputs))
      else
        local e = errors[ei]
        ei = ei + 1
        io.write(("%4s  %-" .. nw .. "s does not load: %s\n"):format(tostring(e.id), text.clean(basename(e.path), 256), e.why))
      end
    end
    if #s.pending > 0 then
      local ids = {}
      for i, id in ipairs(s.pending) do ids[i] = tostring(id) end
      io.write(("to come: %s\n"):format(table.concat(ids, ", ")))
    end
    if #errors > 0 then
      io.stderr:write(("kreach list: %d problem%s of %s did not load\n"):format(#errors, #errors == 1 and "" or "s", s.name))
      return 3
    end
    return 0
  end,
}
