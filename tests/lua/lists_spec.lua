-- The lists kreach.kinds owns (issue 35): the dtypes, the timing modes and the kinds of
-- candidate file, each written once in scripts/ and taken from there everywhere else; and
-- kreach eval's plan for one problem, which takes from a directory only the candidates that
-- name that problem.
local kinds = require "kreach.kinds"
local cli = require "kreach.cli"
local ev = require "kreach.run.evaluate"
local timing = require "kreach.judge.timing"
local lfs = require "lfs"

local support = require "support"
local tmpdir, write = support.tmpdir, support.spit

-- the tree to check: the working directory's (ctest runs specs at the source root), or
-- KREACH_SOURCE_DIR's (to run the check on another checkout)
local SCRIPTS = (os.getenv("KREACH_SOURCE_DIR") or ".") .. "/scripts"

local function files(dir, out)
  out = out or {}
  for f in lfs.dir(dir) do
    if f ~= "." and f ~= ".." then
      local p = dir .. "/" .. f
      if lfs.attributes(p, "mode") == "directory" then files(p, out)
      elseif f:match("%.lua$") or f:match("%.py$") then out[#out + 1] = p end
    end
  end
  table.sort(out)
  return out
end

local function slurp(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- the table constructors of a source text that hold exactly the items of `list` (as strings,
-- { "a", "b" }, or as keys, { a = true }), in any order and layout; Lua comments left out
local function spelled(src, list, lua)
  -- a comment: a line's from its "--" (at its start or after a blank, so not "--format")
  if lua then src = ("\n" .. src):gsub("\n%s*%-%-[^\n]*", "\n"):gsub("%s%-%-%s[^\n]*", "") end
  local want = kinds.set(list)
  local hits = {}
  for pos in src:gmatch("(){") do
    local body = src:match("^%b{}", pos)
    if body and not body:sub(2, -2):find("[{}]") then
      local items, n, other = {}, 0, false
      for _, w in body:gmatch("([\"'])([%w_]+)%1") do
        if not items[w] then items[w] = true; n = n + 1 end
      end
      for w in body:gmatch("([%a_][%w_]*)%s*=%s*true") do
        if not items[w] then items[w] = true; n = n + 1 end
      end
      for w in pairs(items) do if not want[w] then other = true end end
      if not other and n == #list then hits[#hits + 1] = body end
    end
  end
  return hits
end

describe("kreach.kinds", function()
  it("lists the dtypes, the timing modes and the candidate kinds", function()
    assert.same({ "f32", "bf16", "f16" }, kinds.DTYPES)
    assert.same({ "cold", "hot", "graph" }, kinds.MODES)
    assert.same({ "lua", "python" }, kinds.CANDIDATE_KINDS)
    assert.equals("f32, bf16 or f16", kinds.words(kinds.DTYPES))
  end)

  it("tells a candidate's kind by its file name", function()
    assert.equals("python", kinds.kind("a/019_relu.py"))
    assert.equals("lua", kinds.kind("a/019_relu.lua"))
    -- any other name is read as a Lua candidate, as before
    assert.equals("lua", kinds.kind("a/019_relu.PY"))
    assert.equals("lua", kinds.kind("a/relu.py.txt"))
    assert.equals("lua", kinds.kind("py"))
    assert.equals("python", kinds.kind_of_file("x.py"))
    assert.equals("lua", kinds.kind_of_file("x.lua"))
    assert.is_nil(kinds.kind_of_file("x.txt"))
  end)

  it("is what the CLI and the timing engine use", function()
    assert.equals(kinds.DTYPES, cli.DTYPES)
    assert.same(kinds.set(kinds.MODES), timing.MODES)
    assert.equals(kinds.MODES[1], timing.DEFAULTS.mode)
  end)
end)

-- lists that hold the same items today but are another list (they would not grow with it)
local ALLOWED = {
  -- the float dtypes among all tensor dtypes (i64, i32, bool, ...): the inputs the oracle
  -- keeps an f64 copy of, in the estimate of an input set's memory
  ["scripts/kreach/judge/sets.lua: { f32 = true, f16 = true, bf16 = true }"] = true,
}

describe("no file in scripts/ spells out a list kreach.kinds owns", function()
  local all = files(SCRIPTS)
  it("finds the scripts", function() assert.truthy(#all > 40) end)

  for _, what in ipairs({ { "the dtype list", kinds.DTYPES }, { "the timing modes", kinds.MODES },
                          { "the candidate kinds", kinds.CANDIDATE_KINDS } }) do
    it(what[1], function()
      local found = {}
      for _, p in ipairs(all) do
        if not p:match("/kreach/kinds%.lua$") then
          for _, body in ipairs(spelled(slurp(p), what[2], p:match("%.lua$"))) do
            if not ALLOWED[p:match("scripts/.*$") .. ": " .. body] then found[#found + 1] = p .. ": " .. body end
          end
        end
      end
      assert.same({}, found)
    end)
  end

  it("the .py test of a candidate's kind", function()
    local found = {}
    for _, p in ipairs(all) do
      if not p:match("/kreach/kinds%.lua$") and slurp(p):find("%.py$", 1, true) then found[#found + 1] = p end
    end
    assert.same({}, found)
  end)

  it("(the check itself finds a spelled-out list)", function()
    assert.equals(1, #spelled('x = { "f32", "bf16", "f16" }', kinds.DTYPES))
    assert.equals(1, #spelled("local D = { f16 = true, f32 = true,\n bf16 = true }", kinds.DTYPES))
    assert.equals(0, #spelled('x = { "f32", "bf16", "f16", "f64" }', kinds.DTYPES))
    assert.equals(1, #spelled(':choices({ "cold", "hot", "graph" })', kinds.MODES))
  end)
end)

describe("kreach eval's plan for one problem", function()
  it("takes from a directory only the candidates that name the problem, and says why it skips the others", function()
    local d = tmpdir()
    write(d .. "/001_mm.lua", "return {}")
    write(d .. "/019_relu.lua", "return {}")
    write(d .. "/019_relu_torch.py", "x = 1\n")
    write(d .. "/023_softmax.lua", "return {}")
    local items, skipped = ev.plan("19", { d })
    local got = {}
    for i, it in ipairs(items) do got[i] = it.label .. "@" .. it.problem_id end
    assert.same({ "019_relu.lua@19", "019_relu_torch.py@19" }, got)
    assert.equals(2, #skipped)
    assert.equals(d .. "/001_mm.lua: names problem 1, not 19_ReLU (19)", skipped[1].why)
    assert.equals(d .. "/023_softmax.lua", skipped[2].candidate_path)
  end)

  it("skips every example when none names the problem (examples/ against ReLU)", function()
    local items, skipped = ev.plan("19", { "examples" })
    assert.same({}, items)
    assert.truthy(#skipped >= 5)
  end)

  it("goes by a manifest's \"problem\", and takes an entry that names none", function()
    local d = tmpdir()
    write(d .. "/a.lua", "return {}")
    write(d .. "/b.lua", "return {}")
    write(d .. "/c.lua", "return {}")
    write(d .. "/manifest.json", '[{"file": "a.lua", "problem": 19}, {"file": "b.lua", "problem": 23}, {"file": "c.lua"}]')
    local items, skipped = ev.plan("19", { d })
    local got = {}
    for i, it in ipairs(items) do got[i] = it.label end
    assert.same({ "a.lua", "c.lua" }, got)
    assert.equals(1, #skipped)
    assert.equals(d .. "/b.lua: names problem 23, not 19_ReLU (19)", skipped[1].why)
  end)

  it("takes a file given by name whatever its name", function()
    local items, skipped = ev.plan("19", { "examples/001_matmul_tiled.lua" })
    assert.equals(1, #items)
    assert.equals(19, items[1].problem_id)
    assert.same({}, skipped)
  end)
end)

describe("kreach.results.store's generations table", function()
  it("is defined once (the schema's definition is the migration's)", function()
    local src = slurp(SCRIPTS .. "/kreach/results/store/generations.lua")
    local n = 0
    for _ in src:gmatch("CREATE TABLE[%w ]-generations%(") do n = n + 1 end
    assert.equals(1, n)
  end)
end)
