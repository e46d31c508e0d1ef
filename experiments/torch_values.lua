-- The values check's table (issue 20): each problem's baseline and oracle against its PyTorch
-- model in float64, from what `kreach oracle <suite> --torch --json` prints (one JSON document, its
-- problems under results; the JSON Lines of earlier versions, a line a problem, are read too).
--   kreach oracle kernelbench-l1 --torch --json > kb_f32.jsonl
--   kreach experiments/torch_values.lua kb_f32.jsonl [more.jsonl ...] [--json]
-- Per problem and dtype (and input variant where not the default): the worst relative L2 and the
-- worst error scaled by max |PyTorch| over the problem's outputs, for the baseline and for the
-- oracle, and whether the problem was within its thresholds; then, per file, the worst of each
-- column and the problems that were not within. A line that is not JSON is an error naming the
-- file and line (a crashed run's stderr mixed in, say), not skipped.
local json = require "kreach.json"
local text = require "kreach.text"

local files, as_json = {}, false
for _, a in ipairs(arg) do
  if a == "--json" then as_json = true
  elseif a:sub(1, 2) == "--" then io.stderr:write("torch_values.lua: unknown option ", a, "\n"); os.exit(2)
  else files[#files + 1] = a end
end
if #files == 0 then
  io.stderr:write("usage: kreach experiments/torch_values.lua FILE.jsonl... [--json]\n")
  os.exit(2)
end

-- worst(outputs, who) -> the largest rel_l2 and max_scaled of who ("baseline" or "oracle") over
-- the outputs, and the integer outputs' mismatches (summed); nil where no output has metrics
local function worst(outputs, who)
  local w = { rel_l2 = nil, max_scaled = nil, mismatches = nil, nonfinite = 0 }
  for _, o in ipairs(outputs or {}) do
    local m = o[who]
    if type(m) == "table" then
      if m.mismatches then w.mismatches = (w.mismatches or 0) + m.mismatches
      else
        if m.rel_l2 and (not w.rel_l2 or m.rel_l2 > w.rel_l2) then w.rel_l2 = m.rel_l2 end
        if m.max_scaled and (not w.max_scaled or m.max_scaled > w.max_scaled) then w.max_scaled = m.max_scaled end
        w.nonfinite = w.nonfinite + (m.nonfinite or 0) + (m.special_mismatch or 0)
      end
    end
  end
  return w
end

local function cell(w)
  local parts = {}
  if w.rel_l2 then parts[#parts + 1] = ("%.2e / %.2e"):format(w.rel_l2, w.max_scaled or 0 / 0) end
  if w.mismatches then parts[#parts + 1] = w.mismatches == 0 and "integers exact" or ("%d integers differ"):format(w.mismatches) end
  if w.nonfinite > 0 then parts[#parts + 1] = ("%d non-finite"):format(w.nonfinite) end
  return #parts > 0 and table.concat(parts, ", ") or "-"
end

-- one_line(s) -> a reason (or a name read from the file) fit for a table cell and a summary
-- line: its first line (a Python traceback follows PyTorch's message), control characters made
-- visible and at most 240 bytes (kreach.text.clean), its pipes escaped
local function one_line(s)
  local t = text.clean(tostring(s):match("^[^\n]*"), 240)
  return (t:gsub("|", "\\|"))
end

local rows, summaries = {}, {}
for _, path in ipairs(files) do
  local f, err = io.open(path, "rb")
  if not f then io.stderr:write("torch_values.lua: ", tostring(err), "\n"); os.exit(1) end
  local n, s = 0, { file = path, problems = 0, outside = {}, baseline = {}, oracle = {} }
  for line in f:lines() do
    n = n + 1
    if line:match("%S") then
      local ok, v = pcall(json.decode, line)
      if not ok or type(v) ~= "table" then
        io.stderr:write(("torch_values.lua: %s:%d: not a JSON object from kreach oracle --torch --json: %s\n")
          :format(path, n, line:sub(1, 120)))
        os.exit(1)
      end
      local function row(v)
        local r = { file = path, problem = v.problem, dtype = v.dtype, variant = v.variant or "default",
                    within = v.within, why = v.why, oracle_tolerance = v.oracle_tolerance,
                    baseline = worst(v.outputs, "baseline"), oracle = worst(v.outputs, "oracle") }
        rows[#rows + 1] = r
        s.problems = s.problems + 1
        if not v.within then s.outside[#s.outside + 1] = ("%s (%s)"):format(one_line(v.problem), one_line(v.why)) end
        for _, who in ipairs({ "baseline", "oracle" }) do
          for _, k in ipairs({ "rel_l2", "max_scaled" }) do
            local x = r[who][k]
            if x and (not s[who][k] or x > s[who][k].value) then s[who][k] = { value = x, problem = v.problem } end
          end
        end
      end
      -- a suite's one document (its problems under results), or a line of the JSON Lines
      -- earlier kreach printed (a problem's object, then the suite's summary)
      local problems = v.results == nil and { v } or v.results
      if type(problems) ~= "table" then problems = {} end
      for _, p in ipairs(problems) do if type(p) == "table" and p.problem then row(p) end end
      if v.problem == nil and (v.suite ~= nil or v.within ~= nil) then
        s.suite, s.reported = v.suite, v.within
      end
    end
  end
  f:close()
  summaries[#summaries + 1] = s
end

if as_json then
  io.write(json.encode({ rows = rows, files = summaries }), "\n")
  os.exit(0)
end

print("Each cell: worst relative L2 / worst error scaled by max |PyTorch|, over the problem's outputs.")
print("")
print("| problem | dtype | inputs | baseline vs PyTorch f64 | oracle vs PyTorch f64 | within |")
print("| --- | --- | --- | --- | --- | --- |")
for _, r in ipairs(rows) do
  local within = r.within and "yes" or ("**no**: " .. one_line(r.why))
  -- where PyTorch's own float64 is known to be inexact (kreach.judge.oracle.TORCH_F64_KNOWN), the
  -- oracle's threshold was that error, and the row says so
  local t = r.oracle_tolerance
  if type(t) == "table" then
    within = within .. (" (the oracle held to %.2g: %s)"):format(t.rel_l2 or 0 / 0, one_line(t.why))
  end
  print(("| %s | %s | %s | %s | %s | %s |"):format(one_line(r.problem), one_line(r.dtype), one_line(r.variant), cell(r.baseline),
    cell(r.oracle), within))
end
print("")
for _, s in ipairs(summaries) do
  local function top(who, k)
    local x = s[who][k]
    return x and ("%.2e (%s)"):format(x.value, one_line(x.problem)) or "-"
  end
  print(("%s: %d problems%s; worst baseline rel L2 %s, scaled %s; worst oracle rel L2 %s, scaled %s; %s")
    :format(s.file, s.problems, s.suite and (" of " .. s.suite) or "", top("baseline", "rel_l2"), top("baseline", "max_scaled"),
      top("oracle", "rel_l2"), top("oracle", "max_scaled"),
      #s.outside == 0 and "all within" or ("not within: " .. table.concat(s.outside, "; "))))
end
