-- Problems without a GPU: every shipped problem loads and validates at its full size (its
-- reference runs on shape-only tensors), reports bytes and flops, and exports to Python that
-- compiles; the suites list what they should; the DSL's errors name the file and the field.
local kreach = require "kreach"
local problem = require "kreach.problem"
local lfs = require "lfs"

local DIR = "problems/kernelbench/level1"

local function files()
  local r = {}
  for f in lfs.dir(DIR) do if f:match("^%d+_.*%.lua$") then r[#r + 1] = DIR .. "/" .. f end end
  table.sort(r)
  return r
end

local support = require "support"
local tmpdir = support.tmpdir

local write = support.write

local function load_error(path)
  local ok, err = pcall(problem.load, path)
  assert.is_false(ok)
  return tostring(err)
end

local have_python = os.execute("python3 -c 'pass' >/dev/null 2>&1")

describe("the KernelBench level-1 problems", function()
  local out = tmpdir()
  for _, f in ipairs(files()) do
    it("load, validate and export: " .. f:match("[^/]+$"), function()
      local p = problem.load(f)
      local id = tonumber(f:match("/(%d+)_"))
      assert.equals(id, p.id)
      assert.matches("^" .. id .. "_", p.name)
      assert.equals(f:match("/%d+_(.*)%.lua$"), p.name:match("^%d+_(.*)$"))
      for _, dt in ipairs({ "f32", "bf16", "f16" }) do
        local inst = p:instantiate{ dtype = dt }
        assert.is_true(inst:validate())
        assert.is_true(inst.bytes > 0)
        assert.is_true(inst.flops > 0)
      end
      local inst = p:instantiate()
      local py = require("kreach.problem.export").kernelbench(inst)
      assert.matches("class Model%(nn%.Module%)", py)
      assert.matches("\ndef get_inputs%(%):\n", py)
      assert.matches("\ndef get_init_inputs%(%):\n", py)
      if have_python then
        local path = write(out, p.name .. ".py", py)
        assert.is_true(os.execute("python3 -m py_compile '" .. path .. "'"), "exported Python does not compile")
      end
    end)
  end

  it("are listed by the suites", function()
    local s = kreach.load_suite("kernelbench-l1")
    assert.equals(100, #s.files)
    assert.same({}, s.pending)
    for id = 1, 100 do assert.equals(id, s.ids[id]) end
    local r = kreach.load_suite("kernelbench-l1-repr")
    assert.same({ 1, 3, 6, 18, 23, 26, 33, 36, 40, 42, 48, 54, 57, 65, 77, 82, 86, 87 }, r.ids)
    assert.same({}, r.pending)
    -- the convolutions, for the sweeps of their baselines: every one's category is convolution
    local c = kreach.load_suite("kernelbench-l1-conv")
    assert.equals(35, #c.files)
    assert.equals(50, c.ids[1])
    for i, f in ipairs(c.files) do
      assert.equals("convolution", problem.load(f).category, f)
      if i > 1 then assert.equals(52 + i, c.ids[i]) end
    end
  end)

  it("of every suite: each convolution declares a subcategory, each subcategory is its category's", function()
    local define = require "kreach.problem.define"
    local convs, subs = 0, 0
    for _, name in ipairs(problem.suites()) do
      for _, f in ipairs(problem.load_suite(name).files) do
        local p = problem.load(f)
        if p.category == "convolution" then
          convs = convs + 1
          assert.is_string(p.subcategory, f)
        end
        if p.subcategory then
          subs = subs + 1
          local known = {}
          for _, k in ipairs(define.SUBCATEGORIES[p.category]) do known[k] = true end
          assert.is_true(known[p.subcategory], f)
        end
      end
    end
    assert.is_true(convs >= 35 * 2) -- kernelbench-l1 and kernelbench-l1-conv (and -repr's)
    assert.is_true(subs > convs) -- DLRM-Bench's embeddings too
  end)

  it("resolve by id, by padded id and by name", function()
    local a = problem.resolve("19")
    assert.equals(a, problem.resolve("019"))
    assert.equals(a, problem.resolve("19_ReLU"))
    assert.matches("019_ReLU%.lua$", a)
    local ok, err = pcall(problem.resolve, "no_such_problem")
    assert.matches("no problem 'no_such_problem'", tostring(err))
  end)

  it("pass their sizes to the reference, so constructor arguments can be overridden", function()
    local p = problem.load(DIR .. "/041_Max_Pooling_1D.lua")
    local inst = p:instantiate{ sizes = { batch_size = 2, features = 3, sequence_length = 100, kernel_size = 4, padding = 2, dilation = 1 } }
    -- (100 + 2*2 - 1*(4-1) - 1) // 1 + 1 = 101
    assert.same({ 2, 3, 101 }, inst.args[2].shape)
    assert.is_true(inst:validate())
    -- and the operator's own checks apply to overridden values
    local bad = p:instantiate{ sizes = { batch_size = 2, features = 3, sequence_length = 100, kernel_size = 4 } }
    local ok, err = pcall(bad.validate, bad)
    assert.matches("pad should be at most half of the kernel size", tostring(err))
    local g = problem.load(DIR .. "/035_GroupNorm_.lua"):instantiate{ sizes = { batch_size = 2, features = 12, num_groups = 3, dim1 = 4, dim2 = 4 } }
    assert.is_true(g:validate())
    local r = problem.load(DIR .. "/048_Mean_reduction_over_a_dimension.lua"):instantiate{ sizes = { batch_size = 5, dim1 = 6, dim2 = 6, reduce_dim = 2 } }
    assert.same({ 5, 6 }, r.args[2].shape)
    assert.is_true(r:validate())
  end)

  it("take size overrides, and refuse unknown sizes", function()
    local p = problem.load(DIR .. "/001_Square_matrix_multiplication_.lua")
    local inst = p:instantiate{ sizes = { N = 64 } }
    assert.same({ 64, 64 }, inst.args[1].shape)
    assert.equals(2 * 64 ^ 3, inst.flops)
    assert.equals(3 * 64 * 64 * 4, inst.bytes)
    local ok, err = pcall(p.instantiate, p, { sizes = { n = 64 } })
    assert.matches("no size named 'n' %(did you mean 'N'%?%)", tostring(err))
    ok, err = pcall(p.instantiate, p, { dtype = "i32" })
    assert.matches("a problem runs at f32, bf16 or f16", tostring(err))
  end)
end)

describe("a malformed problem file", function()
  local dir = tmpdir()
  local GOOD = support.GOOD_PROBLEM
  local function variant(from, to)
    local text, n = GOOD:gsub(from, to)
    assert(n == 1, "pattern not found: " .. from)
    return write(dir, "p.lua", text)
  end

  it("loads when it is well formed", function()
    assert.is_true(problem.load(write(dir, "ok.lua", GOOD)):instantiate():validate())
  end)

  it("with a syntax error names the file and the line", function()
    assert.matches("p%.lua:4: unexpected symbol", load_error(variant("sizes = { n = 8 },", "sizes = { n = = 8 },")))
  end)

  it("with a missing field names it", function()
    assert.matches("p%.lua: problem 't': missing field 'flops'", load_error(variant("  flops = function%(s%) return s.n end,\n", "")))
  end)

  it("with an unknown subcategory names the file and the subcategories", function()
    local e = load_error(variant('category = "activation"', 'category = "convolution", subcategory = "transposed 2d"'))
    assert.matches("p%.lua: problem 't': field 'subcategory': unknown convolution subcategory 'transposed 2d' %(did you mean 'transposed 2D'%?%)", e)
    assert.matches("%(one of: standard 1D, standard 2D, standard 3D, transposed 1D, transposed 2D, transposed 3D, depthwise 2D, separable 2D, pointwise 2D%)", e)
    assert.matches("p%.lua: problem 't': field 'subcategory': category 'activation' has no subcategories",
      load_error(variant('category = "activation"', 'category = "activation", subcategory = "relu"')))
  end)

  it("of a convolution without a subcategory names the file and the subcategories", function()
    assert.matches("p%.lua: problem 't': missing field 'subcategory': a convolution problem says which kind it is %(one of: standard 1D, .*, pointwise 2D%)",
      load_error(variant('category = "activation"', 'category = "convolution"')))
    assert.is_true(problem.load(variant('category = "activation"', 'category = "convolution", subcategory = "depthwise 2D"')).subcategory == "depthwise 2D")
  end)

  it("with a misspelt field suggests the right one", function()
    assert.matches("unknown field 'refrence' %(did you mean 'reference'%?%)",
      load_error(variant("reference =", "refrence =")))
  end)

  it("with an unknown dtype, distribution or domain names the argument", function()
    assert.matches("input 'x': unknown dtype 'f8'", load_error(variant('kreach.input%("x", { "n" }%)', 'kreach.input("x", { "n" }, { dtype = "f8" })')))
    assert.matches("input 'x': dist: unknown distribution 'gauss' %(known: bags, bool, jagged, normal, randint, sign, uniform, unique, zipf%)",
      load_error(variant('kreach.input%("x", { "n" }%)', 'kreach.input("x", { "n" }, { dist = "gauss" })')))
    assert.matches("unknown transform 'sorted'", load_error(variant('kreach.input%("x", { "n" }%)', 'kreach.input("x", { "n" }, { dist = "uniform | sorted" })')))
    assert.matches("unknown domain 'reals' %(did you mean 'real'%?%)", load_error(variant('kreach.input%("x", { "n" }%)', 'kreach.input("x", { "n" }, { domain = "reals" })')))
    assert.matches("input 'x': unknown option 'dsit' %(did you mean 'dist'%?%)", load_error(variant('kreach.input%("x", { "n" }%)', 'kreach.input("x", { "n" }, { dsit = "uniform" })')))
  end)

  it("with rows (Zipf or the domain 'rows') that are not i64 indices of a table names the argument", function()
    local function with(opts) return load_error(variant('kreach.input%("x", { "n" }%)', 'kreach.input("x", { "n" }, ' .. opts .. ')')) end
    assert.matches("input 'x': zipf draws rows as i64; the dtype is f32", with('{ dtype = "f32", dist = "zipf(100, 1.1)" }'))
    assert.matches("input 'x': dist: distribution 'zipf%(100.5, 1.1%)' needs a whole number of rows >= 1 and alpha > 0",
      with('{ dtype = "i64", dist = "zipf(100.5, 1.1)" }'))
    assert.matches("zipf needs %(rows, alpha%)", with('{ dtype = "i64", dist = "zipf" }'))
    assert.matches("input 'x': the domain 'rows' is of i64 indices; the dtype is the problem's", with('{ domain = "rows" }'))
    assert.matches("input 'x': the domain 'rows' needs the distribution randint%(0, rows%) or zipf%(rows, alpha%), not 'randint%(1, 9%)'",
      with('{ dtype = "i64", dist = "randint(1, 9)", domain = "rows" }'))
  end)

  it("draws CSR bags whose lengths are the multiset lo..hi in turn, shuffled, of a fixed total", function()
    for _, c in ipairs({ { 2048, 1, 100 }, { 8192, 12, 27 }, { 7, 0, 3 }, { 1, 5, 5 }, { 0, 1, 9 } }) do
      local n, lo, hi = c[1], c[2], c[3]
      local a, b = problem.bag_offsets(n, lo, hi, 1), problem.bag_offsets(n, lo, hi, 2)
      assert.equals(n + 1, #a)
      assert.equals(0, a[1])
      assert.equals(problem.bags_total(n, lo, hi), a[n + 1])
      assert.equals(a[n + 1], b[n + 1])
      local la, want = {}, {}
      for i = 1, n do
        la[i] = a[i + 1] - a[i]
        want[i] = lo + (i - 1) % (hi - lo + 1)
      end
      table.sort(la)
      table.sort(want)
      assert.same(want, la)
      if n > 100 then
        local same = true
        for i = 1, n + 1 do same = same and a[i] == b[i] end
        assert.is_false(same, "two seeds gave the same bags")
      end
    end
    assert.equals(102176, problem.bags_total(2048, 1, 100))
    local function with(opts) return load_error(variant('kreach.input%("x", { "n" }%)', 'kreach.input("x", { "n" }, ' .. opts .. ')')) end
    assert.matches("bags draws offsets as i64", with('{ dist = "bags(1, 10)" }'))
    assert.matches("distribution 'bags%(5, 2%)' needs whole lengths 0 <= lo <= hi", with('{ dtype = "i64", dist = "bags(5, 2)" }'))
    assert.matches("bags needs %(lo, hi%)", with('{ dtype = "i64", dist = "bags" }'))
    assert.matches("unique%(5%) cannot draw 8 distinct rows", with('{ dtype = "i64", dist = "unique(5)" }'))
    assert.matches("jagged with 2 mean lengths draws an %[2, bags%] tensor, not 8", with('{ dtype = "i64", dist = "jagged(1, 3)" }'))
    assert.matches("distribution 'jagged%(1, %-3%)' needs whole mean lengths >= 0", with('{ dtype = "i64", dist = "jagged(1, -3)" }'))
    -- keyed jagged lengths: each row the multiset 0..2 h in turn, a fixed total
    local hs = { 3, 0, 100 }
    local L = problem.jagged_lengths(50, hs, 7)
    local total = 0
    for t, h in ipairs(hs) do
      local row, want = {}, {}
      for b = 1, 50 do row[b] = L[(t - 1) * 50 + b]; want[b] = (b - 1) % (2 * h + 1); total = total + row[b] end
      table.sort(row)
      table.sort(want)
      assert.same(want, row)
    end
    assert.equals(problem.jagged_total(50, hs), total)
    -- a host distribution is a table made by host_dist, checked when made
    assert.has_error(function() problem.host_dist{ text = "x" } end)
    assert.has_error(function() problem.host_dist{ text = "x", draw = function() end, python = 3 } end)
    assert.matches("unique draws rows as i64", with('{ dist = "unique(50)" }'))
  end)

  it("draws the other trials' rows from Zipf-like laws (randint(0, n) in the domain 'rows')", function()
    local d = problem.parse_dist("randint(0, 1000)")
    local g1, a1 = problem.other_generator("rows", "centred", 1, 1, d)
    local g2, a2 = problem.other_generator("rows", "shifted", 1, 1, d)
    assert.equals("zipf", g1)
    assert.equals("zipf", g2)
    assert.equals(1000, a1[1])
    assert.is_true(a1[2] >= 1.05 and a1[2] < 1.1)
    assert.is_true(a2[2] >= 1.15 and a2[2] < 1.2)
    assert.is_nil((problem.other_generator("indices", "shifted", 1, 1, d)))
  end)

  it("with a shape naming an unknown size names it", function()
    assert.matches("output 'y': shape entry 1 names the size 'm', which is not in sizes",
      load_error(variant('kreach.output%("y", { "n" }%)', 'kreach.output("y", { "m" })')))
  end)

  it("whose output shape disagrees with what the reference writes fails validation", function()
    local p = problem.load(variant('kreach.output%("y", { "n" }%)', 'kreach.output("y", { "n", 2 })'))
    local ok, err = pcall(p.instantiate(p).validate, p:instantiate())
    assert.is_false(ok)
    assert.matches("problem 't': reference: .*relu: y is {8, 2} but x is {8}", tostring(err))
  end)

  it("whose reference does not write an output fails validation", function()
    local p = problem.load(variant("ops.relu%(x, y%)", "local _ = x"))
    local ok, err = pcall(function() return p:instantiate():validate() end)
    assert.matches("does not write output 'y'", tostring(err))
  end)

  it("whose reference writes an input fails validation", function()
    local p = problem.load(variant("ops.relu%(x, y%)", "ops.relu(x, y); ops.relu(y, x)"))
    local ok, err = pcall(function() return p:instantiate():validate() end)
    assert.matches("writes input 'x', which it must only read", tostring(err))
  end)

  it("that assigns a global is refused", function()
    assert.matches("assignment to undeclared global 'oops'", load_error(variant("local kreach", "oops = 1\nlocal kreach")))
  end)

  it("that returns something else says so", function()
    assert.matches("must return kreach.problem", load_error(write(dir, "q.lua", "return 42\n")))
  end)
end)
