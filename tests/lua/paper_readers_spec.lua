-- experiments/paper/run.lua's readers of the profiling experiments' JSON: a data folder with
-- the fixtures tests/data/scale/fixture-scale.json and fixture-addressable.json (made-up numbers;
-- not study data) beside the stored examples' evaluation (experiments/paper/data, whose
-- verified speedup against PyTorch gives the bound) makes scale-sweep.* and
-- addressable-fraction.* with the numbers computed here by hand; without them the tables say
-- "no data"; a broken file stops the pipeline naming it.
local support = require "support"
local lfs = require "lfs"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."
local KREACH = require("kreach").executable()
local PIPELINE = root .. "/experiments/paper/run.lua"
local FIX = root .. "/tests/data/scale"

local function copy(from, to) support.spit(to, support.slurp(from)) end

-- a data folder: the stored evaluations (and sources.tsv), and the named fixtures
local function data_dir(fixtures)
  local d = support.tmpdir()
  for f in lfs.dir(root .. "/experiments/paper/data") do
    if f:match("%.jsonl$") or f == "sources.tsv" then copy(root .. "/experiments/paper/data/" .. f, d .. "/" .. f) end
  end
  for name, text in pairs(fixtures) do support.spit(d .. "/" .. name, text) end
  return d
end

local function pipeline(data)
  local out = support.tmpdir()
  local text, rc = support.sh(("%q %q --data %q --out %q"):format(KREACH, PIPELINE, data, out))
  return text, rc, out
end

-- the CSV's lines as lists of fields (RFC 4180 quotes; no line breaks inside a field here)
local function csv_rows(text)
  local rows = {}
  for line in text:gmatch("[^\n]+") do
    if not line:match("^#") then
      local f, i = {}, 1
      while i <= #line + 1 do
        if line:sub(i, i) == '"' then
          local j, val = i + 1, {}
          while true do
            local q = assert(line:find('"', j, true), "unterminated quote: " .. line)
            val[#val + 1] = line:sub(j, q - 1)
            if line:sub(q + 1, q + 1) == '"' then val[#val + 1] = '"'; j = q + 2 else i = q + 2; break end
          end
          f[#f + 1] = table.concat(val)
        else
          local c = line:find(",", i, true) or (#line + 1)
          f[#f + 1] = line:sub(i, c - 1)
          i = c + 1
        end
      end
      rows[#rows + 1] = f
    end
  end
  return rows
end

local function close(want, got, tol, what)
  got = tonumber(got)
  assert.is_number(got, what)
  assert.is_true(math.abs(got - want) <= (tol or 1e-9) * math.max(1, math.abs(want)),
    ("%s: expected %.17g, got %.17g"):format(what or "value", want, got))
end

describe("experiments/paper/run.lua's scale and addressable readers", function()
  local data = data_dir({
    ["fixture-scale.json"] = support.slurp(FIX .. "/fixture-scale.json"),
    ["fixture-addressable.json"] = support.slurp(FIX .. "/fixture-addressable.json"),
  })
  local text, rc, out = pipeline(data)

  it("makes the model-scale sweep's table from *-scale.json", function()
    assert.equals(0, rc, text)
    local md = support.slurp(out .. "/scale-sweep.md")
    assert.truthy(md:find("| GPT-2 | infer | 4 | -2.90 | [-4.04, -1.76] | -2.60 | [-3.21, -1.99] | holds |", 1, true), md)
    assert.truthy(md:find("| GPT-2 | train | 4 | +11.00 | [-11.36, +33.36] |", 1, true), md)
    assert.truthy(md:find("Source: `.-/fixture%-scale%.json`%."), md)
    local rows = csv_rows(support.slurp(out .. "/scale-sweep.csv"))
    assert.equals("source", rows[1][1])
    assert.equals(13, #rows) -- the header and 12 runs
    local r = rows[2]
    assert.same({ "fixture-scale.json", "gpt2", "infer", "small" }, { r[1], r[2], r[3], r[4] })
    -- slope -0.029, interval -0.029 -/+ 4.302653 * sqrt(7e-6) (tests/lua/scale_fit_spec.lua)
    local col = {}
    for i, h in ipairs(rows[1]) do col[h] = i end
    close(-0.029, r[col.slope_gpu], 1e-9, "slope")
    close(-0.029 - 4.30265272974946 * math.sqrt(7e-6), r[col.lo_gpu], 1e-5, "lo")
    assert.equals("holds", r[col.verdict])
  end)

  it("makes the addressable fraction's table from *-addressable.json, with the Amdahl bound", function()
    assert.equals(0, rc, text)
    local md = support.slurp(out .. "/addressable-fraction.md")
    assert.truthy(md:find("| fixture-train | fixture device | 95.0% | 60.0% | 30.0% | 25.0% | 10.0% | 870 | vectorized_elementwise_kernel<4, add> (elementwise, 12.0%) |", 1, true), md)
    assert.truthy(md:find("| fixture-broken | fixture device | - | - | - | - | - | - | failed: the profile failed: the program exited with status 1: boom |", 1, true), md)
    -- s: the stored examples' verified median against PyTorch, as models.csv has it
    local mrows = csv_rows(support.slurp(out .. "/models.csv"))
    local mcol = {}
    for i, h in ipairs(mrows[1]) do mcol[h] = i end
    local s = tonumber(mrows[2][mcol.verified_median_vs_pytorch])
    assert.is_number(s)
    assert.is_true(s > 1)
    -- the bound's rows follow a blank line in the CSV
    local csv = support.slurp(out .. "/addressable-fraction.csv")
    local second = csv:match("\n\n(.*)$")
    assert.truthy(second, csv)
    local brows = csv_rows(second)
    local bcol = {}
    for i, h in ipairs(brows[1]) do bcol[h] = i end
    local seen = {}
    for k = 2, #brows do
      local b = brows[k]
      local a = b[bcol.workload] == "fixture-train" and { 0.3, 0.25 } or { 0.2, 0.1 }
      close(s, b[bcol.verified_median_vs_pytorch], 1e-12, "s")
      close(1 / (1 - a[1] + a[1] / s), b[bcol.bound_gpu], 1e-12, "bound on GPU time")
      close(1 / (1 - a[2] + a[2] / s), b[bcol.bound_wall], 1e-12, "bound on wall time")
      seen[b[bcol.workload]] = true
    end
    assert.same({ ["fixture-train"] = true, ["fixture-infer"] = true }, seen)
    assert.truthy(md:find("bound = 1 / (1 - a + a / s)", 1, true), md)
  end)

  it("names every source in the tables' index", function()
    local readme = support.slurp(out .. "/README.md")
    assert.truthy(readme:find("fixture%-scale%.json"), readme)
    assert.truthy(readme:find("fixture%-addressable%.json"), readme)
  end)

  it("says no data without those files", function()
    local t2, rc2, out2 = pipeline(data_dir({}))
    assert.equals(0, rc2, t2)
    assert.truthy(support.slurp(out2 .. "/scale-sweep.md"):find("no data: needs `kreach experiments/scale/run.lua", 1, true))
    assert.truthy(support.slurp(out2 .. "/addressable-fraction.md"):find("no data: needs `kreach experiments/addressable_fraction.lua", 1, true))
  end)

  it("stops at a broken file, naming it", function()
    local t3, rc3 = pipeline(data_dir({ ["bad-scale.json"] = "{ oops" }))
    assert.equals(3, rc3, t3)
    assert.truthy(t3:find("bad%-scale%.json: not JSON"), t3)
    local t4, rc4 = pipeline(data_dir({ ["bad-addressable.json"] = '{"rows": [{"name": "w", "busy": 1}]}' }))
    assert.equals(3, rc4, t4)
    assert.truthy(t4:find("bad-addressable.json: row 1 (w): no number for vendor_gpu", 1, true), t4)
  end)

  it("says no data without DLRM or trivial-scan files, and stops at a broken one, naming it and the entry", function()
    local t0, rc0, out0 = pipeline(data_dir({}))
    assert.equals(0, rc0, t0)
    for _, name in ipairs({ "dlrm-projection", "dlrm-measured", "trivial-scan" }) do
      assert.truthy(support.slurp(out0 .. "/" .. name .. ".md"):find("\nno data: needs `kreach ", 1, true), name)
      assert.equals("# no data\n", support.slurp(out0 .. "/" .. name .. ".csv"), name)
    end
    local cases = {
      { "x-dlrm-project.json", "[1, 2]", "x-dlrm-project.json: not experiments/dlrm/project.lua's --json (no \"projections\")" },
      { "x-dlrm-project.json", '{"projections": [{"steps": 10, "gpu_ms_per_step": 1, "wall_ms_per_step": 2, "gpu": {"claimed": 0.5}}]}',
        "x-dlrm-project.json: projections[1].gpu: no number for share" },
      { "x-dlrm-measure.json", '{"results": [{"step_ms": 1, "step_ci": [1, 2], "subs": [{"problem": 1, "measured": 1.1}]}]}',
        "x-dlrm-measure.json: results[1].subs[1]: no number for op_speedup" },
      { "x-dlrm-measure.json", '{"results": [{"step_ms": 1, "step_ci": [1, 2], "subs": [{"problem": 7}]}]}',
        "x-dlrm-measure.json: results[1].subs[1]: neither measured nor a skip reason" },
      { "x-trivial-f32.json", "{ oops", "x-trivial-f32.json: not JSON" },
      { "x-trivial-f32.json", '{"kernelbench_tol": 0.0001, "problems": [], "passes": {"zeros": {"kb": ["23"]}}}',
        "x-trivial-f32.json: passes.zeros.kb[1] is not a problem id" },
    }
    for _, case in ipairs(cases) do
      local t, rc = pipeline(data_dir({ [case[1]] = case[2] }))
      assert.equals(3, rc, t)
      assert.truthy(t:find(case[3], 1, true), t)
    end
  end)
end)
