-- kreach.run.slurm: the scripts of `kreach slurm` as known text for known options (the job
-- array with its shard line, the merge after it, submit.sh), the words of the command line split
-- into kreach slurm's options and the command's, the reserved options refused, shell quoting, and
-- the job ids read back from submit.sh's line. The scripts on a real Slurm cluster:
-- tests/slurm/campaign.lua.
local slurm = require "kreach.run.slurm"

-- docs/cluster.md's example: kreach slurm eval kernelbench-l1 generated/ --array 4 --partition gpu
-- --gres gpu:1 --time 04:00:00, run in /home/me/study with kreach installed in /opt/kreach
local OPTS = { command = "eval", args = { "kernelbench-l1", "generated/" }, array = 4,
  partition = "gpu", gres = "gpu:1", time = "04:00:00", dir = "slurm-eval", workdir = "/home/me/study",
  kreach = "/opt/kreach/bin/kreach" }

local SHARDS = [=[
#!/bin/bash
# kreach eval as a Slurm job array of 4 shards, written by kreach slurm (docs/cluster.md).
# Array task i (1 to 4) runs shard i/4 of the (problem, candidate) pairs into its own results
# database, $dir/shards/shard-i.db, and marks it finished with $dir/shards/shard-i.done. A task
# that finds its shard finished does nothing, so resubmitting the array (sh $dir/submit.sh) runs
# only the shards that did not finish.
# A task killed mid-run (time limit, pre-emption, scancel) runs again with --resume and loses
# only the evaluation that was in flight.
# Edit the #SBATCH lines for your site (--account, --qos, --mem, ...).
#SBATCH --job-name=kreach-eval
#SBATCH --array=1-4
#SBATCH --gres=gpu:1
#SBATCH --time=04:00:00
#SBATCH --partition=gpu
#SBATCH --chdir=/home/me/study
#SBATCH --output=slurm-eval/logs/shard-%a.txt
#SBATCH --open-mode=append
set -eu
kreach=/opt/kreach/bin/kreach
dir=slurm-eval
shard=${SLURM_ARRAY_TASK_ID:?not an array task: SLURM_ARRAY_TASK_ID=i runs shard i}
n=4
if [ -e "$dir/shards/shard-$shard.done" ]; then
  echo "shard $shard/$n finished already ($dir/shards/shard-$shard.done): nothing to do"
  exit 0
fi
echo "shard $shard/$n: job ${SLURM_JOB_ID:-none} on $(hostname), $(date -u)"
"$kreach" eval kernelbench-l1 generated/ --shard "$shard/$n" --db "$dir/shards/shard-$shard.db" --resume
touch "$dir/shards/shard-$shard.done"
]=]

local MERGE = [=[
#!/bin/bash
# The merge of the 4 shards of kreach eval into $dir/results.db, written by kreach slurm
# (docs/cluster.md). submit.sh runs it once the array has ended, however it ended. While a shard
# has not finished, it names the shards, merges nothing and exits 1 (resubmit: sh $dir/submit.sh);
# else it merges every shard's database into $dir/results.db (kreach results merge), replacing an
# older merge.
#SBATCH --job-name=kreach-eval-merge
#SBATCH --partition=gpu
#SBATCH --chdir=/home/me/study
#SBATCH --output=slurm-eval/logs/merge.txt
#SBATCH --open-mode=append
set -eu
kreach=/opt/kreach/bin/kreach
dir=slurm-eval
n=4
missing=
dbs=()
for shard in $(seq 1 $n); do
  [ -e "$dir/shards/shard-$shard.done" ] || missing="$missing $shard"
  if [ -e "$dir/shards/shard-$shard.db" ]; then dbs+=("$dir/shards/shard-$shard.db"); fi
done
if [ -n "$missing" ]; then
  echo "not merged: shard(s)$missing of $n did not finish (their logs: $dir/logs/); resubmit: sh $dir/submit.sh" >&2
  exit 1
fi
rm -f "$dir/results.db" "$dir/results.db-wal" "$dir/results.db-shm"
"$kreach" results merge "${dbs[@]}" -o "$dir/results.db"
]=]

local SUBMIT = [=[
#!/bin/sh
# Submits shards.sbatch (the array of 4 shards of kreach eval), then merge.sbatch to run once the
# array has ended (written by kreach slurm, docs/cluster.md). Run it again to resubmit: finished
# shards are skipped.
set -eu
cd /home/me/study
array=$(sbatch --parsable slurm-eval/shards.sbatch)
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterany:$array slurm-eval/merge.sbatch)
merge=${merge%%;*}
echo "submitted: array job $array (4 shards), merge job $merge (after the array); the merged results: slurm-eval/results.db"
]=]

describe("kreach slurm's scripts", function()
  it("are known text for known options", function()
    local f = slurm.scripts(OPTS)
    assert.equals(SHARDS, f.shards)
    assert.equals(MERGE, f.merge)
    assert.equals(SUBMIT, f.submit)
  end)

  it("are what docs/cluster.md shows --dry-run printing", function()
    local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
    local fh = assert(io.open(here .. "/../../docs/cluster.md", "rb"))
    local doc = fh:read("a")
    fh:close()
    local shown = slurm.dry_run(OPTS)
    assert.equals(SHARDS, shown:match("^# ==== slurm%-eval/shards%.sbatch\n(.-)\n# ==== "))
    assert.truthy(doc:find("```sh\n$ kreach slurm eval kernelbench-l1 generated/ --array 4 --partition gpu --gres gpu:1 --time 04:00:00 --dry-run\n"
      .. shown .. "```\n", 1, true), "docs/cluster.md does not show what --dry-run prints (kreach.run.slurm.dry_run)")
  end)

  it("leave out the #SBATCH lines not asked for; generate writes each shard's candidates apart and has no --resume", function()
    local f = slurm.scripts{ command = "generate", args = { "19", "--model", "my model.lua" }, array = 2, dir = "camp/",
      workdir = "/w", kreach = "/k" }
    assert.is_nil(f.shards:find("--partition", 1, true))
    assert.is_nil(f.shards:find("--gres", 1, true))
    assert.is_nil(f.shards:find("--time", 1, true))
    assert.is_nil(f.merge:find("--partition", 1, true))
    assert.truthy(f.shards:find("\n#SBATCH --array=1-2\n", 1, true))
    assert.truthy(f.shards:find("\ndir=camp\n", 1, true))
    assert.truthy(f.shards:find([[
"$kreach" generate 19 --model 'my model.lua' --shard "$shard/$n" --db "$dir/shards/shard-$shard.db" --out "$dir/shards/shard-$shard"
]], 1, true))
    assert.truthy(f.shards:find("asks only what its\n# database does not hold", 1, true))
    -- bench resumes as eval does
    local b = slurm.scripts{ command = "bench", args = { "dlrm-bench" }, array = 3, dir = "d", workdir = "/w", kreach = "/k" }
    assert.truthy(b.shards:find([["$kreach" bench dlrm-bench --shard "$shard/$n" --db "$dir/shards/shard-$shard.db" --resume]], 1, true))
  end)

  it("quote a word only where a shell would read something in it", function()
    assert.equals("kernelbench-l1", slurm.word("kernelbench-l1"))
    assert.equals("a/b_c.lua", slurm.word("a/b_c.lua"))
    assert.equals("--size=n=8", slurm.word("--size=n=8"))
    assert.equals("'a b'", slurm.word("a b"))
    assert.equals("'$HOME'", slurm.word("$HOME"))
    assert.equals("'it'\\''s'", slurm.word("it's"))
    assert.equals("''", slurm.word(""))
  end)

  it("read the job ids back from submit.sh's line", function()
    local a, m = slurm.submitted("submitted: array job 12 (4 shards), merge job 13 (after the array); the merged results: d/results.db\n")
    assert.equals(12, a)
    assert.equals(13, m)
    assert.is_nil((slurm.submitted("sbatch: error: Batch job submission failed")))
  end)
end)

describe("kreach slurm's words", function()
  it("take kreach slurm's options from anywhere, as --opt value or --opt=value, and leave the command's in order", function()
    local o, cmd, rest = slurm.split{ "--array", "3", "eval", "kernelbench-l1", "gen/", "--dtype", "bf16",
      "--partition=gpu", "--gres", "gpu:1", "--time", "1:00:00", "--dry-run", "--trials", "2" }
    assert.equals("eval", cmd)
    assert.same({ "kernelbench-l1", "gen/", "--dtype", "bf16", "--trials", "2" }, rest)
    assert.equals(3, o.array)
    assert.equals("gpu", o.partition)
    assert.equals("gpu:1", o.gres)
    assert.equals("1:00:00", o.time)
    assert.is_true(o.dry_run)
    assert.equals("slurm-eval", o.dir)
    local o2 = slurm.split{ "bench", "dlrm-bench", "--array=2", "--dir", "camp", "--no-submit" }
    assert.equals("camp", o2.dir)
    assert.is_true(o2.no_submit)
    assert.is_nil(o2.dry_run)
    assert.is_true(slurm.split{ "--help" }.help)
  end)

  it("refuse what no campaign could run, naming it", function()
    local cases = {
      { { "eval", "x", "y" }, "^%-%-array N is required" },
      { { "eval", "x", "y", "--array", "0" }, "^%-%-array takes the number of shards, a positive integer, not '0'" },
      { { "eval", "x", "y", "--array", "2.5" }, "not '2%.5'" },
      { { "eval", "x", "y", "--array" }, "^%-%-array takes a value" },
      { { "eval", "x", "y", "--array", "2", "--dry-run=yes" }, "^%-%-dry%-run takes no value" },
      { { "--array", "2" }, "^name the command" },
      { { "check", "19", "c.lua", "--array", "2" }, "runs eval, bench, generate as shards, not 'check'" },
      { { "eval", "x", "y", "--array", "2", "--db", "r.db" }, "^%-%-db is kreach slurm's to set: each shard has its own database" },
      { { "eval", "x", "y", "--array", "2", "--db=r.db" }, "^%-%-db is kreach slurm's to set" },
      { { "bench", "x", "--array", "2", "--resume" }, "^%-%-resume is kreach slurm's to set" },
      { { "eval", "x", "y", "--array", "2", "--shard", "1/2" }, "^%-%-shard is kreach slurm's to set" },
      { { "generate", "x", "--model", "m", "--array", "2", "--out", "o" }, "^%-%-out is kreach slurm's to set: each shard of generate" },
      { { "eval", "x", "y", "--array", "2", "--partition", "" }, "^%-%-partition: an empty value" },
    }
    for _, c in ipairs(cases) do
      local o, why = slurm.split(c[1])
      assert.is_nil(o, table.concat(c[1], " "))
      assert.matches(c[2], why)
    end
  end)
end)
