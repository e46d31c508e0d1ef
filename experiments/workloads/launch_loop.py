"""A launch-bound loop of tiny kernels, a workload for measuring what tracing costs a launch.

Each step launches --ops in-place additions (x.add_(1.0)) on a float32 tensor of --batch
elements (default 1): PyTorch's dispatch and one kernel launch each, with no work to speak of on
the GPU, so the step time is host time and any cost that a profiler adds to a launch shows up
whole. --sync-every K waits for the GPU after every K launches (0, the default: only at the end
of the step, as every workload does), which puts the GPU's side of each kernel (its latency, and
whatever a profiler adds to it) on the host's path as well.

    python3 experiments/workloads/launch_loop.py --ops 2000 --warmup 3 --steps 20
    python3 experiments/workloads/launch_loop.py --ops 500 --sync-every 1
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def main():
    p = common.make_parser("launch-loop", __doc__.split("\n\n")[0], has_seq=False, default_precision="fp32",
                           dropout_help="the loop has no dropout (must be 0 if given)")
    p.set_defaults(mode="infer")
    p.add_argument("--ops", type=common.positive_int, default=None,
                   help="kernel launches a step (default 2000; 20 with --tiny)")
    p.add_argument("--sync-every", type=common.nonneg_int, default=0,
                   help="wait for the GPU after every K launches; 0: only at the end of the step (default 0)")
    args = p.parse_args()
    if args.mode != "infer":
        common.die("--mode train: the loop has no training step")
    if args.dropout:
        common.die("--dropout: the loop has no dropout")
    if args.compile:
        common.die("--compile: the loop is made of single launches on purpose")
    torch = common.import_torch()
    env = common.setup(torch, args)

    ops = args.ops or (20 if args.tiny else 2000)
    batch = args.batch or 1
    x = torch.zeros(batch, dtype=env.param_dtype, device=env.device)
    every = args.sync_every

    def step(i):
        for j in range(1, ops + 1):
            x.add_(1.0)
            if every and j % every == 0:
                env.sync()
        return None

    knobs = common.base_knobs(env, "launch-loop", "experiments/workloads/launch_loop.py")
    knobs.update({
        "batch": batch,
        "seq": None,
        "dropout": None,
        "ops_per_step": ops,
        "sync_every": every,
        "param_count": 0,
        "kernel": "x.add_(1.0) in place, one elementwise kernel a launch",
    })
    common.run(env, knobs, step, samples_per_step=ops)


if __name__ == "__main__":
    main()
