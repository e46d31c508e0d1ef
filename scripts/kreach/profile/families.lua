-- kreach.profile.families: which kernel family a benchmark problem stands for, so that speedups
-- measured on problems (kreach check and evaluation results) can be projected onto a profile.
-- A problem maps through its category (CATEGORY), unless PROBLEMS names it by suite and id.
-- A family's speedup is the geometric mean over the correct candidates of its problems.
local M = {}

-- problem category (docs/scripting.md) -> family (kreach.profile.classify)
M.CATEGORY = {
  matmul = "gemm",
  activation = "elementwise",
  elementwise = "elementwise",
  normalization = "normalization",
  loss = "softmax_loss",
  reduction = "reduction",
  pooling = "other",
  scan = "sort_scan",
  attention = "attention",
  convolution = "conv",
  embedding = "embedding",
  other = "other",
}

-- Problems whose category would map them wrongly, by suite and id.
M.PROBLEMS = {
  ["kernelbench-l1"] = {
    [12] = "elementwise",   -- "diag(A) @ B" is a row scaling, A.unsqueeze(1) * B: no GEMM runs
    [23] = "softmax_loss",  -- Softmax: category activation
    [24] = "softmax_loss",  -- LogSoftmax: category activation
  },
}

-- family_of(problem) -> family, or nil and why. `problem` is a loaded problem (kreach.problem)
-- or a table with suite, id and category.
function M.family_of(p)
  if type(p) ~= "table" then error("family_of: a problem table expected", 2) end
  local by_id = p.suite and M.PROBLEMS[p.suite]
  if by_id and p.id and by_id[p.id] then return by_id[p.id] end
  if p.category and M.CATEGORY[p.category] then return M.CATEGORY[p.category] end
  return nil, ("problem %s has category '%s', which maps to no family"):format(tostring(p.name or p.id), tostring(p.category))
end

local function is_correct(r)
  if r.correct ~= nil then return r.correct == true end
  local v = r.verdict
  if type(v) == "table" then v = v.verdict end
  return v == "correct"
end

-- speedups(results[, {per_problem = "all"|"best"}]) -> { family = speedup }, detail.
-- Each result is a table with `speedup` (baseline time over candidate time), correctness
-- (`correct = true`, or `verdict = "correct"` or a verdict table), and either `family` or the
-- problem (`problem` = a problem table, or `suite`, `id`, `category` on the result itself).
-- Incorrect candidates and results without a speedup are left out. With per_problem = "best"
-- only each problem's fastest correct candidate counts (the kernel one would deploy); with
-- "all" (the default) every correct candidate does. detail[family] = { n =, problems = {...} }.
function M.speedups(results, opts)
  opts = opts or {}
  local per = opts.per_problem or "all"
  if per ~= "all" and per ~= "best" then error("per_problem: 'all' or 'best' expected", 2) end
  local samples = {}   -- family -> problem key -> list of speedups
  for i, r in ipairs(results) do
    if type(r) ~= "table" then error(("result %d: a table expected"):format(i), 2) end
    local s = r.speedup
    if is_correct(r) and type(s) == "number" and s > 0 and s == s and s < math.huge then
      local p = r.problem or r
      local fam = r.family or M.family_of(p)
      if fam then
        local key = tostring(p.suite or "") .. ":" .. tostring(p.id or p.name or i)
        samples[fam] = samples[fam] or {}
        samples[fam][key] = samples[fam][key] or {}
        table.insert(samples[fam][key], s)
      end
    end
  end
  local out, detail = {}, {}
  for fam, byp in pairs(samples) do
    local logsum, n, problems = 0, 0, {}
    for key, list in pairs(byp) do
      problems[#problems + 1] = key
      if per == "best" then
        local best = list[1]
        for _, v in ipairs(list) do if v > best then best = v end end
        list = { best }
      end
      for _, v in ipairs(list) do logsum = logsum + math.log(v); n = n + 1 end
    end
    table.sort(problems)
    out[fam] = math.exp(logsum / n)
    detail[fam] = { n = n, problems = problems }
  end
  return out, detail
end

-- parse(text) -> { family = speedup }, or nil and why: "gemm=1.2,elementwise=2.5" (a family
-- given twice is refused, not the last one kept).
function M.parse(text)
  local out = {}
  for item in tostring(text):gmatch("[^,]+") do
    local fam, v = item:match("^%s*([%w_]+)%s*=%s*([%d%.eE%+%-]+)%s*$")
    local x = tonumber(v)
    if not fam or not x then return nil, ("speedups take family=number[,family=number...], got '%s'"):format(item) end
    if not (x > 0 and x < math.huge) then return nil, ("the speedup of %s must be a positive number, got %s"):format(fam, v) end
    if out[fam] then return nil, ("the speedup of %s is given twice (%s and %s)"):format(fam, tostring(out[fam]), v) end
    out[fam] = x
  end
  return out
end

return M
