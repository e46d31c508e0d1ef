-- kreach slurm eval|bench|generate ... --array N [--partition P] [--gres G] [--time T] [--dir D]
-- [--dry-run | --no-submit]: a campaign as a Slurm job array of N shards (docs/cluster.md). The scripts are
-- kreach.run.slurm's (the array, the merge after it, submit.sh); this file checks the command's
-- words with the command's own parser, writes the files under --dir (default slurm-<command>)
-- and runs submit.sh (--no-submit: not), or with --dry-run prints them and writes nothing.
local argparse = require "argparse"
local cli = require "kreach.cli"
local core = require "kreach.core"
local errors = require "kreach.errors"
local lfs = require "lfs"
local atomic = require "kreach.atomic"
local slurm = require "kreach.run.slurm"
local text = require "kreach.text"

local USAGE = [[
kreach slurm takes its own options from anywhere on the line; every other word is the command's:
  --array N        the number of shards (array tasks 1 to N; task i runs --shard i/N)
  --partition P    #SBATCH --partition
  --gres G         #SBATCH --gres of each task, such as gpu:1
  --time T         #SBATCH --time of each task, such as 04:00:00
  --dir D          the campaign's directory: scripts, shards, logs, results.db (default slurm-<command>)
  --dry-run        print the scripts; write and submit nothing
  --no-submit      write the scripts (to edit them for the site); submit nothing
The command's own --db, --shard, --resume (and generate's --out) are kreach slurm's to set.
Resubmit with: sh D/submit.sh (finished shards are skipped). docs/cluster.md.]]

-- the command's words checked by its own parser, as one task will run them
local function check_words(command, words, n)
  local cmd = cli.load_command(command)
  local p = argparse("kreach " .. command, cmd.summary)
  cmd.parser(p)
  local argv = {}
  for i, w in ipairs(cli.join_negative(words)) do argv[i] = w end
  for _, w in ipairs{ "--shard", ("%d/%d"):format(n, n), "--db", "shard.db" } do argv[#argv + 1] = w end
  local ok, err = p:pparse(argv)
  if not ok then errors.usage("kreach %s: %s", command, err) end
end

local function absolute(path)
  if path:sub(1, 1) == "/" then return path end
  return (lfs.currentdir() .. "/" .. path):gsub("/%./", "/")
end

return {
  summary = "Run a campaign (eval, bench, generate) as a Slurm job array of shards, merged when it ends.",
  parser = function(p)
    p:handle_options(false)
    p:argument("words", "eval|bench|generate, its arguments and options, and kreach slurm's (below).")
      :args("*")
    p:epilog(USAGE)
  end,
  run = function(args)
    local opts, command, words = slurm.split(args.words)
    if not opts then errors.usage(command) end
    if opts.help then
      io.write("usage: kreach slurm eval|bench|generate ... --array N [--partition P] [--gres G] [--time T] [--dir D] [--dry-run | --no-submit]\n\n",
        USAGE, "\n")
      return 0
    end
    check_words(command, words, opts.array)
    local workdir = lfs.currentdir()
    local p = slurm.paths(opts.dir)
    -- #SBATCH lines are read by sbatch, not by a shell: their values must need no quotes
    for what, v in pairs{ ["the working directory"] = workdir, ["--dir"] = p.dir, ["--partition"] = opts.partition,
                          ["--gres"] = opts.gres, ["--time"] = opts.time } do
      if v and slurm.word(v) ~= v then
        errors.usage("%s '%s' holds characters that an #SBATCH line cannot carry (spaces, quotes, $...)", what, text.clean(v, 200))
      end
    end
    local o = { command = command, args = words, array = opts.array, partition = opts.partition,
      gres = opts.gres, time = opts.time, dir = p.dir, workdir = workdir, kreach = absolute(core.executable()) }
    if opts.dry_run then
      io.write(slurm.dry_run(o))
      return 0
    end
    local order = slurm.files(o)
    -- a directory of another campaign (or scripts edited since) is not overwritten: its shards
    -- would mix with this one's
    for _, f in ipairs(order) do
      local fh = io.open(f[1], "rb")
      if fh then
        local old = fh:read("a")
        fh:close()
        if old ~= f[2] then
          errors.usage("%s exists and is not what this command writes (another campaign's, or edited): resubmit it with sh %s, or choose another --dir",
            f[1], p.submit)
        end
      end
    end
    for _, d in ipairs{ p.shard_dir, p.logs } do
      local ok, err = atomic.mkdirs(d)
      if not ok then errors.file(d, "cannot create the directory: " .. tostring(err)) end
    end
    for _, f in ipairs(order) do
      local w, err, status = atomic.open(f[1])
      if not w then errors.file(f[1], tostring(err), status) end
      w:write(f[2])
      local ok, cerr = w:commit()
      if not ok then errors.file(f[1], tostring(cerr)) end
    end
    io.write(("wrote %s, %s and %s\n"):format(p.shards, p.merge, p.submit))
    if opts.no_submit then
      io.write(("submit with: sh %s\n"):format(slurm.word(p.submit)))
      return 0
    end
    io.flush()
    local ok, how, status = os.execute("sh " .. text.shell_quote(p.submit))
    if not ok then
      errors.raise(errors.STATUS.failed, ("sh %s failed (%s %s): the scripts are written; submit them with it once sbatch works"):format(
        p.submit, tostring(how), tostring(status)), "slurm")
    end
    return 0
  end,
}
