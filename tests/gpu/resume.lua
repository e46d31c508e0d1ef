-- Resume after SIGKILL, on the GPU: a real `kreach eval` run of several candidates is killed
-- with SIGKILL once it has committed some evaluations, then resumed with --resume; the result
-- must be the same set of evaluations (candidate, verdict) as an uninterrupted run of the same
-- command, with nothing lost and nothing evaluated twice, and the database intact.
-- usage: kreach tests/gpu/resume.lua   (exit 77 without a GPU)
local kreach = require "kreach"
kreach.skip_without_device()
local sqlite = require "kreach.core.sqlite"

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local cands = here .. "/../candidates"
local dir = os.tmpname()
os.remove(dir)
assert(require("lfs").mkdir(dir))
local files = { "019_relu.lua", "adv_zeros.lua", "adv_partial.lua", "adv_nan.lua", "adv_mutation.lua",
                "adv_warmup.lua", "adv_replay.lua", "adv_oob_write.lua" }
for _, f in ipairs(files) do
  local src = assert(io.open(cands .. "/" .. f)):read("a")
  -- a directory's candidates are its <problem id>_<name>.lua files
  local out = assert(io.open(dir .. "/" .. (f:match("^%d+_") and f or "019_" .. f), "w"))
  out:write(src)
  out:close()
end

local function argv(db, extra)
  local a = { kreach.executable(), "eval", "19", dir, "--size", "batch_size=64", "--size", "dim=4099",
              "--budget", "0.3", "--db", db }
  for _, x in ipairs(extra or {}) do a[#a + 1] = x end
  return a
end

local function sh(a)
  local q = {}
  for i, x in ipairs(a) do q[i] = ("%q"):format(x) end
  return table.concat(q, " ")
end

local function rows(db)
  local d = assert(sqlite.open(db, { readonly = true, create = false }))
  local r = assert(d:query([[SELECT c.hash AS hash, e.verdict AS verdict, e.reason AS reason, e.run_id AS run_id
                             FROM evaluations e JOIN candidates c ON c.id = e.candidate_ref ORDER BY e.id]]))
  local check = assert(d:query("PRAGMA integrity_check"))
  d:close()
  return r, check[1].integrity_check
end

local function count(db)
  local d = sqlite.open(db, { readonly = true, create = false })
  if not d then return 0 end
  local r = d:query("SELECT count(*) AS n FROM evaluations")
  d:close()
  return r and r[1].n or 0
end

-- calibrate once, into both databases' source, so neither run spends its time on it
local dba, dbb = dir .. "/a.db", dir .. "/b.db"
assert(os.execute(sh({ kreach.executable(), "calibrate", "--db", dba, "--gemm-n", "4096", "--repeats", "3" }) .. " >/dev/null"))
assert(os.execute(("cp %q %q"):format(dba, dbb)))

-- the uninterrupted run
local t0 = kreach.now()
assert(os.execute(sh(argv(dba)) .. " >" .. dir .. "/a.log 2>&1"), "the uninterrupted run failed: see " .. dir .. "/a.log")
print(("uninterrupted run: %.1f s"):format(kreach.now() - t0))
local ra = rows(dba)
assert(#ra == #files, ("the uninterrupted run stored %d evaluations, not %d"):format(#ra, #files))

-- the killed run: SIGKILL to the eval process alone, once 3 evaluations are committed (its
-- worker dies with it: workers ask the kernel for that)
local w = assert(kreach.proc.spawn(argv(dbb)))
local pid = w:pid()
local deadline = kreach.now() + 120
while count(dbb) < 3 and kreach.now() < deadline do os.execute("sleep 0.05") end
local at_kill = count(dbb)
os.execute("kill -9 " .. pid)
w:wait()
w:free()
print(("killed the run with SIGKILL after %d committed evaluations"):format(at_kill))
assert(at_kill >= 3 and at_kill < #files, "the kill did not land mid-run")
os.execute("sleep 0.5")
-- no worker of the killed run is left
-- (the bracket keeps pgrep's own shell from matching)
local left = io.popen("pgrep -f '[k]reach worker (check|time) '"):read("a")
assert(left == "", "workers of the killed run are still running: " .. left)
local rb_killed = rows(dbb)
assert(#rb_killed == at_kill or #rb_killed == at_kill + 1)

-- resume it
assert(os.execute(sh(argv(dbb, { "--resume" })) .. " >" .. dir .. "/b.log 2>&1"), "the resumed run failed: see " .. dir .. "/b.log")
local rb, integrity = rows(dbb)
print(("after --resume: %d evaluations; integrity_check: %s"):format(#rb, integrity))
assert(integrity == "ok")
assert(#rb == #files, ("the resumed run holds %d evaluations, not %d (lost or repeated)"):format(#rb, #files))
local function set(rs)
  local s = {}
  for _, r in ipairs(rs) do s[#s + 1] = r.hash .. " " .. r.verdict .. " " .. tostring(r.reason) end
  table.sort(s)
  return s
end
local sa, sb = set(ra), set(rb)
for i = 1, #sa do
  print(sa[i] == sb[i] and "same" or "DIFFERENT", sa[i], "|", sb[i])
  assert(sa[i] == sb[i], "the resumed run's evaluations differ from the uninterrupted run's")
end
-- one run, resumed, not two
local d = assert(sqlite.open(dbb, { readonly = true, create = false }))
local runs = d:query("SELECT id, status FROM runs WHERE command LIKE '%eval%'")
d:close()
assert(#runs == 1 and runs[1].status == "finished", "the resumed run is not the one run, finished")
io.write(("result resume_evaluations %d count same set as uninterrupted after SIGKILL at %d\n"):format(#rb, at_kill))
os.execute(("rm -rf %q"):format(dir))
