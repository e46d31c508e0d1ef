-- experiments/torch_values.lua (the values check's table, issue 20) on what kreach oracle --torch
-- --json really prints: two problems run on the host device (KREACH_DEVICE=host, set by ctest
-- for host_ specs) against Debian's CPU PyTorch, at small sizes. Needs python3-torch
-- (/usr/bin/python3; KREACH_PYTHON names another).
local support = require "support"
local cjson = require "cjson"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."
local KREACH = require("kreach").executable()
local q = require("kreach.text").shell_quote

describe("experiments/torch_values.lua", function()
  local PYTHON = support.host_python_or_fail(it)
  if not PYTHON then return end
  local tmpdir, cleanup = support.tmpdirs()
  teardown(cleanup)
  local dir, lines

  setup(function()
    dir = tmpdir()
    local out, rc = support.sh(("cd %s && KREACH_PYTHON=%s %s oracle kernelbench-l1/23 --torch --json --size batch_size=3 --size dim=40 > %s/a.jsonl && KREACH_PYTHON=%s %s oracle dlrm-bench/12 --torch --json --size batch_size=16 >> %s/a.jsonl")
      :format(q(root), q(PYTHON), q(KREACH), q(dir), q(PYTHON), q(KREACH), q(dir)))
    assert(rc == 0, out)
    lines = support.slurp(dir .. "/a.jsonl")
  end)

  it("gives each problem its worst errors, and the file's worst with the problem", function()
    local out, rc = support.sh(("%s %s/experiments/torch_values.lua %s/a.jsonl --json"):format(q(KREACH), q(root), q(dir)))
    assert.are.equal(0, rc, out)
    local t = cjson.decode(out)
    assert.are.equal(2, #t.rows)
    local softmax, ids = t.rows[1], t.rows[2]
    assert.are.equal("23_Softmax", softmax.problem)
    assert.are.equal("f32", softmax.dtype)
    -- the table's figures are the worst over the line's outputs, as the oracle printed them
    local first = cjson.decode(lines:match("^[^\n]+"))
    assert.are.equal(first.outputs[1].baseline.rel_l2, softmax.baseline.rel_l2)
    assert.are.equal(first.outputs[1].oracle.max_scaled, softmax.oracle.max_scaled)
    assert.is_true(softmax.baseline.rel_l2 > 0 and softmax.baseline.rel_l2 < 1e-6)
    assert.is_true(softmax.oracle.rel_l2 < 1e-12)
    -- problem 12's outputs are integers: exact, no L2
    assert.is_truthy(ids.problem:match("^12_"))
    assert.are.equal(0, ids.baseline.mismatches)
    assert.are.equal(cjson.null, ids.baseline.rel_l2 or cjson.null)
    assert.are.equal(1, #t.files)
    assert.are.equal(2, t.files[1].problems)
    assert.are.equal(0, #t.files[1].outside)
    assert.are.equal("23_Softmax", t.files[1].baseline.rel_l2.problem)
  end)

  it("prints the markdown table", function()
    local out, rc = support.sh(("%s %s/experiments/torch_values.lua %s/a.jsonl"):format(q(KREACH), q(root), q(dir)))
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("| 23_Softmax | f32 | default | %d%.%d%de%-0%d / %d%.%d%de%-0%d | "))
    assert.is_truthy(out:find("| integers exact | integers exact | yes |", 1, true))
    assert.is_truthy(out:find("2 problems; worst baseline rel L2 ", 1, true))
    assert.is_truthy(out:find("all within", 1, true))
  end)

  it("names the interpreter when the python3 it is given has no PyTorch", function()
    -- Debian's python3 without its site directories: no torch to import
    local py = dir .. "/python-without-torch"
    support.spit(py, ("#!/bin/sh\nexec %s -S \"$@\"\n"):format(q(PYTHON)))
    assert(os.execute("chmod +x " .. q(py)))
    local out, rc = support.sh(("cd %s && KREACH_PYTHON=%s %s oracle kernelbench-l1/19 --torch --small 2>&1")
      :format(q(root), q(py), q(KREACH)))
    assert.are.equal(1, rc, out)
    assert.is_truthy(out:find("has no PyTorch (No module named 'torch'): name a python3 that has it with KREACH_PYTHON", 1, true), out)
  end)

  -- table_of(name, text) -> what torch_values.lua prints for a file of that text, and its status
  local function table_of(name, text)
    support.spit(dir .. "/" .. name, text)
    return support.sh(("%s %s/experiments/torch_values.lua %s/%s"):format(q(KREACH), q(root), q(dir), name))
  end

  it("names a problem outside its thresholds, and refuses a line that is not JSON", function()
    local bad = lines:gsub('"within":true', '"within":false,"why":"planted"', 1)
    local out, rc = table_of("b.jsonl", bad .. "Segmentation fault\n")
    assert.are_not.equal(0, rc)
    -- one line a problem (kreach oracle --torch --json prints one object for one problem), then the bad one
    assert.is_truthy(out:find("b.jsonl:3: not a JSON object", 1, true), out)
    out, rc = table_of("c.jsonl", bad)
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("**no**: planted", 1, true), out)
    assert.is_truthy(out:find("not within: 23_Softmax (planted)", 1, true), out)
    -- a reason with a traceback and pipes stays on its row: its first line, pipes escaped
    out, rc = table_of("d.jsonl", (lines:gsub('"within":true',
      '"within":false,"why":"OutOfMemoryError: 51 | GiB\\nTraceback (most recent call last):\\n  File x"', 1)))
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("**no**: OutOfMemoryError: 51 \\| GiB |\n", 1, true), out)
    assert.is_falsy(out:find("Traceback", 1, true), out)
    -- terminal escapes in a reason or a name from the file are shown, not obeyed
    out, rc = table_of("f.jsonl", (lines:gsub('"within":true', '"within":false,"why":"\\u001b[2Kok"', 1)
      :gsub('"problem":"23_Softmax"', '"problem":"23_\\u001b[1ASoftmax"', 1)))
    assert.are.equal(0, rc, out)
    assert.is_falsy(out:find("\27", 1, true), out)
    assert.is_truthy(out:find("| 23_\\x1b[1ASoftmax |", 1, true), out)
    assert.is_truthy(out:find("**no**: \\x1b[2Kok", 1, true), out)
    -- where the oracle was held to PyTorch's known error, the row says so
    out, rc = table_of("e.jsonl", (lines:gsub('"within":true',
      '"within":true,"oracle_tolerance":{"rel_l2":3.1e-08,"max_scaled":3.1e-08,"why":"float 1/6"}', 1)))
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("| yes (the oracle held to 3.1e-08: float 1/6) |", 1, true), out)
  end)
end)
