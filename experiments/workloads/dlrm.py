"""DLRM in the structure of facebookresearch/dlrm (dlrm_s_pytorch.py), a workload for `kreach profile`.

Embedding tables as nn.EmbeddingBag (mode sum), with sparse gradients by default (sparse=True, as
dlrm) or dense ones (--grad dense); a bottom MLP (ReLU) on the 13 dense features; the 'dot'
interaction (bmm of the stacked features, strictly lower triangle kept, bottom output
concatenated); a top MLP (ReLU, sigmoid on the last layer); BCE loss; plain SGD over every
parameter. Initialisation as dlrm's: tables uniform(-1/sqrt(n), 1/sqrt(n)), MLP weights
normal(0, sqrt(2/(in+out))), biases normal(0, sqrt(1/out)).

Two configurations:
- kaggle: Criteo Kaggle, 26 tables with dlrm's default Kaggle cardinalities (33.8M rows),
  embedding dim 16, bottom MLP 13-512-256-64-16, top MLP 367-512-256-1, batch 128, lr 0.1
  (dlrm's bench/dlrm_s_criteo_kaggle.sh). 2.2 GB of tables in fp32.
- mlperf: Criteo Terabyte as MLPerf Training v1 (dlrm's --max-ind-range=40000000 cardinalities,
  188M rows), embedding dim 128, bottom MLP 13-512-256-128, top MLP 479-1024-1024-512-256-1,
  lr 1.0 (dlrm's bench/run_and_time.sh), batch 2048 here (MLPerf v1 submissions used 32768 to
  65536: --batch 65536). At full size the tables take 96 GB in fp32 (and as much again for dense
  gradients), so by default each table is capped at 10M rows (--max-rows; 54M rows, 27.5 GB);
  --max-rows 0 gives the full tables, which fit on a 141 GB H200 with sparse gradients only.

Indices are random, Zipf-like by default (a continuous power law of exponent --zipf-alpha over
the rows, then a multiplicative hash so that the hot rows are spread over the table), or
uniform; --pooling indices per table per sample (1, one-hot, for both configurations, as the
datasets have).

    python3 experiments/workloads/dlrm.py --config kaggle --warmup 3 --steps 5
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

KAGGLE_ROWS = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
               27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572]
MLPERF_ROWS = [39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346,
               10, 2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36]
CONFIGS = {
    "kaggle": dict(rows=KAGGLE_ROWS, dim=16, bot=[13, 512, 256, 64, 16], top=[512, 256, 1],
                   batch=128, lr=0.1, max_rows=0),
    "mlperf": dict(rows=MLPERF_ROWS, dim=128, bot=[13, 512, 256, 128], top=[1024, 1024, 512, 256, 1],
                   batch=2048, lr=1.0, max_rows=10_000_000),
}
TINY_MAX_ROWS = 1000
HASH_PRIME = 2654435761  # prime, > every table's row count: idx -> idx * P mod n is a bijection


def table_rows(cardinalities, scale, cap):
    rows = [max(1, int(math.ceil(n * scale))) for n in cardinalities]
    return [min(n, cap) if cap else n for n in rows]


def build_model(torch, rows, dim, bot, top, sparse, interaction):
    nn = torch.nn

    def mlp(sizes, sigmoid_last):
        layers = []
        for i in range(len(sizes) - 1):
            n, m = sizes[i], sizes[i + 1]
            lin = nn.Linear(n, m, bias=True)
            with torch.no_grad():
                lin.weight.normal_(0.0, math.sqrt(2.0 / (m + n)))
                lin.bias.normal_(0.0, math.sqrt(1.0 / m))
            layers.append(lin)
            layers.append(nn.Sigmoid() if sigmoid_last and i == len(sizes) - 2 else nn.ReLU())
        return nn.Sequential(*layers)

    n_feat = len(rows) + 1
    if interaction == "dot":
        top_in = dim + n_feat * (n_feat - 1) // 2
    else:
        top_in = dim * n_feat

    class DLRM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb_l = nn.ModuleList()
            for n in rows:
                e = nn.EmbeddingBag(n, dim, mode="sum", sparse=sparse)
                with torch.no_grad():
                    e.weight.uniform_(-math.sqrt(1.0 / n), math.sqrt(1.0 / n))
                self.emb_l.append(e)
            self.bot_l = mlp(bot, sigmoid_last=False)
            self.top_l = mlp([top_in] + top, sigmoid_last=True)
            li = [i for i in range(n_feat) for j in range(i)]
            lj = [j for i in range(n_feat) for j in range(i)]
            # dlrm builds these index tensors on every forward; kept here so no copy runs in a step
            self.register_buffer("li", torch.tensor(li, dtype=torch.long), persistent=False)
            self.register_buffer("lj", torch.tensor(lj, dtype=torch.long), persistent=False)

        def forward(self, dense_x, offsets, indices):
            x = self.bot_l(dense_x)
            ly = [e(idx, offsets) for e, idx in zip(self.emb_l, indices)]
            if interaction == "dot":
                b, d = x.shape
                t = torch.cat([x] + ly, dim=1).view((b, -1, d))
                z = torch.bmm(t, torch.transpose(t, 1, 2))
                r = torch.cat([x, z[:, self.li, self.lj]], dim=1)
            else:
                r = torch.cat([x] + ly, dim=1)
            return self.top_l(r)

    return DLRM(), top_in


def make_indices(torch, n, count, dist, alpha, gen, device):
    u = torch.rand(count, generator=gen, device=device, dtype=torch.float64)
    if dist == "uniform":
        idx = (u * n).long()
    else:
        # inverse CDF of p(x) ~ x^-alpha on [1, n+1), floored to a row
        if abs(alpha - 1.0) < 1e-9:
            x = torch.exp(u * math.log(n + 1.0))
        else:
            a = 1.0 - alpha
            x = (1.0 + u * ((n + 1.0) ** a - 1.0)) ** (1.0 / a)
        idx = (x.floor().long() - 1)
        idx = idx.clamp_(0, n - 1)
        idx = (idx * HASH_PRIME) % n
    return idx.clamp_(0, n - 1)


def main():
    p = common.make_parser("dlrm", __doc__.split("\n\n")[0], has_seq=False, default_precision="fp32",
                           dropout_help="DLRM has no dropout (must be 0 if given)")
    p.add_argument("--config", choices=sorted(CONFIGS), default="kaggle", help="default kaggle")
    p.add_argument("--grad", choices=("sparse", "dense"), default="sparse",
                   help="embedding gradients: sparse (EmbeddingBag sparse=True, dlrm's) or dense (default sparse)")
    p.add_argument("--table-scale", type=common.positive_float, default=1.0,
                   help="multiply every table's row count by this (default 1.0)")
    p.add_argument("--max-rows", type=common.nonneg_int, default=None,
                   help="cap every table at this many rows, after --table-scale; 0: no cap "
                        "(default: none for kaggle, 10000000 for mlperf; 1000 with --tiny)")
    p.add_argument("--pooling", type=common.positive_int, default=1,
                   help="indices per table per sample (multi-hot); default 1, one-hot")
    p.add_argument("--index-dist", choices=("zipf", "uniform"), default="zipf", help="default zipf")
    p.add_argument("--zipf-alpha", type=common.positive_float, default=1.05,
                   help="exponent of the power law of the indices (default 1.05)")
    p.add_argument("--interaction", choices=("dot", "cat"), default="dot", help="default dot, as dlrm")
    p.add_argument("--lr", type=common.positive_float, default=None,
                   help="SGD learning rate (default: 0.1 kaggle, 1.0 mlperf, as dlrm's scripts)")
    args = p.parse_args()
    if args.dropout:
        common.die("--dropout: DLRM has no dropout")
    if args.grad == "sparse" and args.optimizer_impl in ("foreach", "fused") and args.mode == "train":
        common.die(f"--optimizer-impl {args.optimizer_impl} does not take sparse gradients: "
                   "use --grad dense, or --optimizer-impl default|forloop")
    torch = common.import_torch()
    env = common.setup(torch, args)

    cfg = CONFIGS[args.config]
    cap = args.max_rows if args.max_rows is not None else (TINY_MAX_ROWS if args.tiny else cfg["max_rows"])
    rows = table_rows(cfg["rows"], args.table_scale, cap)
    dim = cfg["dim"]
    batch = args.batch or (16 if args.tiny else cfg["batch"])
    lr = args.lr if args.lr is not None else cfg["lr"]
    elem = 2 if env.param_dtype == torch.bfloat16 else 4
    table_bytes = sum(rows) * dim * elem

    if env.cuda:
        free, total = torch.cuda.mem_get_info(env.device)
        need = table_bytes * (2 if args.grad == "dense" and args.mode == "train" else 1)
        if need > 0.9 * free:
            common.die(f"the tables need {need / 2**30:.1f} GiB (with dense gradients counted) and the GPU has "
                       f"{free / 2**30:.1f} GiB free: lower --max-rows or --table-scale")

    with env.build_ctx():
        model, top_in = build_model(torch, rows, dim, cfg["bot"], cfg["top"], args.grad == "sparse", args.interaction)
    model = model.to(device=env.device, dtype=env.param_dtype)
    n_params = common.param_count(model)
    model.train(args.mode == "train")

    offsets = torch.arange(0, batch * args.pooling, args.pooling, dtype=torch.long, device=env.device)

    def make(gen):
        dense = torch.rand(batch, cfg["bot"][0], generator=gen, device=env.device)
        dense = torch.log1p(dense * 100.0).to(env.param_dtype)  # dlrm's log(x + 1) of counts
        idx = [make_indices(torch, n, batch * args.pooling, args.index_dist, args.zipf_alpha, gen, env.device)
               for n in rows]
        y = (torch.rand(batch, 1, generator=gen, device=env.device) < 0.25).float()  # ~Criteo's click rate
        return dense, idx, y
    data = common.input_pool(env, make)

    fmodel = env.compile(model)
    if args.mode == "train":
        opt = torch.optim.SGD(model.parameters(), lr=lr, **env.optimizer_kwargs())
    else:
        opt = None
    # BCELoss is refused under autocast; dlrm computes it in fp32 anyway.
    step = common.step_function(
        env, data, lambda b: fmodel(b[0], offsets, b[1]), opt,
        loss=lambda out, b: torch.nn.functional.binary_cross_entropy(out.float(), b[2]))

    knobs = common.base_knobs(env, f"dlrm-{args.config}", "experiments/workloads/dlrm.py")
    knobs.update({
        "model": "DLRM (facebookresearch/dlrm structure)" + (" (tiny tables)" if args.tiny else ""),
        "dlrm_config": args.config,
        "dlrm_grad": args.grad,
        "batch": batch, "seq": None, "dropout": 0.0,
        "table_scale": args.table_scale, "max_rows": cap or None,
        "table_rows": rows, "table_rows_total": sum(rows), "table_bytes": table_bytes,
        "embedding_dim": dim, "bottom_mlp": cfg["bot"], "top_mlp": [top_in] + cfg["top"],
        "interaction": args.interaction, "pooling": args.pooling,
        "index_dist": args.index_dist, "zipf_alpha": args.zipf_alpha if args.index_dist == "zipf" else None,
        "param_count": n_params,
        "loss": "binary_cross_entropy (sigmoid output), in fp32" if args.mode == "train" else None,
        "optimizer": f"SGD lr {lr}, no momentum" if args.mode == "train" else None,
    })
    common.run(env, knobs, step, samples_per_step=batch)


if __name__ == "__main__":
    main()
