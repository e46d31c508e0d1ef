-- kreach list [suite]: the suites, or the problems of one suite with their sizes. Suite and
-- problem files are trusted code, but each is loaded in a loader process with a time limit
-- (kreach.problem.catalog): one that hangs or fails is reported with why, and the listing goes on
-- (exit status 3 at the end when one did not load).
local catalog = require "kreach.problem.catalog"
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json" -- sorted keys: the same listing, the same text
local problem = require "kreach.problem"
local text = require "kreach.text"

local function basename(p) return p:match("([^/]+)$") or p end

-- The listing fits a terminal of WIDTH columns (issue 35): a problem's name or inputs too long
-- for its column is cut with "...", a suite's description wraps; --json keeps them whole, and a
-- file that does not load is said in full.
local WIDTH = 100
-- the problem columns: "%4s  " id, name, " %-13s" category, " %8s" GB, "  " inputs
local FIXED = 4 + 2 + 1 + 13 + 1 + 8 + 2
-- what inputs keep before a long name is cut (most problems' inputs fit in it)
local INPUTS_MIN = 28

-- cut(s, w) -> s, or its first w - 3 bytes (no half UTF-8 character) and "..."
local function cut(s, w)
  if #s <= w then return s end
  return (s:sub(1, w - 3):gsub("[\xC0-\xFF][\x80-\xBF]*$", "")) .. "..."
end

-- wrap(s, w, indent) -> s broken at spaces into lines of at most w bytes, the later ones after
-- `indent` (a word longer than w is cut)
local function wrap(s, w, indent)
  local lines, cur = {}, nil
  for word in s:gmatch("%S+") do
    word = cut(word, w)
    if cur and #cur + 1 + #word <= w then cur = cur .. " " .. word
    else
      if cur then lines[#lines + 1] = cur end
      cur = word
    end
  end
  lines[#lines + 1] = cur or ""
  return table.concat(lines, "\n" .. indent)
end

return {
  summary = "List the problem suites, or the problems of a suite.",
  parser = function(p)
    p:argument("suite", "A suite (kreach list shows them)."):args("?")
    p:flag("--json", "Print JSON.")
    p:option("--load-timeout --timeout", "Seconds each suite or problem file may take to load (--timeout is the old spelling).",
      tostring(catalog.DEFAULT_TIMEOUT_S)):convert(cli.positive_seconds):target("timeout"):argname("<seconds>")
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
        local i, e, nw = 1, 1, 10
        for _, n in ipairs(names) do nw = math.max(nw, #n) end
        for _, n in ipairs(names) do
          local s = suites[i]
          if s and s.name == n then
            local head = ("%-" .. nw .. "s %3d %-8s%s  "):format(n, s.problems, s.problems == 1 and "problem" or "problems",
              s.pending > 0 and (" (+%d to come)"):format(s.pending) or "")
            io.write(head, wrap(s.description or "", math.max(WIDTH - #head, 20), (" "):rep(#head)), "\n")
            i = i + 1
          else
            io.write(("%-" .. nw .. "s does not load: %s\n"):format(n, errors[e].why))
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
    io.write(wrap(("%s: %s"):format(s.name, s.description or ""), WIDTH, "  "), "\n")
    -- the name column is as wide as the longest name (the convolutions' reach 96 characters)
    -- while the inputs keep INPUTS_MIN columns; the inputs have the rest
    local longest_name, longest_inputs = 4, 6
    for _, r in ipairs(rows) do
      longest_name = math.max(longest_name, #r.name)
      longest_inputs = math.max(longest_inputs, #r.inputs)
    end
    local nw = math.min(longest_name, WIDTH - FIXED - math.min(longest_inputs, INPUTS_MIN))
    local iw = WIDTH - FIXED - nw
    local head_fmt = "%4s  %-" .. nw .. "s %-13s %8s  %s\n"
    io.write(head_fmt:format("id", "name", "category", "GB", "inputs"))
    local ri, ei = 1, 1
    for i = 1, #res do
      if res[i].value then
        local r = rows[ri]
        ri = ri + 1
        io.write(("%4d  %-" .. nw .. "s %-13s %8.3f  %s\n"):format(r.id, cut(r.name, nw), r.category,
          r.bytes / 1e9, cut(r.inputs, iw)))
      else
        local e = errors[ei]
        ei = ei + 1
        io.write(("%4s  %-" .. nw .. "s does not load: %s\n"):format(tostring(e.id),
          text.clean(basename(e.path), 256), e.why))
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
