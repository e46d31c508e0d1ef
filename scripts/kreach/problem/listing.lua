-- kreach.problem.listing: what `kreach list` shows: the suites, or the problems of one suite with
-- their sizes, each file loaded through kreach.problem.catalog (a loader process with a time
-- limit: one that hangs or fails is reported with why, and the listing goes on), and the text
-- tables of both. The listing fits a terminal of M.WIDTH columns (issue 35): a problem's name or
-- inputs too long for its column is cut with "...", a suite's description wraps; the JSON keeps
-- them whole, and a file that does not load is said in full.
local catalog = require "kreach.problem.catalog"
local problem = require "kreach.problem"
local errors = require "kreach.errors"
local text = require "kreach.text"

local M = {}

M.WIDTH = 100
-- the problem columns: "%4s  " id, name, " %-Ns" category (N: at least 13, as wide as the
-- longest "category/subcategory"), " %8s" GB, "  " inputs
local CATEGORY_MIN = 13
local function fixed(cw) return 4 + 2 + 1 + cw + 1 + 8 + 2 end

-- a problem row's category as the listing shows it: "convolution/transposed 2D" where the file
-- declares a subcategory
function M.category_of(r)
  return r.subcategory and (r.category .. "/" .. r.subcategory) or r.category
end
-- what inputs keep before a long name is cut (most problems' inputs fit in it)
local INPUTS_MIN = 28

local function basename(p) return p:match("([^/]+)$") or p end

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

-- suites(names, timeout_s) -> { names =, suites = { {name, problems, pending, description} },
-- errors = { {name, path, why} } }: each suite loaded in the loader
function M.suites(names, timeout_s)
  local res = catalog.load("suite", names, { timeout_s = timeout_s })
  local suites, errs = {}, {}
  for i, r in ipairs(res) do
    if r.value then
      local s = r.value
      suites[#suites + 1] = { name = names[i], problems = #s.files, pending = #s.pending, description = s.description }
    else
      errs[#errs + 1] = { name = names[i], path = problem.find_suite(names[i]), why = r.why }
    end
  end
  return { names = names, suites = suites, errors = errs }
end

-- suites_text(l) -> the table of suites(...)'s listing: a line per suite, in the names' order
function M.suites_text(l)
  local out = {}
  local i, e, nw = 1, 1, 10
  for _, n in ipairs(l.names) do nw = math.max(nw, #n) end
  for _, n in ipairs(l.names) do
    local s = l.suites[i]
    if s and s.name == n then
      local head = ("%-" .. nw .. "s %3d %-8s%s  "):format(n, s.problems, s.problems == 1 and "problem" or "problems",
        s.pending > 0 and (" (+%d to come)"):format(s.pending) or "")
      out[#out + 1] = head .. wrap(s.description or "", math.max(M.WIDTH - #head, 20), (" "):rep(#head)) .. "\n"
      i = i + 1
    else
      out[#out + 1] = ("%-" .. nw .. "s does not load: %s\n"):format(n, l.errors[e].why)
      e = e + 1
    end
  end
  return table.concat(out)
end

-- suite(name, timeout_s) -> { suite = the loaded suite, rows = the problems that loaded,
-- errors = { {id, path, why} }, loaded = { true | false, ... } in the suite's order }; a suite
-- that does not exist or does not load raises
function M.suite(name, timeout_s)
  -- whether it exists is known without running it
  if not problem.find_suite(name) then problem.load_suite(name) end -- raises "no suite"
  local sres = catalog.load("suite", { name }, { timeout_s = timeout_s })[1]
  if not sres.value then errors.load("suite %s does not load: %s", name, sres.why) end
  local s = sres.value
  local res = catalog.load("problem", s.files, { timeout_s = timeout_s })
  local rows, errs, loaded = {}, {}, {}
  for i, r in ipairs(res) do
    loaded[i] = r.value ~= nil
    if r.value then rows[#rows + 1] = r.value
    else errs[#errs + 1] = { id = s.ids[i], path = s.files[i], why = r.why } end
  end
  return { suite = s, rows = rows, errors = errs, loaded = loaded }
end

-- problems_text(l) -> the table of suite(...)'s listing: the suite's description, then a line
-- per problem (or why it did not load), then the problems to come
function M.problems_text(l)
  local s, rows = l.suite, l.rows
  local out = { wrap(("%s: %s"):format(s.name, s.description or ""), M.WIDTH, "  ") .. "\n" }
  -- the name column is as wide as the longest name (the convolutions' reach 96 characters)
  -- while the inputs keep INPUTS_MIN columns; the inputs have the rest
  local longest_name, longest_inputs, cw = 4, 6, CATEGORY_MIN
  for _, r in ipairs(rows) do
    longest_name = math.max(longest_name, #r.name)
    longest_inputs = math.max(longest_inputs, #r.inputs)
    cw = math.max(cw, #M.category_of(r))
  end
  local FIXED = fixed(cw)
  local nw = math.min(longest_name, M.WIDTH - FIXED - math.min(longest_inputs, INPUTS_MIN))
  local iw = M.WIDTH - FIXED - nw
  local head_fmt = "%4s  %-" .. nw .. "s %-" .. cw .. "s %8s  %s\n"
  out[#out + 1] = head_fmt:format("id", "name", "category", "GB", "inputs")
  local ri, ei = 1, 1
  for i = 1, #l.loaded do
    if l.loaded[i] then
      local r = rows[ri]
      ri = ri + 1
      out[#out + 1] = ("%4d  %-" .. nw .. "s %-" .. cw .. "s %8.3f  %s\n"):format(r.id, cut(r.name, nw), M.category_of(r),
        r.bytes / 1e9, cut(r.inputs, iw))
    else
      local e = l.errors[ei]
      ei = ei + 1
      out[#out + 1] = ("%4s  %-" .. nw .. "s does not load: %s\n"):format(tostring(e.id),
        text.clean(basename(e.path), 256), e.why)
    end
  end
  if #s.pending > 0 then
    local ids = {}
    for i, id in ipairs(s.pending) do ids[i] = tostring(id) end
    out[#out + 1] = ("to come: %s\n"):format(table.concat(ids, ", "))
  end
  return table.concat(out)
end

return M
