-- kreach.run.slurm: a campaign as a Slurm job array (`kreach slurm eval|bench|generate ...
-- --array N`, docs/cluster.md). This module writes the scripts' text, a pure function of the
-- options, and nothing else: kreach.cmd.slurm writes the files and runs submit.sh.
--
-- A campaign's directory (--dir, default slurm-<command>) holds:
--   shards.sbatch   the job array: task i (1 to N, SLURM_ARRAY_TASK_ID) runs
--                   `kreach <command> ... --shard i/N --db DIR/shards/shard-i.db` (with --resume
--                   for eval and bench, whose --shard makes it begin the run when none was
--                   interrupted; generate resumes by itself: a stored reply is never asked again)
--                   and touches DIR/shards/shard-i.done when kreach exits 0. A task that finds
--                   its .done file does nothing: a resubmitted array runs only unfinished shards.
--   merge.sbatch    after the array, however it ended: names the shards that did not finish and
--                   exits 1, or merges every shard's database into DIR/results.db (kreach
--                   results merge), replacing an older merge.
--   submit.sh       sbatch of the array, then of the merge with --dependency=afterany on it; run
--                   again to resubmit.
--   shards/, logs/  the shards' databases (and generate's candidates, shards/shard-i/), and the
--                   tasks' output (logs/shard-i.txt, appended to by every attempt; logs/merge.txt).
-- The run stage's module (kreach.run.plan's header); it requires only kreach.text.
local text = require "kreach.text"

local M = {}

-- The commands that run as shards, and what their tasks' lines add.
M.COMMANDS = { "eval", "bench", "generate" }
local RESUMES = { eval = true, bench = true } -- the rest resume by themselves

-- kreach slurm's own options: name -> takes a value. Everything else on the line is the command's.
M.OPTIONS = { ["--array"] = true, ["--partition"] = true, ["--gres"] = true, ["--time"] = true, ["--dir"] = true,
              ["--dry-run"] = false, ["--no-submit"] = false }

-- The command's options that kreach slurm sets itself, and why the user may not.
M.RESERVED = {
  ["--db"] = "each shard has its own database (DIR/shards/shard-i.db), merged into DIR/results.db",
  ["--shard"] = "each array task runs its own shard",
  ["--resume"] = "each task of eval and bench resumes its shard's run when there is one",
  ["--out"] = "each shard of generate writes its candidates to DIR/shards/shard-i/",
}

-- word(s) -> s as one shell word (kreach.text.shell_word)
M.word = text.shell_word

local function words(list)
  local t = {}
  for i, w in ipairs(list) do t[i] = M.word(w) end
  return table.concat(t, " ")
end

-- split(argv) -> opts, command, args: kreach slurm's options taken out of the words (from
-- anywhere, as --opt value or --opt=value), the first other word (the command) and the rest (the
-- command's words, in order); or nil and a usage message. opts: array (an integer >= 1),
-- partition, gres, time, dir, dry_run, no_submit, help.
function M.split(argv)
  local opts, rest = {}, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local name, value = a:match("^(%-%-[%w%-]+)=(.*)$")
    name = name or a
    if a == "-h" or a == "--help" then
      opts.help = true
    elseif M.OPTIONS[name] ~= nil then
      if M.OPTIONS[name] then
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then return nil, ("%s takes a value"):format(name) end
        end
        opts[name:sub(3):gsub("%-", "_")] = value
      elseif value then
        return nil, ("%s takes no value"):format(name)
      else
        opts[name:sub(3):gsub("%-", "_")] = true
      end
    else
      rest[#rest + 1] = a
    end
    i = i + 1
  end
  if opts.help then return opts end
  local command = table.remove(rest, 1)
  if not command then return nil, "name the command: kreach slurm eval|bench|generate ... --array N" end
  local known = false
  for _, c in ipairs(M.COMMANDS) do known = known or c == command end
  if not known then
    return nil, ("kreach slurm runs %s as shards, not '%s'"):format(table.concat(M.COMMANDS, ", "), text.clean(command, 64))
  end
  if not opts.array then return nil, "--array N is required: the number of shards (array tasks)" end
  local n = math.tointeger(tonumber(opts.array))
  if not n or n < 1 or not tostring(opts.array):match("^%d+$") then
    return nil, ("--array takes the number of shards, a positive integer, not '%s'"):format(text.clean(opts.array, 64))
  end
  opts.array = n
  for _, k in ipairs{ "partition", "gres", "time", "dir" } do
    if opts[k] == "" then return nil, ("--%s: an empty value"):format(k) end
    if opts[k] and opts[k]:find("[%c]") then return nil, ("--%s: a control character in the value"):format(k) end
  end
  for _, a in ipairs(rest) do
    local n2 = a:match("^(%-%-[%w%-]+)")
    local why = n2 and M.RESERVED[n2]
    if why and (n2 ~= "--out" or command == "generate") then
      return nil, ("%s is kreach slurm's to set: %s"):format(n2, why)
    end
  end
  opts.dir = opts.dir or ("slurm-" .. command)
  return opts, command, rest
end

-- paths(dir) -> the campaign's files under dir (as given: relative to the working directory)
function M.paths(dir)
  dir = dir:gsub("(.)/+$", "%1")
  return { dir = dir, shards = dir .. "/shards.sbatch", merge = dir .. "/merge.sbatch", submit = dir .. "/submit.sh",
           shard_dir = dir .. "/shards", logs = dir .. "/logs", results = dir .. "/results.db" }
end

-- task_line(o) -> the kreach command of a task (with $shard, $n and $dir of the script)
local function task_line(o)
  local parts = { '"$kreach"', M.word(o.command) }
  if #o.args > 0 then parts[#parts + 1] = words(o.args) end
  parts[#parts + 1] = '--shard "$shard/$n" --db "$dir/shards/shard-$shard.db"'
  if o.command == "generate" then parts[#parts + 1] = '--out "$dir/shards/shard-$shard"' end
  if RESUMES[o.command] then parts[#parts + 1] = "--resume" end
  return table.concat(parts, " ")
end

local WHAT = { eval = "(problem, candidate) pairs", bench = "problems", generate = "(problem, sample) pairs" }

-- scripts(o) -> { shards =, merge =, submit = }: the three files' text. o: command (eval, bench,
-- generate), args (the command's words), array (N), partition, gres, time (nil: not asked for),
-- dir (the campaign's directory as given), workdir (the absolute directory the scripts run in:
-- the command's words are relative to it), kreach (the kreach binary's absolute path).
function M.scripts(o)
  local p = M.paths(o.dir)
  local n = o.array
  local function sbatch_lines(extra, job, output)
    local l = { ("#SBATCH --job-name=%s"):format(M.word(job)) }
    for _, x in ipairs(extra) do l[#l + 1] = x end
    if o.partition then l[#l + 1] = "#SBATCH --partition=" .. M.word(o.partition) end
    l[#l + 1] = "#SBATCH --chdir=" .. M.word(o.workdir)
    l[#l + 1] = "#SBATCH --output=" .. M.word(output)
    l[#l + 1] = "#SBATCH --open-mode=append"
    return table.concat(l, "\n")
  end
  local extra = { ("#SBATCH --array=1-%d"):format(n) }
  if o.gres then extra[#extra + 1] = "#SBATCH --gres=" .. M.word(o.gres) end
  if o.time then extra[#extra + 1] = "#SBATCH --time=" .. M.word(o.time) end
  local killed = RESUMES[o.command]
    and { "# A task killed mid-run (time limit, pre-emption, scancel) runs again with --resume and loses",
          "# only the evaluation that was in flight." }
    or { "# A task killed mid-run (time limit, pre-emption, scancel) runs again and asks only what its",
         "# database does not hold." }
  local shards = table.concat({
    "#!/bin/bash",
    ("# kreach %s as a Slurm job array of %d shards, written by kreach slurm (docs/cluster.md)."):format(o.command, n),
    ("# Array task i (1 to %d) runs shard i/%d of the %s into its own results"):format(n, n, WHAT[o.command]),
    "# database, $dir/shards/shard-i.db, and marks it finished with $dir/shards/shard-i.done. A task",
    "# that finds its shard finished does nothing, so resubmitting the array (sh $dir/submit.sh) runs",
    "# only the shards that did not finish.",
    killed[1], killed[2],
    "# Edit the #SBATCH lines for your site (--account, --qos, --mem, ...).",
    sbatch_lines(extra, "kreach-" .. o.command, p.logs .. "/shard-%a.txt"),
    "set -eu",
    "kreach=" .. M.word(o.kreach),
    "dir=" .. M.word(p.dir),
    "shard=${SLURM_ARRAY_TASK_ID:?not an array task: SLURM_ARRAY_TASK_ID=i runs shard i}",
    "n=" .. n,
    'if [ -e "$dir/shards/shard-$shard.done" ]; then',
    '  echo "shard $shard/$n finished already ($dir/shards/shard-$shard.done): nothing to do"',
    "  exit 0",
    "fi",
    'echo "shard $shard/$n: job ${SLURM_JOB_ID:-none} on $(hostname), $(date -u)"',
    task_line(o),
    'touch "$dir/shards/shard-$shard.done"',
    "",
  }, "\n")
  local merge = table.concat({
    "#!/bin/bash",
    ("# The merge of the %d shards of kreach %s into $dir/results.db, written by kreach slurm"):format(n, o.command),
    "# (docs/cluster.md). submit.sh runs it once the array has ended, however it ended. While a shard",
    "# has not finished, it names the shards, merges nothing and exits 1 (resubmit: sh $dir/submit.sh);",
    "# else it merges every shard's database into $dir/results.db (kreach results merge), replacing an",
    "# older merge.",
    sbatch_lines({}, "kreach-" .. o.command .. "-merge", p.logs .. "/merge.txt"),
    "set -eu",
    "kreach=" .. M.word(o.kreach),
    "dir=" .. M.word(p.dir),
    "n=" .. n,
    "missing=",
    "dbs=()",
    "for shard in $(seq 1 $n); do",
    '  [ -e "$dir/shards/shard-$shard.done" ] || missing="$missing $shard"',
    '  if [ -e "$dir/shards/shard-$shard.db" ]; then dbs+=("$dir/shards/shard-$shard.db"); fi',
    "done",
    'if [ -n "$missing" ]; then',
    '  echo "not merged: shard(s)$missing of $n did not finish (their logs: $dir/logs/); resubmit: sh $dir/submit.sh" >&2',
    "  exit 1",
    "fi",
    'rm -f "$dir/results.db" "$dir/results.db-wal" "$dir/results.db-shm"',
    '"$kreach" results merge "${dbs[@]}" -o "$dir/results.db"',
    "",
  }, "\n")
  local submit = table.concat({
    "#!/bin/sh",
    ("# Submits shards.sbatch (the array of %d shards of kreach %s), then merge.sbatch to run once the"):format(n, o.command),
    "# array has ended (written by kreach slurm, docs/cluster.md). Run it again to resubmit: finished",
    "# shards are skipped.",
    "set -eu",
    "cd " .. M.word(o.workdir),
    "array=$(sbatch --parsable " .. M.word(p.shards) .. ")",
    "array=${array%%;*}",
    "merge=$(sbatch --parsable --dependency=afterany:$array " .. M.word(p.merge) .. ")",
    "merge=${merge%%;*}",
    ('echo "submitted: array job $array (%d shards), merge job $merge (after the array); the merged results: %s"'):format(n,
      p.results),
    "",
  }, "\n")
  return { shards = shards, merge = merge, submit = submit }
end

-- files(o) -> { {path, text}, ... }: the three files in the order they are written and printed
function M.files(o)
  local p, t = M.paths(o.dir), M.scripts(o)
  return { { p.shards, t.shards }, { p.merge, t.merge }, { p.submit, t.submit } }
end

-- dry_run(o) -> what --dry-run prints: each file under a "# ==== <path>" line
function M.dry_run(o)
  local out = {}
  for _, f in ipairs(M.files(o)) do out[#out + 1] = ("# ==== %s\n%s"):format(f[1], f[2]) end
  return table.concat(out, "\n")
end

-- submitted(output) -> the array's and the merge's job ids from submit.sh's last line, or nil
function M.submitted(output)
  local a, m = tostring(output):match("submitted: array job (%d+) %(%d+ shards%), merge job (%d+)")
  return a and math.tointeger(tonumber(a)), m and math.tointeger(tonumber(m))
end

return M
