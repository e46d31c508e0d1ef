-- kreach.profile.run without a GPU: finding the injection library, KREACH_TRACE_KINDS, the argv
-- and environment a program is started with, and run() and profile() on programs that need no
-- CUDA: one that cannot start, one that fails and writes no trace, one stopped at its time
-- limit, and shell programs that write a trace file where the library would, following its
-- documented format (docs/profiling-inject.md) with the committed JSON Lines traces of
-- tests/data/profile. The library itself recording a CUDA program is
-- tests/lua/gpu/profile_run_spec.lua's.
local kreach = require "kreach"
local run = require "kreach.profile.run"
local support = require "support"
local lfs = require "lfs"

local SMALL = "tests/data/profile/kreach_small.jsonl" -- 6 kernels, 2 'step' ranges, 1 memcpy, 1 memset

local function env_of(plan)
  local t = {}
  for _, kv in ipairs(plan.env) do
    local k, v = kv:match("^([^=]+)=(.*)$")
    t[k] = v
  end
  return t
end

local function lines(s)
  local out = {}
  for l in s:gmatch("([^\n]*)\n") do out[#out + 1] = l end
  return out
end

-- A program that puts `trace` where the library would write its trace, writes `knobs` to
-- $KREACH_PROFILE_KNOBS and exits with `status`.
local function writer(trace, knobs, status)
  return { "sh", "-c", 'cp "$1" "$KREACH_TRACE_FILE" && printf "%s" "$2" > "$KREACH_PROFILE_KNOBS" && echo wrote && exit "$3"',
           "sh", trace, knobs or "", tostring(status or 0) }
end

describe("kreach.profile.run", function()
  local dirs = {}
  local function tmpdir()
    local d = support.tmpdir()
    dirs[#dirs + 1] = d
    return d
  end
  teardown(function()
    for _, d in ipairs(dirs) do os.execute("rm -rf '" .. d .. "'") end
  end)

  describe("inject_lib", function()
    it("finds the library beside the kreach binary", function()
      local beside = kreach.executable():match("^(.*)/[^/]*$") .. "/libkreach_inject.so"
      assert.is_truthy(lfs.attributes(beside), "the build puts libkreach_inject.so beside kreach")
      assert.equals(beside, run.inject_lib({ override = "" }))
    end)

    it("finds it in lib/kreach beside an installed binary's bin/", function()
      local d = tmpdir()
      assert(lfs.mkdir(d .. "/bin")); assert(lfs.mkdir(d .. "/lib")); assert(lfs.mkdir(d .. "/lib/kreach"))
      support.spit(d .. "/lib/kreach/libkreach_inject.so", "")
      assert.equals(d .. "/bin/../lib/kreach/libkreach_inject.so",
        run.inject_lib({ override = "", executable = d .. "/bin/kreach" }))
    end)

    it("says where it looked when there is none", function()
      local d = tmpdir()
      local lib, err = run.inject_lib({ override = "", executable = d .. "/kreach" })
      assert.is_nil(lib)
      assert.equals(("the injection library is missing: %s/libkreach_inject.so (it is built next to the kreach binary; KREACH_INJECT_LIB names another)"):format(d), err)
    end)

    it("takes $KREACH_INJECT_LIB first, and checks it", function()
      local d = tmpdir()
      support.spit(d .. "/mine.so", "")
      assert.equals(d .. "/mine.so", run.inject_lib({ override = d .. "/mine.so" }))
      -- through the environment, in a kreach of its own
      local code = 'local lib, err = require("kreach.profile.run").inject_lib(); print(lib or err)'
      for _, case in ipairs({ { d .. "/mine.so", d .. "/mine.so" },
                              { d .. "/none.so", "the injection library is missing: " .. d .. "/none.so" } }) do
        local env = { "KREACH_INJECT_LIB=" .. case[1], "PATH=" .. (os.getenv("PATH") or "/usr/bin:/bin") }
        if os.getenv("KREACH_LUA_DIR") then env[#env + 1] = "KREACH_LUA_DIR=" .. os.getenv("KREACH_LUA_DIR") end
        local w = assert(kreach.proc.spawn({ kreach.executable(), "-e", code }, { env = env }))
        local line = w:read_line(60)
        assert.same({ "exited", 0 }, { w:wait() })
        w:free()
        assert.equals(case[2], line:sub(1, #case[2]))
      end
    end)
  end)

  describe("kinds", function()
    it("reads KREACH_TRACE_KINDS as the library does", function()
      assert.same({ kernel = true, memcpy = true, memset = true, marker = true }, run.kinds(nil))
      assert.same({ kernel = true, memcpy = true, memset = true, marker = true }, run.kinds(""))
      assert.same({ kernel = true, memcpy = true, memset = true, marker = true }, run.kinds("all"))
      assert.same({ kernel = true, marker = true }, run.kinds(" kernel , marker"))
      assert.same({ memset = true }, run.kinds({ "memset" }))
    end)

    it("names an unknown or empty kind", function()
      local set, err = run.kinds("kernel,kernal")
      assert.is_nil(set)
      assert.equals("KREACH_TRACE_KINDS=kernel,kernal: unknown kind 'kernal' (kinds: kernel, memcpy, memset, marker, all)", err)
      assert.matches("an empty kind name", select(2, run.kinds("kernel,")))
    end)
  end)

  describe("command", function()
    local base = { PATH = "/usr/bin", HOME = "/home/u", KREACH_TRACE_FILE = "/old/trace", KREACH_TRACE_ALTERNATE = "old",
                   CUDA_INJECTION64_PATH = "/old.so", KREACH_TRACE_KINDS = "kernel" }

    it("gives the program its argv as it is and the library's variables", function()
      local argv = { "python3", "train.py", "--lr", "3e-4", "it's $HOME; `quoted`" }
      local plan = assert(run.command(argv, { lib = "/b/libkreach_inject.so", trace_path = "/t/trace.jsonl",
                                             knobs_path = "/t/knobs.json", base = base }))
      assert.same(argv, plan.argv)
      assert.are_not.equal(argv, plan.argv) -- a copy
      assert.same({ PATH = "/usr/bin", HOME = "/home/u", CUDA_INJECTION64_PATH = "/b/libkreach_inject.so",
                    NVTX_INJECTION64_PATH = "/b/libkreach_inject.so", KREACH_TRACE_FILE = "/t/trace.jsonl",
                    KREACH_PROFILE_KNOBS = "/t/knobs.json", KREACH_TRACE_KINDS = "kernel" }, env_of(plan))
      -- sorted by name, one "NAME=value" each
      local names = {}
      for i, kv in ipairs(plan.env) do names[i] = kv:match("^[^=]+") end
      local sorted = { table.unpack(names) }
      table.sort(sorted)
      assert.same(sorted, names)
    end)

    it("sets the kinds and the alternation when asked, and the caller's variables", function()
      local plan = assert(run.command({ "prog" }, { lib = "/l.so", trace_path = "/t", kinds = { "kernel", "marker" },
                                                   alternate = "step", env = { MY_VAR = "x", N = 3, HOME = false }, base = base }))
      local env = env_of(plan)
      assert.equals("kernel,marker", env.KREACH_TRACE_KINDS)
      assert.equals("step", env.KREACH_TRACE_ALTERNATE)
      assert.equals("x", env.MY_VAR)
      assert.equals("3", env.N)
      assert.is_nil(env.HOME)
      assert.is_nil(env.KREACH_PROFILE_KNOBS)
    end)

    it("starts from this process's environment by default", function()
      local plan = assert(run.command({ "prog" }, { lib = "/l.so", trace_path = "/t" }))
      local env = env_of(plan)
      assert.equals(os.getenv("PATH"), env.PATH)
      assert.equals("/t", env.KREACH_TRACE_FILE)
      assert.equals(os.getenv("PATH"), run.inherited().PATH)
    end)

    it("refuses a bad kinds, and raises on misuse", function()
      local plan, err = run.command({ "prog" }, { lib = "/l.so", trace_path = "/t", kinds = "kernels" })
      assert.is_nil(plan)
      assert.matches("unknown kind 'kernels'", err)
      assert.has_error(function() run.command({}, { lib = "/l.so", trace_path = "/t" }) end,
        "command: argv must be a list of strings, the program first")
      assert.has_error(function() run.command("prog", { lib = "/l.so", trace_path = "/t" }) end)
      assert.has_error(function() run.command({ "prog", 3 }, { lib = "/l.so", trace_path = "/t" }) end,
        "command: argv[2] is a number, not a string")
      assert.has_error(function() run.command({ "prog" }, { lib = "/l.so", trace_path = "/t", shell = true }) end,
        "command: unknown option 'shell'")
    end)
  end)

  describe("run", function()
    it("says when the program cannot start", function()
      local res, err, so_far = run.run({ "/nonexistent/kreach-no-such-program", "x" })
      assert.is_nil(res)
      assert.equals("cannot start /nonexistent/kreach-no-such-program: No such file or directory", err)
      assert.is_nil(so_far.exit)
    end)

    it("reports a program that fails without using CUDA, with its output", function()
      local res, err, so_far = run.run({ "sh", "-c", "echo out; echo err >&2; exit 3" })
      assert.is_nil(res)
      assert.matches("^the program wrote no trace to /.*/trace%.jsonl %(it exited with status 3%): is it a CUDA program", err)
      assert.same({ how = "exit", status = 3 }, so_far.exit)
      assert.is_false(so_far.ok)
      assert.equals("out\n", so_far.stdout)
      assert.equals("err\n", so_far.stderr)
      -- the temporary directory is gone
      assert.is_nil(lfs.attributes(err:match("to (/.*)/trace%.jsonl")))
    end)

    it("starts the program with argv as it is (no shell) and the library's environment", function()
      local lib = assert(run.inject_lib())
      local got = {}
      local _, err, so_far = run.run({ "sh", "-c", 'printf "%s\\n" "$1" "$KREACH_TRACE_FILE" "$KREACH_PROFILE_KNOBS" "$CUDA_INJECTION64_PATH" "$NVTX_INJECTION64_PATH" "$KREACH_TRACE_ALTERNATE" "$MY_VAR"',
                                      "sh", "a 'b' $c" },
        { env = { MY_VAR = "mine" }, alternate = "step", stdout = function(l) got[#got + 1] = l end })
      assert.matches("wrote no trace", err)
      assert.is_nil(so_far.stdout) -- handed to the function instead
      assert.equals("a 'b' $c", got[1])
      assert.matches("^/.+/trace%.jsonl$", got[2])
      assert.equals(got[2]:match("^(.*)/") .. "/knobs.json", got[3])
      assert.equals(lib, got[4])
      assert.equals(lib, got[5])
      assert.equals("step", got[6])
      assert.equals("mine", got[7])
    end)

    it("copies the program's output to a file", function()
      local d = tmpdir()
      local f = assert(io.open(d .. "/out", "w"))
      run.run({ "sh", "-c", "echo one; echo two" }, { stdout = f })
      f:close()
      assert.equals("one\ntwo\n", support.slurp(d .. "/out"))
    end)

    it("stops a program at its time limit, with all it started", function()
      local t0 = kreach.now()
      local res, err, so_far = run.run({ "sh", "-c", "sleep 30 & sleep 30; echo never" }, { timeout_s = 0.3 })
      assert.is_nil(res)
      assert.is_true(kreach.now() - t0 < 10)
      assert.matches("%(it was stopped after its time limit of 0%.3 s%)", err)
      assert.same({ how = "signal", status = 9, signal = "SIGKILL", timed_out = true, limit_s = 0.3 }, so_far.exit)
      assert.equals("", so_far.stdout)
    end)

    it("reads the trace the program left where the library writes it, with its knobs", function()
      local res = assert(run.run(writer(SMALL, '{"batch": 8, "mode": "train"}')))
      assert.is_true(res.ok)
      assert.same({ how = "exit", status = 0 }, res.exit)
      assert.equals("wrote\n", res.stdout)
      assert.same({}, res.warnings)
      local t = res.trace
      assert.equals("cupti", t.source)
      assert.same(writer(SMALL, '{"batch": 8, "mode": "train"}'), t.command)
      assert.same({ batch = 8, mode = "train" }, t.knobs)
      assert.same(res.exit, t.meta.exit)
      assert.equals(res.run_s, t.meta.run_s)
      assert.equals(6, #t.kernels)
      assert.equals(2, #t.ranges)
      assert.is_nil(t.meta.path) -- the temporary trace is gone
    end)

    it("returns the trace of a program that fails after writing it", function()
      local res = assert(run.run(writer(SMALL, "", 5)))
      assert.is_false(res.ok)
      assert.same({ how = "exit", status = 5 }, res.exit)
      assert.equals(6, #res.trace.kernels)
      assert.equals("exited with status 5", run.exit_text(res.exit))
    end)

    it("warns of a knobs file that is not an object, and of other processes' traces", function()
      local d = tmpdir()
      local out = d .. "/t.jsonl"
      support.spit(out .. ".1", "an earlier run's, not this one's")
      local argv = { "sh", "-c", 'cp "$1" "$KREACH_TRACE_FILE" && cp "$1" "$KREACH_TRACE_FILE.4242" && echo "[1, 2]" > "$KREACH_PROFILE_KNOBS"',
                     "sh", SMALL }
      local res = assert(run.run(argv, { output = out }))
      assert.same({ "1 other process of the program traced CUDA too; only the first is analysed: " .. out .. ".4242",
                    "the program's knobs file is not a JSON object; ignored" }, res.warnings)
      assert.same({ out .. ".4242" }, res.others)
      assert.equals(out, res.trace_path)
      assert.equals(out, res.trace.meta.path)
      assert.equals(support.slurp(SMALL), support.slurp(out)) -- kept
      assert.is_nil(res.trace.knobs)
    end)

    it("never overwrites a trace", function()
      local d = tmpdir()
      support.spit(d .. "/t.jsonl", "mine")
      local res, err = run.run({ "true" }, { output = d .. "/t.jsonl" })
      assert.is_nil(res)
      assert.equals(d .. "/t.jsonl exists (a trace is never overwritten): remove it or name another", err)
      assert.equals("mine", support.slurp(d .. "/t.jsonl"))
    end)

    it("refuses a trace without its footer unless allow_partial", function()
      local d = tmpdir()
      local cut = {}
      for _, l in ipairs(lines(support.slurp(SMALL))) do
        if not l:find('"type":"footer"', 1, true) then cut[#cut + 1] = l end
      end
      support.spit(d .. "/cut.jsonl", table.concat(cut, "\n") .. "\n")
      local res, err = run.run(writer(d .. "/cut.jsonl", "", 0))
      assert.is_nil(res)
      assert.matches("/trace%.jsonl:11: no footer: the program did not exit normally", err)
      res = assert(run.run(writer(d .. "/cut.jsonl", "", 0), { allow_partial = true }))
      assert.is_true(res.trace.meta.partial)
    end)

    it("says which library is missing", function()
      local res, err = run.run({ "true" }, { lib = "/nonexistent/libkreach_inject.so" })
      assert.is_nil(res)
      assert.equals("the injection library is missing: /nonexistent/libkreach_inject.so", err)
    end)

    it("raises on misuse", function()
      assert.has_error(function() run.run({ "true" }, { stdout = "inherit" }) end,
        'run: stdout must be "capture", an open file or a function')
      assert.has_error(function() run.run({ "true" }, { timeout_s = 0 }) end, "run: timeout_s must be a positive number of seconds")
      assert.has_error(function() run.run({ "true" }, { steps = "step" }) end, "run: unknown option 'steps'")
      assert.has_error(function() run.run({}) end)
    end)
  end)

  describe("profile", function()
    it("selects the steps, stores them and reports", function()
      local d = tmpdir()
      local db = d .. "/r.db"
      local res = assert(run.profile(writer(SMALL, '{"batch": 8}'), { steps = "step", skip = 1, db = db,
                                                                     workload = "toy", knobs = { lr = 0.5 } }))
      local rep = res.report
      assert.same({ range = "step", skip = 1, selected = 1, total = 2 }, rep.selection)
      assert.equals(3, rep.totals.kernels)
      assert.equals(1, rep.totals.memops)
      assert.equals("toy", rep.workload)
      assert.same({ batch = 8, lr = 0.5 }, rep.knobs)
      assert.same({ id = 1, db = db }, res.stored)
      assert.same(res.stored, rep.stored)
      assert.equals(6, #res.trace.kernels) -- the trace as recorded
      assert.equals(3, #res.selected.kernels)
      -- read back from the database: the selected steps
      local t = assert(run.load(1, db))
      assert.equals(3, #t.kernels)
      assert.equals("toy", t.workload)
      assert.same({ id = 1, db = db }, t.meta.stored)
      local again = assert(run.build(t))
      assert.equals(rep.addressable.frac_gpu, again.addressable.frac_gpu)
      local none, err, kind = run.load(2, db)
      assert.is_nil(none)
      assert.equals(("no profile 2 in %s"):format(db), err)
      assert.equals("usage", kind) -- an id that names nothing
    end)

    it("hands back the run when the steps are not in the trace", function()
      local res, err, so_far = run.profile(writer(SMALL), { steps = "ProfilerStep" })
      assert.is_nil(res)
      assert.equals("no range named 'ProfilerStep' in the trace (its ranges: step)", err)
      assert.equals(6, #so_far.trace.kernels)
    end)

    it("says why a profile cannot be stored, without kreach's own positions", function()
      local d = tmpdir()
      support.spit(d .. "/not.db", "this is not a database")
      local res, err, so_far = run.profile(writer(SMALL), { db = d .. "/not.db" })
      assert.is_nil(res)
      assert.matches("^cannot store the profile in " .. d:gsub("%p", "%%%0") .. "/not%.db: ", err)
      assert.is_nil(err:find("%.lua:%d+:"))
      assert.equals("database", so_far.error_kind) -- kreach profile exits 3
      assert.equals(6, #so_far.trace.kernels)
      local t, lerr, kind = run.load(1, d .. "/none.db")
      assert.is_nil(t)
      assert.equals(d .. "/none.db: no such results database", lerr)
      assert.equals("database", kind)
    end)
  end)

  describe("the profile modules", function()
    -- kreach's conventions for internal modules (docs: CONVENTIONS.md): every require at the top
    -- of the file, none of the kreach facade, and no require cycle
    local files = {}
    for f in lfs.dir("scripts/kreach/profile") do
      if f:match("%.lua$") then files[#files + 1] = "scripts/kreach/profile/" .. f end
    end
    files[#files + 1] = "scripts/kreach/cmd/profile.lua"
    table.sort(files)

    it("require only at the top of each file", function()
      assert.is_true(#files >= 8)
      for _, path in ipairs(files) do
        local top = true
        for n, l in ipairs(lines(support.slurp(path))) do
          if l:match("^local function") or l:match("^function") or l:match("^return") then top = false end
          local code = l:gsub("%-%-.*$", "")
          if not top and code:find("require%s*[%(\"']") then
            error(("%s:%d: a require below the top of the file: %s"):format(path, n, l))
          end
          if path:find("/profile/", 1, true) and code:find("require%s*%(?%s*[\"']kreach[\"']") then
            error(("%s:%d: an internal module requires the kreach facade"):format(path, n))
          end
        end
      end
    end)

    it("load each reader without the module that dispatches to it", function()
      local w = assert(kreach.proc.spawn({ kreach.executable(), "-e", [[
        require "kreach.profile.kineto"
        require "kreach.profile.nsys"
        print(package.loaded["kreach.profile.trace"] == nil)
        require "kreach.profile.run"
        print(package.loaded["kreach"] == nil)
      ]] }))
      assert.equals("true", w:read_line(60))
      assert.equals("true", w:read_line(60))
      assert.same({ "exited", 0 }, { w:wait() })
      w:free()
    end)
  end)
end)
