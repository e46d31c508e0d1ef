-- kreach.results.store: the results database. Creation and WAL mode; the files it refuses (not SQLite,
-- foreign, newer or older schema, corrupt) left exactly as they were; runs, problems,
-- candidates, evaluations committed one transaction each; calibrations; profiles with
-- thousands of kernels; JSON columns that keep NaN, infinities and integers.
local store = require "kreach.results.store"
local sqlite = require "kreach.core.sqlite"
local lfs = require "lfs"
local json = store.json
local support = require "support"

local tmpdir, rm_tmpdirs = support.tmpdirs()

local slurp, spit = support.slurp, support.spit

-- The file's bytes and times, with its mtime set far in the past first, so that any write
-- (even within the same second) shows.
local function freeze(path)
  assert(lfs.touch(path, 1000000000, 1000000000))
  local a = lfs.attributes(path)
  return { bytes = slurp(path), modification = a.modification, size = a.size }
end

local function assert_untouched(path, snap)
  local a = lfs.attributes(path)
  assert.equals(snap.size, a.size)
  assert.equals(snap.modification, a.modification)
  assert.is_true(slurp(path) == snap.bytes, "the file's bytes changed")
  for _, side in ipairs{ "-wal", "-shm", "-journal" } do
    assert.is_nil(lfs.attributes(path .. side), "a " .. side .. " file appeared")
  end
end

local function count(db, tbl) return db.sql:query("SELECT count(*) AS n FROM " .. tbl)[1].n end

local PROBLEM = { suite = "kernelbench-level1", problem_id = 19, name = "19_ReLU", path = "problems/kernelbench/level1/019_relu.lua",
                  file_hash = "aaaa" }
local CANDIDATE = { hash = "c0ffee", path = "cands/relu.lua", name = "relu_v1", source = "return {}\n\0tail",
                    origin = { model = "m1", sample = 2 } }

local function evaluation(run_id, key, extra)
  local e = { run_id = run_id, problem = PROBLEM, candidate = CANDIDATE, eval_key = key, dtype = "f32",
              sizes = { batch_size = 16, dim = 16384 }, verdict = "correct",
              baseline_ms = 0.25, candidate_ms = 0.2, speedup = 1.25, speedup_lo = 1.2, speedup_hi = 1.3,
              sol_fraction = 0.8, throttled = false, check_result = { trials = 5, max_rel = 1e-7 },
              timing = { candidate = { summary = { n = 3, median = 0.2, mean = 0.2, min = 0.19, max = 0.21 },
                                       samples = { 0.19, 0.2, 0.21 } } },
              started_at = "2026-12-03T10:00:00Z", finished_at = "2026-12-03T10:00:01Z", wall_s = 1.5 }
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

describe("kreach.results.store", function()
  teardown(rm_tmpdirs)

  describe("json", function()
    it("round-trips numbers exactly, integers as integers", function()
      local v = { 0.1, 1 / 3, 2.0, -0.0, 1e300, 5e-324, math.maxinteger, math.mininteger, 0, 6400000000, 2.5e-7 }
      local back = json.decode(json.encode(v))
      for i, x in ipairs(v) do
        assert.equals(x, back[i])
        assert.equals(math.type(x), math.type(back[i]))
      end
      assert.equals("[0.1,2.0,3]", json.encode({ 0.1, 2.0, 3 }))
    end)

    it("writes NaN and infinities as Python does, and reads them back", function()
      local s = json.encode({ a = 0 / 0, b = math.huge, c = -math.huge })
      assert.equals('{"a":NaN,"b":Infinity,"c":-Infinity}', s)
      local t = json.decode(s)
      assert.is_true(t.a ~= t.a)
      assert.equals(math.huge, t.b)
      assert.equals(-math.huge, t.c)
    end)

    it("escapes strings, sorts keys, and reads what others write", function()
      local s = "q\"b\\s\n\t\0\1é"
      assert.equals(s, json.decode(json.encode(s)))
      assert.equals('{"a":1,"b":[true,false],"c":{}}', json.encode({ c = {}, b = { true, false }, a = 1 }))
      assert.same({ x = "é😀", y = { 1, nil, 3 } }, json.decode(' { "x" : "\\u00e9\\ud83d\\ude00", "y":[1,null,3], "z":null } '))
      assert.equals(1.5e10, json.decode("1.5E10"))
      assert.has_error(function() json.decode("[1,") end)
      assert.has_error(function() json.decode("{\"a\" 1}") end)
      assert.has_error(function() json.decode("[1] x") end)
      assert.has_error(function() json.encode({ f = print }) end)
      local cyc = {}
      cyc.self = cyc
      assert.has_error(function() json.encode(cyc) end)
    end)
  end)

  describe("opening", function()
    it("creates the schema in WAL mode and opens it again", function()
      local path = tmpdir() .. "/results.db"
      local db = assert(store.open(path))
      assert.equals(4, store.SCHEMA_VERSION)
      assert.equals("wal", db.sql:query("PRAGMA journal_mode")[1].journal_mode)
      assert.equals(2, db.sql:query("PRAGMA synchronous")[1].synchronous) -- FULL
      assert.equals(1, db.sql:query("PRAGMA foreign_keys")[1].foreign_keys)
      assert.equals("4", db.sql:query("SELECT value FROM kreach_meta WHERE key = 'schema_version'")[1].value)
      local names = {}
      for r in db.sql:rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") do names[#names + 1] = r.name end
      assert.same({ "calibrations", "candidates", "evaluations", "generations", "kreach_meta", "problems", "profile_kernels",
                    "profile_memops", "profile_ranges", "profiles", "runs" }, names)
      assert.equals(path, db.path)
      db:close()
      db = assert(store.open(path))
      db:close()
      local ro = assert(store.open(path, { readonly = true }))
      assert.has_error(function() ro:begin_run{ config_hash = "x" } end)
      ro:close()
    end)

    it("fills an empty file, and creates nothing when told not to", function()
      local d = tmpdir()
      spit(d .. "/empty.db", "")
      local db = assert(store.open(d .. "/empty.db"))
      assert.equals(0, count(db, "runs"))
      db:close()
      local none, err = store.open(d .. "/missing.db", { create = false })
      assert.is_nil(none)
      assert.equals(d .. "/missing.db: no such results database", err)
      assert.is_nil(lfs.attributes(d .. "/missing.db"))
      none, err = store.open(d .. "/missing.db", { readonly = true })
      assert.is_nil(none)
      assert.is_nil(lfs.attributes(d .. "/missing.db"))
      spit(d .. "/empty2.db", "")
      none, err = store.open(d .. "/empty2.db", { readonly = true })
      assert.is_nil(none)
      assert.matches("empty", err)
      assert.equals(0, lfs.attributes(d .. "/empty2.db").size)
      assert.has_error(function() store.open(d .. "/x.db", { creat = true }) end)
    end)

    it("refuses a file that is not SQLite, untouched", function()
      local path = tmpdir() .. "/hello.db"
      spit(path, "hello")
      local snap = freeze(path)
      local db, err = store.open(path)
      assert.is_nil(db)
      assert.equals(path .. ": not a kreach results database (file is not a database)", err)
      assert_untouched(path, snap)
      -- a longer file, and one that starts like SQLite's header but is not one
      spit(path, ("\0"):rep(8192))
      snap = freeze(path)
      assert.is_nil(store.open(path))
      assert_untouched(path, snap)
    end)

    it("refuses a foreign SQLite database, untouched, in either journal mode", function()
      for _, mode in ipairs{ "DELETE", "WAL" } do
        local path = tmpdir() .. "/foreign.db"
        local f = assert(sqlite.open(path))
        f:query("PRAGMA journal_mode=" .. mode)
        assert(f:script("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE orders(x);"
          .. "INSERT INTO users(name) VALUES ('ada')"))
        f:close()
        local snap = freeze(path)
        local db, err = store.open(path)
        assert.is_nil(db)
        assert.equals(path .. ": not a kreach results database (it has tables orders, users and no kreach_meta)", err)
        assert_untouched(path, snap)
        assert.is_nil(store.open(path, { readonly = true }))
        assert_untouched(path, snap)
      end
    end)

    it("refuses newer schema versions and ones no kreach wrote, untouched", function()
      for _, v in ipairs{ 5, 0 } do
        local path = tmpdir() .. "/results.db"
        assert(store.open(path)):close()
        local raw = assert(sqlite.open(path))
        assert.equals(1, raw:exec("UPDATE kreach_meta SET value = ? WHERE key = 'schema_version'", tostring(v)))
        raw:close()
        local snap = freeze(path)
        local db, err = store.open(path)
        assert.is_nil(db)
        if v == 5 then
          assert.equals(path .. ": the results database has schema version 5, newer than this kreach's (4): use a newer kreach", err)
        else
          assert.equals(path .. ": the results database has schema version 0, which no kreach wrote", err)
        end
        assert_untouched(path, snap)
      end
    end)

    it("migrates a version 1 database, keeping what it holds, and a reader reads it before", function()
      local path = tmpdir() .. "/results.db"
      local db = assert(store.open(path))
      local run = db:begin_run{ command = { "kreach", "eval" }, config_hash = "h", device = { name = "GPU" } }
      db:record_evaluation{ run_id = run, problem = { suite = "s", problem_id = 19, name = "19_ReLU", file_hash = "a" },
                            eval_key = "k", dtype = "f32", verdict = "baseline", baseline_ms = 0.5 }
      db:close()
      -- version 1: the evaluations table without PyTorch's columns
      local raw = assert(sqlite.open(path))
      for _, c in ipairs{ "pytorch_ms", "pytorch_compiled_ms", "speedup_pytorch", "speedup_pytorch_lo", "speedup_pytorch_hi",
                          "speedup_compiled", "speedup_compiled_lo", "speedup_compiled_hi", "baseline_vs_pytorch" } do
        assert(raw:exec("ALTER TABLE evaluations DROP COLUMN " .. c))
      end
      assert(raw:exec("DROP TABLE generations")) -- version 3's
      assert.equals(1, raw:exec("UPDATE kreach_meta SET value = '1' WHERE key = 'schema_version'"))
      raw:close()
      local ro = assert(store.open(path, { readonly = true }))
      assert.equals(0.5, ro:find_evaluation("k").baseline_ms)
      assert.is_nil(ro:find_evaluation("k").pytorch_ms)
      ro:close()
      db = assert(store.open(path))
      assert.equals("4", db.sql:query("SELECT value FROM kreach_meta WHERE key = 'schema_version'")[1].value)
      assert.equals(0, #db:generations())
      local r = db:find_evaluation("k")
      assert.equals(0.5, r.baseline_ms)
      assert.equals("19_ReLU", r.problem_name)
      db:record_evaluation{ run_id = run, problem = { suite = "s", problem_id = 19, name = "19_ReLU", file_hash = "a" },
                            eval_key = "k2", dtype = "f32", verdict = "baseline", baseline_ms = 0.4, pytorch_ms = 0.8,
                            baseline_vs_pytorch = 0.5 }
      assert.equals(0.8, db:find_evaluation("k2").pytorch_ms)
      db:close()
    end)

    it("refuses a corrupt database after quick_check, and never writes it", function()
      local path = tmpdir() .. "/results.db"
      local db = assert(store.open(path))
      local run = db:begin_run{ config_hash = "h" }
      for i = 1, 40 do db:record_evaluation(evaluation(run, "k" .. i)) end
      local root = db.sql:query("SELECT rootpage FROM sqlite_schema WHERE name = 'evaluations'")[1].rootpage
      local page = db.sql:query("PRAGMA page_size")[1].page_size
      db:close()
      local f = assert(io.open(path, "r+b"))
      f:seek("set", (root - 1) * page + 8)
      f:write(("\255"):rep(64))
      f:close()
      local snap = freeze(path)
      local bad, err = store.open(path)
      assert.is_nil(bad)
      assert.matches("^" .. path:gsub("%p", "%%%0") .. ": the results database is corrupt: .+", err)
      assert_untouched(path, snap)
    end)
  end)

  describe("records", function()
    local path, db
    before_each(function()
      path = tmpdir() .. "/results.db"
      db = assert(store.open(path))
    end)
    after_each(function() db:close() end)

    it("begins, finishes, finds and reopens runs", function()
      local id = db:begin_run{ command = { "kreach", "run", "--suite", "x" }, config = { n = 3, f = 0.5 },
                               config_hash = "abc123", device = { name = "NVIDIA H200", uuid = "GPU-1" },
                               versions = { driver = "13.0", runtime = 12080, nvrtc = "13.0" },
                               kreach_version = "0.2.0", kreach_revision = "deadbee" }
      local r = db:get_run(id)
      assert.equals("running", r.status)
      assert.same({ "kreach", "run", "--suite", "x" }, r.command)
      assert.same({ n = 3, f = 0.5 }, r.config)
      assert.equals("NVIDIA H200", r.device.name)
      assert.equals(13000, r.driver_version)
      assert.equals(12080, r.runtime_version)
      assert.equals("13.0", r.nvrtc_version)
      assert.equals("0.2.0", r.kreach_version)
      assert.equals("deadbee", r.kreach_revision)
      assert.equals("integer", math.type(r.pid))
      assert.is_string(r.hostname)
      assert.matches("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$", r.started_at)
      assert.is_nil(r.finished_at)
      assert.is_nil(db:get_run(id + 100))

      local other = db:begin_run{ config_hash = "abc123" }
      assert.is_string(db:get_run(other).kreach_version) -- the binary's own, by default
      assert.equals(other, db:latest_run{ config_hash = "abc123" }.id)
      db:finish_run(other, "failed")
      assert.equals(id, db:latest_run{ config_hash = "abc123", status = "running" }.id)
      assert.is_nil(db:latest_run{ config_hash = "nope" })
      db:finish_run(id, "finished")
      r = db:get_run(id)
      assert.equals("finished", r.status)
      assert.is_string(r.finished_at)
      assert.is_nil(db:latest_run{ config_hash = "abc123", status = "running" })
      db:reopen_run(id)
      r = db:get_run(id)
      assert.equals("running", r.status)
      assert.is_nil(r.finished_at)
      assert.has_error(function() db:finish_run(id, "done") end)
      assert.has_error(function() db:finish_run(999, "finished") end)
      assert.has_error(function() db:begin_run{} end)
      assert.equals(2, #db:runs())
    end)

    it("keeps one row per problem (name, file) and per candidate hash", function()
      local a = db:problem_ref(PROBLEM)
      assert.equals(a, db:problem_ref(PROBLEM))
      local changed = {}
      for k, v in pairs(PROBLEM) do changed[k] = v end
      changed.file_hash = "bbbb"
      assert.are_not.equal(a, db:problem_ref(changed))
      assert.equals(2, count(db, "problems"))
      local c = db:candidate_ref(CANDIDATE)
      assert.equals(c, db:candidate_ref{ hash = CANDIDATE.hash, source = "other text, same hash" })
      assert.equals(1, count(db, "candidates"))
      local row = db.sql:query("SELECT * FROM candidates")[1]
      assert.equals(CANDIDATE.source, row.source)
      assert.same(CANDIDATE.origin, json.decode(row.origin))
      assert.has_error(function() db:problem_ref{ name = "x" } end)
      assert.has_error(function() db:candidate_ref{ hash = "x" } end)
    end)

    it("commits an evaluation before record_evaluation returns", function()
      local run = db:begin_run{ config_hash = "h" }
      local id = db:record_evaluation(evaluation(run, "key-1"))
      -- a second connection, while the first stays open, sees it
      local other = assert(sqlite.open(path, { readonly = true }))
      local rows = other:query("SELECT id, eval_key, verdict FROM evaluations")
      other:close()
      assert.same({ { id = id, eval_key = "key-1", verdict = "correct" } }, rows)
      local e = db:find_evaluation("key-1")
      assert.equals(id, e.id)
      assert.equals(run, e.run_id)
      assert.same({ batch_size = 16, dim = 16384 }, e.sizes)
      assert.same({ trials = 5, max_rel = 1e-7 }, e.check_result)
      assert.same({ 0.19, 0.2, 0.21 }, e.timing.candidate.samples)
      assert.is_false(e.throttled)
      assert.equals(1.25, e.speedup)
      assert.equals("19_ReLU", e.problem_name)
      assert.equals(19, e.problem_id)
      assert.equals("kernelbench-level1", e.suite)
      assert.equals(PROBLEM.path, e.path)
      assert.equals("c0ffee", e.candidate_hash)
      assert.equals("relu_v1", e.candidate_name)
      assert.same({ model = "m1", sample = 2 }, e.origin)
      assert.equals(1.5, e.wall_s)
      -- a baseline-only measurement has no candidate
      local bench = evaluation(run, "bench-1")
      bench.candidate = nil
      local b = db:record_evaluation(bench)
      e = db:find_evaluation("bench-1")
      assert.equals(b, e.id)
      assert.is_nil(e.candidate_ref)
      assert.is_nil(e.candidate_hash)
    end)

    it("leaves nothing behind when recording fails", function()
      local run = db:begin_run{ config_hash = "h" }
      local e = evaluation(run, "k")
      e.verdict = nil
      assert.has_error(function() db:record_evaluation(e) end)
      -- a failure after the problem and candidate rows went in: all of it is rolled back
      local orphan = evaluation(run + 1000, "k", { problem = { name = "new", file_hash = "n" },
                                                   candidate = { hash = "new", source = "s" } })
      -- a failing statement is a kreach.errors database error (exit status 3), without a position
      local ok, ferr = pcall(db.record_evaluation, db, orphan)
      assert.is_false(ok)
      assert.is_true(require("kreach.errors").is(ferr))
      assert.equals(3, ferr.status)
      assert.equals(path .. ": FOREIGN KEY constraint failed", tostring(ferr))
      assert.equals(0, count(db, "evaluations"))
      assert.equals(0, count(db, "problems"))
      assert.equals(0, count(db, "candidates"))
      assert.is_true(db.sql:exec("BEGIN IMMEDIATE") ~= nil) -- no transaction was left open
      db.sql:exec("ROLLBACK")
    end)

    it("finds the newest evaluation of a key and filters evaluations", function()
      local r1 = db:begin_run{ config_hash = "h" }
      local r2 = db:begin_run{ config_hash = "h" }
      local ids = {}
      ids[1] = db:record_evaluation(evaluation(r1, "a"))
      ids[2] = db:record_evaluation(evaluation(r1, "b", { verdict = "incorrect", reason = "wrong_values",
                                                                    detail = "trial 1" }))
      ids[3] = db:record_evaluation(evaluation(r2, "a", { speedup = 2.0 }))
      assert.equals(ids[3], db:find_evaluation("a").id)
      assert.equals(2.0, db:find_evaluation("a").speedup)
      assert.is_nil(db:find_evaluation("zzz"))
      local function idlist(rows)
        local t = {}
        for i, r in ipairs(rows) do t[i] = r.id end
        return t
      end
      assert.same(ids, idlist(db:evaluations()))
      assert.same({ ids[1], ids[2] }, idlist(db:evaluations{ run_id = r1 }))
      assert.same({ ids[1], ids[3] }, idlist(db:evaluations{ eval_keys = { "a", "nope" } }))
      assert.same({ ids[3] }, idlist(db:evaluations{ run_id = r2, eval_keys = { "a", "b" } }))
      assert.same({}, idlist(db:evaluations{ eval_keys = {} }))
      local b = db:evaluations{ eval_keys = { "b" } }[1]
      assert.equals("incorrect", b.verdict)
      assert.equals("wrong_values", b.reason)
      assert.equals("trial 1", b.detail)
    end)

    it("keeps NaN, infinities and exact numbers in JSON columns", function()
      local run = db:begin_run{ config_hash = "h", config = { tol = math.huge } }
      db:record_evaluation(evaluation(run, "nan", {
        check_result = { max_abs = 0 / 0, max_rel = math.huge, low = -math.huge, big = math.maxinteger, third = 1 / 3 },
        timing = { candidate = { samples = { 0.1234567890123456789, 2 } } } }))
      local e = db:find_evaluation("nan")
      assert.is_true(e.check_result.max_abs ~= e.check_result.max_abs)
      assert.equals(math.huge, e.check_result.max_rel)
      assert.equals(-math.huge, e.check_result.low)
      assert.equals(math.maxinteger, e.check_result.big)
      assert.equals(1 / 3, e.check_result.third)
      assert.equals(0.1234567890123456789, e.timing.candidate.samples[1])
      assert.equals("integer", math.type(e.timing.candidate.samples[2]))
      assert.equals(math.huge, db:get_run(run).config.tol)
    end)

    it("keeps keys that need escaping in JSON columns, as SQLite's own JSON reads them too", function()
      local KEYS = { 'q"uote', "back\\slash", "new\nline", "ctl\1\31\127", "tab\t", '"', "\\", "", "é😀", 'x":1,"y' }
      local function keyed(tag)
        local t = {}
        for i, k in ipairs(KEYS) do t[k] = { tag = tag, i = i, [k] = k } end
        return t
      end
      local run = db:begin_run{ config_hash = "h", config = keyed("config"), command = { 'a"b', "c\\d\n" } }
      local origin = keyed("origin")
      db:record_evaluation(evaluation(run, "keys", {
        sizes = keyed("sizes"), check_result = keyed("check"), timing = { candidate = keyed("timing"), neg_zero = -0.0 },
        candidate = { hash = "k3y5", path = "c.lua", source = "return {}", origin = origin } }))
      local e = db:find_evaluation("keys")
      assert.same(keyed("sizes"), e.sizes)
      assert.same(keyed("check"), e.check_result)
      assert.same(keyed("timing"), e.timing.candidate)
      assert.equals(-math.huge, 1 / e.timing.neg_zero) -- -0.0 stays negative
      assert.same(origin, e.origin)
      assert.same(keyed("config"), db:get_run(run).config)
      assert.same({ 'a"b', "c\\d\n" }, db:get_run(run).command)
      -- the stored text is JSON to SQLite as well, with the same keys
      local col = db.sql:query("SELECT sizes, json_valid(sizes) AS ok FROM evaluations WHERE eval_key = 'keys'")[1]
      assert.equals(1, col.ok, col.sizes)
      local got = {}
      for _, r in ipairs(db.sql:query("SELECT key FROM json_each((SELECT sizes FROM evaluations WHERE eval_key = 'keys'))")) do
        got[#got + 1] = r.key
      end
      local want = { table.unpack(KEYS) }
      table.sort(want)
      table.sort(got)
      assert.same(want, got)
    end)

    it("saves calibrations and gives the newest of a device", function()
      local a = db:save_calibration{ device_uuid = "GPU-1", device_name = "NVIDIA H200", driver_version = 13000,
                                     copy_bytes_per_s = 4.2e12, flops_per_s = { f32 = 6.7e13, bf16 = 9.9e14 },
                                     details = { runs = 3 } }
      local b = db:save_calibration{ device_uuid = "GPU-1", copy_bytes_per_s = 4.3e12, flops_per_s = { f32 = 6.8e13 } }
      db:save_calibration{ device_uuid = "GPU-2", copy_bytes_per_s = 1 }
      assert.is_true(b > a)
      local c = db:calibration("GPU-1")
      assert.equals(b, c.id)
      assert.equals(4.3e12, c.copy_bytes_per_s)
      assert.same({ f32 = 6.8e13 }, c.flops_per_s)
      assert.is_string(c.measured_at)
      assert.is_nil(db:calibration("GPU-3"))
    end)

    it("saves and loads a profile of thousands of kernels quickly", function()
      local n = 5000
      local t = { source = "cupti", command = { "python", "train.py" }, workload = "train step",
                  knobs = { batch = 8 }, device = { name = "NVIDIA H200" }, wall_s = 12.5,
                  window = { start_ns = 1700000000000000000, end_ns = 1700000000123456789 }, dropped = 0,
                  meta = { note = "x" }, kernels = {}, memops = {}, ranges = {} }
      for i = 1, n do
        local s = 1700000000000000000 + i * 1000
        t.kernels[i] = { name = "kernel_" .. (i % 17), mangled = "_Z6kernelv" .. i, start_ns = s, end_ns = s + 900,
                         device = 0, stream = 7, grid = { i, 1, 1 }, block = { 256, 1, 1 }, registers = 32,
                         shared_bytes = 4096, correlation = i }
      end
      for i = 1, 200 do
        t.memops[i] = { kind = "memcpy", start_ns = i, end_ns = i + 5, bytes = 6400000000, copy_kind = "HtoD",
                        device = 0, stream = 7 }
        t.ranges[i] = { name = "step " .. i, start_ns = i, end_ns = i + 10 }
      end
      local now = require("kreach").now
      local t0 = now()
      local id = db:save_profile(t)
      local save_s = now() - t0
      t0 = now()
      local back = db:load_profile(id)
      local load_s = now() - t0
      print(("profile of %d kernels: saved in %.3f s, loaded in %.3f s"):format(n, save_s, load_s))
      -- a slow path (a statement prepared per row, a transaction per row) takes far longer
      assert.is_true(save_s < 2.0, ("save took %.3f s"):format(save_s))
      assert.is_true(load_s < 2.0, ("load took %.3f s"):format(load_s))
      assert.equals(id, back.id)
      for _, k in ipairs{ "source", "command", "workload", "knobs", "device", "wall_s", "dropped", "meta" } do
        assert.same(t[k], back[k])
      end
      assert.same({ t.window.start_ns, t.window.end_ns }, back.window) -- named on the way in
      assert.same(t.kernels, back.kernels)
      assert.same(t.memops, back.memops)
      assert.same(t.ranges, back.ranges)
      local id2 = db:save_profile{ source = "kineto", window = { 5, 9 } }
      assert.same({ 5, 9 }, db:load_profile(id2).window)
      assert.same({}, db:load_profile(id2).kernels)
      local list = db:profiles()
      assert.equals(2, #list)
      assert.equals(n, list[1].n_kernels)
      assert.equals(0, list[2].n_kernels)
      assert.is_nil(list[1].kernels)
      assert.is_nil(db:load_profile(id2 + 1))
      -- a kernel without a name fails the whole profile
      assert.has_error(function() db:save_profile{ source = "nsys", kernels = { { start_ns = 1 } } } end)
      assert.equals(2, #db:profiles())
    end)

    it("rolls back a transaction and raises its error again, nested ones too", function()
      local run = db:begin_run{ config_hash = "h" }
      local err = { reason = "a table error" }
      local ok, got = pcall(db.transaction, db, function()
        db:record_evaluation(evaluation(run, "inner")) -- joins this transaction
        error(err)
      end)
      assert.is_false(ok)
      assert.equals(err, got)
      assert.is_nil(db:find_evaluation("inner"))
      local v = db:transaction(function()
        db:problem_ref(PROBLEM)
        pcall(db.transaction, db, function()
          db:candidate_ref(CANDIDATE)
          error("inner fails")
        end)
        return 42
      end)
      assert.equals(42, v)
      assert.equals(1, count(db, "problems"))
      assert.equals(0, count(db, "candidates"))
    end)
  end)
end)
