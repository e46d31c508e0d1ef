-- --shard i/N (kreach.run.plan's shards, docs/cluster.md): the option's values, each unit's shard
-- pinned (a resubmitted campaign's shards never move between kreach versions), N shards covering
-- every unit exactly once (random keys, seed printed), units added moving no other, kreach eval's
-- pairs keyed by the candidate's contents; then kreach eval's shards through
-- kreach.run.evaluate.run without a GPU (the stand-in device and evaluation of
-- store_resume_spec.lua): each shard into its own database, one killed mid-run and run again
-- with the same line (--resume: begun when nothing was interrupted, continued when it was), and
-- the merge holding every pair exactly once; and the merge of kreach generate's shards.
local campaign = require "kreach.run.campaign"
local ev = require "kreach.run.evaluate"
local evaluation = require "kreach.results.evaluation"
local merge = require "kreach.results.merge"
local plan = require "kreach.run.plan"
local store = require "kreach.results.store"
local verdict = require "kreach.verdict"
local support = require "support"

describe("--shard i/N", function()
  it("takes i/N with 1 <= i <= N, and refuses anything else, saying what it takes", function()
    assert.same({ index = 1, count = 1 }, plan.parse_shard("1/1"))
    assert.same({ index = 3, count = 8 }, plan.parse_shard("3/8"))
    assert.equals("3/8", plan.shard_text(plan.parse_shard("3/8")))
    for _, bad in ipairs{ "0/3", "4/3", "1/0", "-1/3", "1", "a/b", "1/3/5", " 1/3", "1.5/3", "" } do
      local s, why = plan.parse_shard(bad)
      assert.is_nil(s, bad)
      assert.equals(("--shard takes i/N with 1 <= i <= N (shard i of N, counted from 1), not '%s'"):format(bad), why)
    end
  end)

  it("puts a unit in the shard its key's hash names, the same in every version", function()
    -- pinned: 1 + (the first 12 hex digits of XXH3-128(key)) mod N
    assert.equals(2, plan.shard_of("a", 3))
    assert.equals(3, plan.shard_of("b", 3))
    assert.equals(1, plan.shard_of("anything", 1))
    local key = plan.sample_key("19_ReLU", 2)
    assert.equals("sample\0" .. "19_ReLU\0" .. "2", key)
    assert.equals(math.tointeger(tonumber(campaign.hash(key):sub(1, 12), 16) % 7) + 1, plan.shard_of(key, 7))
  end)

  it("covers every unit exactly once with N shards, and a unit added moves no other", function()
    local seed = support.seed("shard cover")
    local rng = support.rng(seed)
    for _ = 1, 20 do
      local n = rng(9)
      local units = {}
      for i = 1, rng(61) - 1 do units[i] = { key = ("unit-%d-%d"):format(i, rng(1000000)) } end
      local key_of = function(u) return u.key end
      local seen, total = {}, 0
      for i = 1, n do
        local part = plan.select_shard(units, { index = i, count = n }, key_of)
        local last = 0
        for _, u in ipairs(part) do
          assert.is_nil(seen[u], ("%s in two shards (seed %d)"):format(u.key, seed))
          seen[u] = i
          -- in the units' order
          local pos
          for j, v in ipairs(units) do if v == u then pos = j end end
          assert.is_true(pos > last)
          last = pos
        end
        total = total + #part
      end
      assert.equals(#units, total, ("seed %d"):format(seed))
      -- more units: the old ones stay in their shards
      local more = {}
      for i, u in ipairs(units) do more[i] = u end
      for i = 1, 10 do more[#more + 1] = { key = ("added-%d-%d"):format(i, rng(1000000)) } end
      for i = 1, n do
        for _, u in ipairs(plan.select_shard(more, { index = i, count = n }, key_of)) do
          if seen[u] then assert.equals(seen[u], i, ("%s moved (seed %d)"):format(u.key, seed)) end
        end
      end
    end
    -- no shard: everything
    local all = { 1, 2, 3 }
    assert.equals(all, plan.select_shard(all, nil, tostring))
  end)

  it("keys kreach eval's pairs by the problem and the candidate's contents, not its name", function()
    local d = support.tmpdir()
    support.spit(d .. "/019_a.lua", "-- a\nreturn {}\n")
    support.spit(d .. "/019_copy_of_a.lua", "-- a\nreturn {}\n")
    support.spit(d .. "/019_b.lua", "-- b\nreturn {}\n")
    local items = plan.plan("19", { d })
    assert.equals(3, #items)
    local k = {}
    for _, it in ipairs(items) do k[it.label] = plan.pair_key(it) end
    assert.equals(k["019_a.lua"], k["019_copy_of_a.lua"])
    assert.are_not.equal(k["019_a.lua"], k["019_b.lua"])
    assert.equals("pair\0" .. "19_ReLU\0" .. campaign.hash("-- a\nreturn {}\n"), k["019_a.lua"])
    -- a file that cannot be a candidate: by its path
    local it = { problem_name = "19_ReLU", candidate_path = d .. "/gone.lua", invalid = "No such file or directory" }
    assert.equals("pair\0" .. "19_ReLU\0" .. "path " .. d .. "/gone.lua", plan.pair_key(it))
  end)

  it("takes kreach bench's problems by name", function()
    local all = plan.baselines("dlrm-bench")
    local n = 0
    for i = 1, 3 do
      for _, b in ipairs(plan.select_shard(all, { index = i, count = 3 }, function(x) return plan.problem_key(x.problem_name) end)) do
        assert.equals(i, plan.shard_of("problem\0" .. b.problem_name, 3))
        n = n + 1
      end
    end
    assert.equals(#all, n)
  end)
end)

describe("kreach eval --shard", function()
  local restore, dir, problem_path, cands, evaluated, die_at
  local SINK = { write = function() end, flush = function() end }

  before_each(function()
    restore = support.stand_in_gpu("GPU-0000-shard", function(item, o)
      local name = item.candidate_path:match("([^/]+)%.lua$")
      if name == die_at then error("killed while evaluating " .. name, 0) end
      evaluated[#evaluated + 1] = name
      return evaluation.finish(evaluation.new(item, o), { verdict = verdict.new("correct"), wall_s = 0 })
    end)
    dir = support.tmpdir()
    problem_path = dir .. "/019_ReLU.lua"
    support.spit(problem_path, support.slurp("problems/kernelbench/level1/019_ReLU.lua"))
    cands = {}
    for i = 1, 12 do
      cands[i] = ("%s/c%02d.lua"):format(dir, i)
      support.spit(cands[i], ("-- candidate %d\nreturn {}\n"):format(i))
    end
  end)
  after_each(function()
    restore()
  end)

  -- a task's line: shard i of n into its own database, with --resume (as kreach slurm runs it)
  local function task(i, n, o)
    o = o or {}
    evaluated, die_at = {}, o.die_at
    local lines = {}
    local ok, res = pcall(ev.run, { target = problem_path, candidates = cands, dtype = "f32", db = ("%s/shard-%d.db"):format(dir, i),
                                    resume = true, shard = { index = i, count = n }, command = { "kreach", "eval" },
                                    log = function(l) lines[#lines + 1] = l end, out = SINK })
    if not ok then return nil, res, evaluated, lines end
    return res, nil, evaluated, lines
  end

  it("runs each shard into its own database; one killed mid-run loses nothing when run again; the merge holds every pair once", function()
    local n = 3
    local sizes, victim = {}, nil
    for i = 1, n do
      local res, err, done, lines = task(i, n, { die_at = nil })
      assert.is_nil(err)
      sizes[i] = #done
      -- the first run of the line begins the run: there was nothing to resume
      assert.matches(("shard %d/%d: %d of the 12 pairs"):format(i, n, #done), table.concat(lines, "\n"))
      assert.matches("no interrupted run of this shard in .*: beginning it", table.concat(lines, "\n"))
      assert.equals(#done, #res.records)
      if #done >= 2 and not victim then victim = i end
    end
    assert.equals(12, sizes[1] + sizes[2] + sizes[3])
    assert.is_not_nil(victim, "no shard of 2 pairs or more")
    -- the victim again, in a fresh database, killed at its second pair, then run again
    os.remove(("%s/shard-%d.db"):format(dir, victim))
    local first = task(victim, n)
    local order = {}
    for _, r in ipairs(first.records) do order[#order + 1] = r.candidate_path:match("([^/]+)%.lua$") end
    os.remove(("%s/shard-%d.db"):format(dir, victim))
    for _, s in ipairs{ "-wal", "-shm" } do os.remove(("%s/shard-%d.db%s"):format(dir, victim, s)) end
    local res, err, done = task(victim, n, { die_at = order[2] })
    assert.is_nil(res)
    assert.equals("killed while evaluating " .. order[2], err)
    assert.same({ order[1] }, done)
    local res2, err2, done2, lines2 = task(victim, n)
    assert.is_nil(err2)
    assert.matches("resuming run 1 of", table.concat(lines2, "\n"))
    -- only what was not stored: the one in flight and the rest
    local rest = {}
    for i = 2, #order do rest[#rest + 1] = order[i] end
    assert.same(rest, done2)
    assert.is_true(res2.records[1].reused)
    -- the merge: every pair exactly once
    local inputs = {}
    for i = 1, n do inputs[i] = ("%s/shard-%d.db"):format(dir, i) end
    local m = merge.merge(inputs, dir .. "/merged.db")
    assert.equals(12, m.evaluations)
    assert.equals(0, m.duplicates)
    local db = assert(store.open(dir .. "/merged.db"))
    local count = {}
    for _, e in ipairs(db:evaluations()) do count[e.candidate_hash] = (count[e.candidate_hash] or 0) + 1 end
    local runs = db:runs()
    db:close()
    local distinct = 0
    for h, c in pairs(count) do
      assert.equals(1, c, h)
      distinct = distinct + 1
    end
    assert.equals(12, distinct)
    assert.equals(n, #runs)
    for _, r in ipairs(runs) do assert.equals("finished", r.status) end
  end)

  it("says so and touches no database when the shard holds none of the pairs", function()
    cands = { cands[1] }
    local n, empty = 4, nil
    for i = 1, n do
      if plan.shard_of(plan.pair_key{ problem_name = "19_ReLU", candidate_path = cands[1] }, n) ~= i then empty = i end
    end
    local res = task(empty, n)
    assert.is_true(res.nothing)
    assert.is_true(res.shard_empty)
    assert.is_nil(io.open(("%s/shard-%d.db"):format(dir, empty)))
  end)
end)

describe("kreach results merge of kreach generate's shards", function()
  it("keeps every generation once and counts them", function()
    local d = support.tmpdir()
    local function shard(path, keys)
      local db = assert(store.open(path))
      for _, k in ipairs(keys) do
        db:save_generation{ key = k, prompt = "p " .. k, status = "ok", problem_name = "19_ReLU", sample = #k, turn = 1 }
      end
      db:close()
    end
    shard(d .. "/a.db", { "k1", "k22" })
    shard(d .. "/b.db", { "k333", "k1" }) -- k1 again: a shard run twice by hand
    local res = merge.merge({ d .. "/a.db", d .. "/b.db" }, d .. "/m.db")
    assert.equals(3, res.generations)
    assert.equals(2, res.inputs[1].generations)
    assert.equals(1, res.inputs[2].generations)
    assert.equals(1, res.inputs[2].generations_shared)
    local out = {}
    merge.report(res, "m.db", function(s) out[#out + 1] = s end)
    assert.equals(d .. "/a.db: 0 runs, 0 evaluations (0 already in an earlier input, left out), 2 generations\n", out[1])
    assert.equals(d .. "/b.db: 0 runs, 0 evaluations (0 already in an earlier input, left out), 1 generation (1 already in an earlier input)\n", out[2])
    assert.equals("merged 2 databases into m.db: 0 runs, 0 evaluations, 0 duplicates left out, 3 generations\n", out[3])
    local db = assert(store.open(d .. "/m.db"))
    local keys = {}
    for _, g in ipairs(db:generations()) do keys[#keys + 1] = g.key end
    db:close()
    table.sort(keys)
    assert.same({ "k1", "k22", "k333" }, keys)
  end)
end)
