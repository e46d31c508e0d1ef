# kreach slurm (docs/cluster.md) without a cluster: --dry-run prints the scripts and writes nothing;
# --no-submit writes them; a script edited since (or another campaign's) is never overwritten;
# the command's words are checked by its own parser before anything is written; kreach slurm's
# own options refused where wrong. Files go to a directory named after this transcript's process
# ($PPID), removed at the end. The scripts on a real Slurm cluster: tests/slurm/campaign.lua.
$ D=${TMPDIR:-/tmp}/kreach-slurm-t.$PPID; rm -rf $D; mkdir -p $D && cd $D && kreach slurm eval 19 cands/ --array 3 --partition gpu --gres gpu:1 --time 01:00:00 --dry-run
= # ==== slurm-eval/shards.sbatch
= #SBATCH --array=1-3
= #SBATCH --partition=gpu
= #SBATCH --gres=gpu:1
= #SBATCH --time=01:00:00
= #SBATCH --output=slurm-eval/logs/shard-%a.txt
~ ^kreach=/.*kreach$
~ ^"%$kreach" eval 19 cands/ %-%-shard "%$shard/%$n" %-%-db "%$dir/shards/shard%-%$shard%.db" %-%-resume$
= # ==== slurm-eval/merge.sbatch
= # ==== slurm-eval/submit.sh
~ ^merge=%$%(sbatch %-%-parsable %-%-dependency=afterany:%$array slurm%-eval/merge%.sbatch%)$
$ D=${TMPDIR:-/tmp}/kreach-slurm-t.$PPID; ls -A $D | wc -l
~ ^ *0$
# --no-submit: written, the directories made, nothing submitted
$ D=${TMPDIR:-/tmp}/kreach-slurm-t.$PPID; cd $D && kreach slurm bench dlrm-bench --array 2 --dir camp --no-submit && ls camp
= wrote camp/shards.sbatch, camp/merge.sbatch and camp/submit.sh
= submit with: sh camp/submit.sh
= logs
= shards
= submit.sh
# the same again: the same files, fine; an edited script is not overwritten
$ D=${TMPDIR:-/tmp}/kreach-slurm-t.$PPID; cd $D && kreach slurm bench dlrm-bench --array 2 --dir camp --no-submit
= wrote camp/shards.sbatch, camp/merge.sbatch and camp/submit.sh
$ D=${TMPDIR:-/tmp}/kreach-slurm-t.$PPID; cd $D && echo '#SBATCH --account=mine' >> camp/shards.sbatch && kreach slurm bench dlrm-bench --array 3 --dir camp --no-submit
? 2
= kreach slurm: camp/shards.sbatch exists and is not what this command writes (another campaign's, or edited): resubmit it with sh camp/submit.sh, or choose another --dir
$ D=${TMPDIR:-/tmp}/kreach-slurm-t.$PPID; tail -n 1 $D/camp/shards.sbatch
= #SBATCH --account=mine
# the command's words, checked by its parser; the options kreach slurm sets; its own
$ kreach slurm eval 19 --array 2 --dry-run
? 2
~ ^kreach slurm: kreach eval: missing argument 'candidates'
$ kreach slurm eval 19 c.lua --array 2 --no-such-option --dry-run
? 2
~ ^kreach slurm: kreach eval: unknown option '%-%-no%-such%-option'
$ kreach slurm eval 19 c.lua --array 2 --db x.db --dry-run
? 2
= kreach slurm: --db is kreach slurm's to set: each shard has its own database (DIR/shards/shard-i.db), merged into DIR/results.db
$ kreach slurm eval 19 c.lua --dry-run
? 2
= kreach slurm: --array N is required: the number of shards (array tasks)
$ kreach slurm lint 19 c.lua --array 2
? 2
= kreach slurm: kreach slurm runs eval, bench, generate as shards, not 'lint'
$ kreach slurm eval 19 c.lua --array 2 --partition 'my gpus' --dry-run
? 2
= kreach slurm: --partition 'my gpus' holds characters that an #SBATCH line cannot carry (spaces, quotes, $...)
$ kreach slurm --help
~ ^usage: kreach slurm eval|bench|generate
~ %-%-array N +the number of shards
$ rm -rf ${TMPDIR:-/tmp}/kreach-slurm-t.$PPID
