# experiments/paper/run.lua --collect: the GPU parts of the study, into the data folder, named
# <machine>-<date>-<what>; --dry-run prints them in order, --steps picks some, --model adds a
# model's candidates (experiments/paper/collect.lua)
$ kreach experiments/paper/run.lua --collect --dry-run --machine h100 --steps dlrm,trivial
= # dlrm
~ kreach eval dlrm%-bench examples/dlrm%-bench %-%-db %$W/dl%.db$
~ kreach results export %-%-db %$W/dl%.db %-%-format jsonl %-o experiments/paper/data/h100%-%d%d%d%d%-%d%d%-%d%d%-dlrm%-bench%.jsonl$
~ kreach experiments/dlrm/project%.lua %-%-db %$W/prof%.db %-%-results %$W/dl%.db %-%-json experiments/paper/data/h100%-[%d%-]+%-dlrm%-project%.json > experiments/paper/data/h100%-[%d%-]+%-dlrm%-project%.txt$
~ kreach experiments/dlrm/measure%.lua %-%-results %$W/dl%.db %-%-json experiments/paper/data/h100%-[%d%-]+%-dlrm%-measure%.json
= # trivial
~ kreach scan%-trivial kernelbench%-l1 %-%-dtype bf16 %-%-json > experiments/paper/data/h100%-[%d%-]+%-trivial%-bf16%.json$
~ kreach scan%-trivial kernelbench%-l1 %-%-dtype f32 %-%-json > experiments/paper/data/h100%-[%d%-]+%-trivial%-f32%.json$
! ^# examples
! ^# scale
$ kreach experiments/paper/run.lua --collect --dry-run --machine h200 --model 'org/model v2'
= # examples
= # scale
= # model
~ kreach generate kernelbench%-l1%-repr %-%-model 'org/model v2' .* %-%-eval
~ %-o experiments/paper/data/h200%-[%d%-]+%-org%-model%-v2%.jsonl$
$ kreach experiments/paper/run.lua --collect --steps dlrm,nope
? 1
~ %-%-steps: no step "nope"
# with the GPU hidden, --collect measures nothing and says so
$ CUDA_VISIBLE_DEVICES= kreach experiments/paper/run.lua --collect --steps trivial
? 77
~ no GPU here
