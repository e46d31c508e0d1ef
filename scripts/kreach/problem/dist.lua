-- kreach.problem.dist: input distributions and parameter init rules, as text ("normal(0, 3)",
-- "uniform | triu", "kaiming_uniform(fan_in)") parsed and checked; host distributions
-- (host_dist); the host-side draws of structured inputs (bag offsets, jagged lengths) and their
-- totals; and the other distributions of an input's domain the correctness trials draw from
-- (other_generator). What runs on the GPU is kreach.problem.inputs'.
local errors = require "kreach.errors"
local files = require "kreach.problem.files"
local perr = require "kreach.problem.errors"

local M = {}

local problem_error, suggest, in_file, at_file = perr.error, perr.suggest, perr.in_file, perr.at_file
local field_call = files.field_call

-- the number of numbers each generator takes (-1: one or more)
local GENERATORS = { uniform = 2, normal = 2, randint = 2, sign = 0, bool = 0, zipf = 2, bags = 2, unique = 1,
  jagged = -1 }
local TRANSFORMS = { symmetric = 0, triu = 0, tril = 0, scale_rand = 0, softmax = 0 }
local INITS = { ones = 0, zeros = 0, uniform = 2, normal = 2, kaiming_uniform = 1 }
M.INITS = INITS

-- whether a number is neither NaN nor infinite
function M.finite(v) return v == v and v ~= math.huge and v ~= -math.huge end
local finite = M.finite

-- ---- distributions: "uniform", "uniform(-1, 1)", "randint(0, 4096)", "uniform | triu",
-- "zipf(1000, 1.1)" (rows of a 1000-row table, Zipf-like: kreach.ops.embedding's zipf_rows),
-- "bags(1, 100)" (the CSR offsets of embedding bags whose lengths are lo..hi, bag_offsets),
-- "unique(1000)" (distinct rows of a 1000-row table: kreach.ops.embedding's unique_rows),
-- "jagged(h1, ..., hF)" (an [F, B] tensor of bag lengths, row t a shuffle of 0..2 h_t: M.jagged_lengths) ----

local function parse_call(s, where, table_of, what)
  local name, argstr = s:match("^%s*([%a_][%w_]*)%s*(.-)%s*$")
  if not name then problem_error(where, "cannot read %s '%s'", what, s) end
  local args = {}
  if argstr ~= "" then
    local inner = argstr:match("^%((.*)%)$")
    if not inner then problem_error(where, "cannot read %s '%s'", what, s) end
    for a in inner:gmatch("[^,]+") do
      local v = tonumber(a:match("^%s*(.-)%s*$"))
      if not v then problem_error(where, "%s '%s': '%s' is not a number", what, s, a) end
      if not finite(v) then
        problem_error(where, "%s '%s': '%s' is not a finite number", what, s, a:match("^%s*(.-)%s*$"))
      end
      args[#args + 1] = v
    end
  end
  local want = table_of[name]
  if not want then
    local names = {}
    for k in pairs(table_of) do names[#names + 1] = k end
    table.sort(names)
    problem_error(where, "unknown %s '%s'%s (known: %s)", what, name, suggest(name, table_of),
      table.concat(names, ", "))
  end
  if #args ~= 0 and want >= 0 and #args ~= want then
    problem_error(where, "%s '%s' takes %d numbers, got %d", what, name, want, #args)
  end
  return name, args
end

-- limited_call(limit, path, where, doing, handler, f, ...) -> xpcall(f, handler, ...)'s first
-- two results. Where the problem has a file (path), and so outside the file's load (which has
M.parse_call = parse_call

-- An input's distribution at some sizes: its text, or what its function(sizes) returns (a
-- distribution whose numbers follow the sizes, as "randint(0, rows)"), called within
-- files.FIELD_LIMIT_S (field_call; path: the problem's file).
local function dist_text(a, sizes, where, path)
  if type(a.dist) ~= "function" then return a.dist or "uniform" end
  local ok, r = field_call(path, where, "in its dist function", in_file(path), a.dist, sizes)
  if not ok then problem_error(where, "the dist function failed: %s", errors.message(r)) end
  if type(r) ~= "string" then
    problem_error(at_file(path, where), "the dist function returned %s, not a distribution's text", type(r))
  end
  return r
end


-- distribution a problem computes on the host, for inputs whose structure the generators cannot
-- state (values tied to other inputs' layout): `draw` returns the values in row-major order for
-- one trial's seed and variant ("default", "centred", "shifted"); `text` is what reports show;
-- `python` (optional) is the expression `kreach export` writes into get_inputs (a function of the
-- problem's sizes, which get_inputs has as module-level names); without it, export refuses.
function M.host_dist(spec)
  if type(spec) ~= "table" or type(spec.draw) ~= "function" or type(spec.text) ~= "string" then
    error("host_dist{ text = string, draw = function(shape, seed, variant, sizes), python = string }", 2)
  end
  if spec.python ~= nil and type(spec.python) ~= "string" then error("host_dist: python is the export's expression, a string", 2) end
  return { host = true, text = spec.text, draw = spec.draw, python = spec.python }
end

local function is_host(d) return type(d) == "table" and d.host == true end

-- A parameter's init rule that the problem computes from the shape (init, a function): its text,
-- checked, called within files.FIELD_LIMIT_S (field_call; path: the problem's file, nil while the
-- file loads, whose own limit holds then).
function M.init_text(init, shape, where, path)
  local ok, rule = field_call(path, where, "in its init function", in_file(path), init, shape)
  if not ok then problem_error(where, "the init function failed: %s", errors.message(rule)) end
  if type(rule) ~= "string" then
    problem_error(at_file(path, where), "the init function returned %s, not an init rule's text", type(rule))
  end
  return rule
end


-- An input's distribution, parsed, at some sizes (a host distribution as it is, with the sizes,
-- and the problem's file, whose time limit its draw runs under: draw_host)
function M.input_dist(a, sizes, where, path)
  if is_host(a.dist) then
    return { gen = "host", text = a.dist.text, args = {}, transforms = {}, draw = a.dist.draw, python = a.dist.python,
             sizes = sizes, path = path }
  end
  return M.parse_dist(dist_text(a, sizes, where, path), where)
end

function M.parse_dist(s, where)
  where = where or "dist"
  if type(s) ~= "string" then problem_error(where, "a distribution is a string, got %s", type(s)) end
  local parts = {}
  for p in (s .. "|"):gmatch("([^|]*)|") do parts[#parts + 1] = p end
  local gen, args = parse_call(parts[1], where, GENERATORS, "distribution")
  local d = { text = s, gen = gen, args = args, transforms = {} }
  if gen == "uniform" and #args == 0 then d.args = { 0, 1 } end
  if gen == "normal" and #args == 0 then d.args = { 0, 1 } end
  if gen == "randint" and #args == 0 then problem_error(where, "randint needs (lo, hi)") end
  if gen == "bags" then
    if #args == 0 then problem_error(where, "bags needs (lo, hi), the range of the bags' lengths") end
    if math.type(args[1]) ~= "integer" or math.type(args[2]) ~= "integer" or args[1] < 0 or args[2] < args[1] then
      problem_error(where, "distribution '%s' needs whole lengths 0 <= lo <= hi", s)
    end
  end
  if gen == "jagged" then
    if #args == 0 then problem_error(where, "jagged needs (h1, ..., hF), the mean length of each row's bags") end
    for _, h in ipairs(args) do
      if math.type(h) ~= "integer" or h < 0 then problem_error(where, "distribution '%s' needs whole mean lengths >= 0", s) end
    end
  end
  if gen == "unique" then
    if #args == 0 then problem_error(where, "unique needs (rows)") end
    if math.type(args[1]) ~= "integer" or args[1] < 1 then problem_error(where, "distribution '%s' needs a whole number of rows >= 1", s) end
  end
  if gen == "zipf" then
    if #args == 0 then problem_error(where, "zipf needs (rows, alpha)") end
    if math.type(args[1]) ~= "integer" or args[1] < 1 or not (args[2] > 0) then
      problem_error(where, "distribution '%s' needs a whole number of rows >= 1 and alpha > 0", s)
    end
  end
  if (gen == "uniform" or gen == "randint") and not (d.args[1] < d.args[2]) then
    problem_error(where, "distribution '%s' needs lo < hi", s)
  end
  for i = 2, #parts do
    local t = parse_call(parts[i], where, TRANSFORMS, "transform")
    d.transforms[#d.transforms + 1] = t
  end
  return d
end

-- ---- argument constructors ----

-- init_rule(a) -> a parameter's init rule for its shape, with every number in it: a rule the
-- problem computes from the shape (a function) is called, and "kaiming_uniform" without its
-- fan_in takes PyTorch's, weight.size(1) * prod(kernel) (the product of the dimensions after
-- the first: in_channels / groups x kernel for a convolution's weight, in_features for a
-- linear one).
function M.init_rule(a)
  local rule = a.init
  if type(rule) == "function" then rule = rule(a.shape) end
  if type(rule) == "string" and rule:match("^%s*kaiming_uniform%s*$") then
    local fan_in = 1
    for i = 2, #a.shape do fan_in = fan_in * a.shape[i] end
    rule = ("kaiming_uniform(%d)"):format(fan_in)
  end
  return rule
end

-- ---- other input distributions, for the correctness trials (docs/correctness.md) ----

-- A number in [0, 1) from a seed and a salt (splitmix64), so that the other distributions are
-- a function of the trial's seed alone (declared before the draws, which use it).
function M.unit_hash(seed, salt)
  local z = (seed * 0x9E3779B97F4A7C15 + salt * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
  z = ((z ~ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
  z = ((z ~ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
  z = z ~ (z >> 31)
  return (z >> 11) / 9007199254740992.0
end
local unit_hash = M.unit_hash

-- The CSR offsets of n embedding bags (n + 1 values from 0) whose lengths are the multiset
-- lo, lo + 1, ..., hi, lo, ... (n of them, in turn), shuffled by `seed`: the lengths are spread
-- uniformly over lo..hi and their total, M.bags_total(n, lo, hi), is the same for every seed, so
-- the indices they index have one shape.
function M.bag_offsets(n, lo, hi, seed)
  local len = {}
  for i = 1, n do len[i] = lo + (i - 1) % (hi - lo + 1) end
  for i = n, 2, -1 do
    local j = math.floor(unit_hash(seed, i) * i) + 1
    len[i], len[j] = len[j], len[i]
  end
  local off = { 0 }
  for i = 1, n do off[i + 1] = off[i] + len[i] end
  return off
end

-- The lengths of F rows of n bags (a flat row-major table): row t is the multiset 0, 1, ..., 2 h_t,
-- 0, ... in turn, shuffled by `seed`: mean length about h_t (a keyed jagged tensor's lengths, one
-- row a feature), and a total, M.jagged_total(n, hs), that is the same for every seed.
function M.jagged_lengths(n, hs, seed)
  local out = {}
  for t, h in ipairs(hs) do
    local off = M.bag_offsets(n, 0, 2 * math.tointeger(h), seed * 31 + t)
    for i = 1, n do out[(t - 1) * n + i] = off[i + 1] - off[i] end
  end
  return out
end

-- The total of M.jagged_lengths(n, hs): a problem's id count.
function M.jagged_total(n, hs)
  local total = 0
  for _, h in ipairs(hs) do total = total + M.bags_total(n, 0, 2 * h) end
  return total
end

-- The total length of n bags of lengths lo..hi in turn (M.bag_offsets): a problem's index count.
function M.bags_total(n, lo, hi)
  local k = hi - lo + 1
  local full, rest = n // k, n % k
  return full * (lo + hi) * k // 2 + rest * lo + rest * (rest - 1) // 2
end

-- The generator an input is drawn from in a trial of kind `variant` ("centred" or "shifted"),
-- chosen by its domain; nil where the domain has no other distribution (indices, masks,
-- signs) or where none is declared. The input's transforms (triu, symmetric, softmax, ...)
-- are kept, so the structure the domain promises holds.
function M.other_generator(domain, variant, seed, i, dist)
  local u1, u2, u3 = unit_hash(seed, 3 * i + 1), unit_hash(seed, 3 * i + 2), unit_hash(seed, 3 * i + 3)
  local shifted = variant == "shifted"
  if domain == "rows" then
    -- the rows of randint(0, n): Zipf-like, alpha in [1.05, 1.1) or, shifted, [1.15, 1.2)
    if dist and dist.gen == "randint" and dist.args[1] == 0 then
      return "zipf", { math.tointeger(dist.args[2]), (shifted and 1.15 or 1.05) + 0.05 * u1 }
    end
    return nil
  end
  if domain == "real" or domain == "symmetric" or domain == "upper_triangular"
      or domain == "lower_triangular" or domain == "probabilities" then
    if shifted then
      local mu = (0.5 + 2.5 * u1) * (u3 < 0.5 and -1 or 1)
      return "normal", { mu, 0.25 + 1.75 * u2 }
    end
    return "normal", { 0, 0.5 + 2.5 * u2 }
  elseif domain == "positive" then
    local lo = shifted and (2 + 3 * u1) or (0.05 + 0.45 * u1)
    return "uniform", { lo, lo + 1 + 4 * u2 }
  elseif domain == "nonnegative" then
    local lo = shifted and (1 + 2 * u1) or 0
    return "uniform", { lo, lo + 0.5 + 4.5 * u2 }
  elseif domain == "unit" then
    if shifted then return "uniform", { 0.75 + 0.2 * u1, 1 } end
    return "uniform", { 0, 0.05 + 0.2 * u1 }
  end
  return nil
end

return M
