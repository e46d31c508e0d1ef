-- A kreach campaign on a real one-node Slurm cluster (issue 38, docs/cluster.md): Debian's
-- slurmctld, slurmd and munged started on 127.0.0.1 by tests/slurm/cluster.sh, and stopped at the
-- end whatever happens. The work needs no GPU: `kreach generate` of 3 problems x 3 samples against
-- a scripted OpenAI-compatible server on 127.0.0.1 (tests/http_server.py) that answers each
-- request after a delay, submitted with `kreach slurm generate ... --array 3`.
--
-- It checks: the scripts are submitted (an array of 3 and a merge after it); one task is
-- cancelled (scancel) while it runs, after it stored a reply and before it stored them all; the
-- merge after that array names the unfinished shard and merges nothing (exit 1); submit.sh
-- again skips the finished shards (their logs say so), and the cancelled one asks only what its
-- database lacks (at most the one request that was in flight is asked twice); the merge then
-- writes DIR/results.db. In the shards' databases every (problem, sample) pair is in exactly one
-- shard, the one kreach.run.plan names; in the merged database every pair is exactly once.
--
--   kreach tests/slurm/campaign.lua     exit 0 passed, 1 failed, 77 skipped: no slurm-wlm or munge
--                                       on this machine (tools/install-deps installs them)
-- KREACH_KEEP_TMP=1 keeps the directories (the cluster's logs, the campaign).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. package.path
local support = require "support"
local sqlite = require "kreach.core.sqlite"
local plan = require "kreach.run.plan"
local problem = require "kreach.problem"
local slurm = require "kreach.run.slurm"
local util = require "kreach.core.util"
local kcore = require "kreach.core"

local KREACH = require("kreach").executable()
local KEY = "sk-slurm-test-1234"
local TARGETS, SAMPLES, SHARDS = { "19", "23", "1" }, 3, 3
local DELAY_S = 0.7 -- each reply's: a shard of 3 or 4 pairs runs for 2 to 3 s
local TIMEOUT_S = 60 -- for each wait below

local q = require("kreach.text").shell_quote
local cluster_dir = assert(require("kreach.atomic").tmpdir())
local work = support.tmpdir()
local conf = cluster_dir .. "/slurm.conf"
local env = ("export SLURM_CONF=%s KREACH_TEST_KEY=%s;"):format(q(conf), KEY)
local stop_server

local function log(...) io.stdout:write(string.format(...), "\n"); io.stdout:flush() end

local function sh(cmd)
  local out, rc = support.sh(env .. " " .. cmd)
  return out, rc
end

local function stop_all()
  if stop_server then pcall(stop_server); stop_server = nil end
  os.execute("sh " .. q(here .. "/cluster.sh") .. " stop " .. q(cluster_dir))
  if os.getenv("KREACH_KEEP_TMP") ~= "1" then support.rm_tree(cluster_dir) end
end

local function file(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end

-- the campaign's and the cluster's logs, printed when a check fails
local function dump()
  log("---- squeue / scontrol")
  log("%s", (sh("squeue -a; scontrol -o show job")))
  for _, f in ipairs{ "shard-1.txt", "shard-2.txt", "shard-3.txt", "merge.txt" } do
    log("---- %s/camp/logs/%s\n%s", work, f, file(work .. "/camp/logs/" .. f))
  end
  log("%s", (support.sh("sh " .. q(here .. "/cluster.sh") .. " logs " .. q(cluster_dir))))
end

local function check(cond, fmt, ...)
  if not cond then
    local msg = fmt:format(...)
    error({ check = msg }, 2)
  end
end

-- job_states(id) -> { [task or 0] = state } of a job (an array's every task), from scontrol
local function job_states(id)
  local out = sh("scontrol -o show job " .. id)
  local st = {}
  for line in out:gmatch("[^\n]+") do
    local s = line:match("JobState=(%S+)")
    if s then st[math.tointeger(tonumber(line:match("ArrayTaskId=(%d+)") or "0"))] = s end
  end
  return st
end

local FINAL = { COMPLETED = true, FAILED = true, CANCELLED = true, TIMEOUT = true, NODE_FAIL = true,
                OUT_OF_MEMORY = true, PREEMPTED = true, BOOT_FAIL = true, DEADLINE = true }

local function wait_for(what, test)
  local t0 = kcore.now()
  while kcore.now() - t0 < TIMEOUT_S do
    local v = test()
    if v then return v end
    util.sleep(0.05)
  end
  check(false, "timed out after %d s waiting for %s", TIMEOUT_S, what)
end

-- pairs_in(db) -> { "problem/sample/turn" = count } of a database's generations, or {} when none
local function pairs_in(path)
  local db = sqlite.open(path, { readonly = true })
  if not db then return {}, 0 end
  local ok, rows = pcall(db.query, db, "SELECT problem_name, sample, turn FROM generations")
  db:close()
  local t, n = {}, 0
  for _, r in ipairs(ok and rows or {}) do
    local k = ("%s/%d/%d"):format(r.problem_name, r.sample, r.turn)
    t[k] = (t[k] or 0) + 1
    n = n + 1
  end
  return t, n
end

local function main()
  local started = kcore.now()
  local out, rc = support.sh("sh " .. q(here .. "/cluster.sh") .. " start " .. q(cluster_dir))
  if rc == 77 then
    io.stdout:write(out)
    return 77
  end
  check(rc == 0, "the cluster did not start (status %s):\n%s", tostring(rc), out)
  log("a one-node Slurm cluster in %s (%.1f s)", cluster_dir, kcore.now() - started)

  -- the work: every pair, and its shard as kreach.run.plan says
  local expected, shard_of, size = {}, {}, { 0, 0, 0 }
  for _, t in ipairs(TARGETS) do
    local name = problem.load(problem.resolve(t)).name
    for s = 1, SAMPLES do
      local k = ("%s/%d/1"):format(name, s)
      expected[#expected + 1] = k
      shard_of[k] = plan.shard_of(plan.sample_key(name, s), SHARDS)
      size[shard_of[k]] = size[shard_of[k]] + 1
    end
  end
  log("%d pairs; shards of %d, %d and %d", #expected, size[1], size[2], size[3])
  local victim = 1 -- the largest shard is cancelled mid-run
  for i = 2, SHARDS do if size[i] > size[victim] then victim = i end end
  check(size[victim] >= 3, "the largest shard holds %d pairs: too few to cancel one mid-run", size[victim])

  local good = file(here .. "/../candidates/019_relu.lua")
  local base, requests, stop = support.http_server({ ["/v1/chat/completions"] = { { delay_s = DELAY_S, body = {
    id = "chatcmpl-1", model = "test-model", usage = { prompt_tokens = 10, completion_tokens = 20 },
    choices = { { message = { role = "assistant", content = "```lua\n" .. good .. "```\n" }, finish_reason = "stop" } } } } } })
  stop_server = stop
  support.spit(work .. "/cfg.lua", 'return { provider = "openai", model = "test-model" }\n')

  -- submitted: the scripts written, the array and the merge after it
  local submit = ("cd %s && %s slurm generate %s --model cfg.lua --base-url %s --api-key-env KREACH_TEST_KEY --samples %d --concurrency 1 --retries 0 --array %d --dir camp"):format(
    q(work), q(KREACH), table.concat(TARGETS, " "), q(base .. "/v1"), SAMPLES, SHARDS)
  out, rc = sh(submit)
  check(rc == 0, "kreach slurm generate: status %s\n%s", tostring(rc), out)
  local array, merge = slurm.submitted(out)
  check(array and merge, "no job ids in kreach slurm's output:\n%s", out)
  log("submitted: array job %d, merge job %d", array, merge)
  local dry = sh(submit .. " --dry-run")
  check(dry:find(file(work .. "/camp/shards.sbatch"), 1, true), "--dry-run does not print the script it wrote:\n%s", dry)

  -- the victim cancelled once it has stored a reply, before it has stored them all
  local db_of = function(i) return ("%s/camp/shards/shard-%d.db"):format(work, i) end
  local stored = wait_for(("shard %d's first stored reply"):format(victim), function()
    local _, n = pairs_in(db_of(victim))
    return n > 0 and n
  end)
  out, rc = sh(("scancel %d_%d"):format(array, victim))
  check(rc == 0, "scancel: %s", out)
  log("cancelled task %d after %d of its %d replies were stored", victim, stored, size[victim])
  wait_for("the merge job after the first array", function() return FINAL[job_states(merge)[0] or ""] end)
  local st = job_states(array)
  check(st[victim] == "CANCELLED", "task %d is %s, not CANCELLED", victim, tostring(st[victim]))
  local _, kept = pairs_in(db_of(victim))
  check(kept < size[victim], "the cancelled task stored all its %d replies: it was not cancelled mid-run", kept)
  for i = 1, SHARDS do
    if i ~= victim then check(st[i] == "COMPLETED", "task %d is %s, not COMPLETED", i, tostring(st[i])) end
  end
  check(job_states(merge)[0] == "FAILED", "the merge after a cancelled shard is %s, not FAILED", tostring(job_states(merge)[0]))
  check(file(work .. "/camp/logs/merge.txt"):find(("not merged: shard(s) %d of %d did not finish"):format(victim, SHARDS), 1, true),
    "the merge's log does not name the unfinished shard %d", victim)
  check(not io.open(work .. "/camp/results.db"), "a merge was written while a shard had not finished")
  local asked_first = #requests()

  -- resubmitted: the finished shards skipped, the cancelled one finished with what it lacked
  out, rc = sh("sh " .. q(work .. "/camp/submit.sh"))
  check(rc == 0, "submit.sh: status %s\n%s", tostring(rc), out)
  local array2, merge2 = slurm.submitted(out)
  check(array2 and merge2, "no job ids in submit.sh's output:\n%s", out)
  log("resubmitted: array job %d, merge job %d", array2, merge2)
  wait_for("the merge job after the second array", function() return FINAL[job_states(merge2)[0] or ""] end)
  st = job_states(array2)
  for i = 1, SHARDS do check(st[i] == "COMPLETED", "resubmitted task %d is %s, not COMPLETED", i, tostring(st[i])) end
  check(job_states(merge2)[0] == "COMPLETED", "the second merge is %s, not COMPLETED", tostring(job_states(merge2)[0]))
  for i = 1, SHARDS do
    local l = file(("%s/camp/logs/shard-%d.txt"):format(work, i))
    local skipped = l:find(("shard %d/%d finished already"):format(i, SHARDS), 1, true) ~= nil
    check(skipped == (i ~= victim), "shard %d's log %s say it was skipped:\n%s", i, skipped and "does" or "does not", l)
  end
  local asked_again = #requests() - asked_first
  check(asked_again == size[victim] - kept, "the resubmitted shard %d asked %d requests; it lacked %d replies",
    victim, asked_again, size[victim] - kept)
  -- all requests: each pair once, and at most the one in flight when the task was cancelled twice
  local total = #requests()
  check(total >= #expected and total <= #expected + 1, "%d requests for %d pairs", total, #expected)

  -- the shards: each pair in exactly one, the one kreach.run.plan names
  local seen = {}
  for i = 1, SHARDS do
    for k, n in pairs((pairs_in(db_of(i)))) do
      check(n == 1, "shard %d holds %s %d times", i, k, n)
      check(shard_of[k] == i, "%s is in shard %d, not in shard %s", k, i, tostring(shard_of[k]))
      check(not seen[k], "%s is in shards %d and %d", k, seen[k] or 0, i)
      seen[k] = i
    end
  end
  -- the merge: every pair exactly once
  local merged, n = pairs_in(work .. "/camp/results.db")
  check(n == #expected, "the merged database holds %d generations for %d pairs", n, #expected)
  for _, k in ipairs(expected) do
    check(seen[k], "%s is in no shard", k)
    check(merged[k] == 1, "the merged database holds %s %d times", k, merged[k] or 0)
  end
  check(file(work .. "/camp/logs/merge.txt"):find("merged 3 databases into camp/results.db", 1, true),
    "the merge's log does not show the merge:\n%s", file(work .. "/camp/logs/merge.txt"))
  log("passed: %d pairs, each once in its shard and once in camp/results.db; %d requests in all (%.1f s)",
    #expected, total, kcore.now() - started)
  return 0
end

local ok, res = xpcall(main, function(e)
  if type(e) == "table" and e.check then return e end
  return debug.traceback(tostring(e), 2)
end)
if not ok then
  io.stdout:write("FAILED: ", type(res) == "table" and res.check or tostring(res), "\n")
  pcall(dump)
  res = 1
end
stop_all()
os.exit(res, true)
