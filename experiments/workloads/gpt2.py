"""GPT-2 (small 124M, medium 350M, large 774M, xl 1.5B) in plain PyTorch, a workload for `kreach profile`.

The model is GPT-2's (as in nanoGPT and Hugging Face's GPT2LMHeadModel): learned token and
position embeddings, pre-norm blocks (LayerNorm, causal self-attention through one fused QKV
projection, LayerNorm, MLP 4x with tanh-GELU), a final LayerNorm and an LM head tied to the token
embedding. Random weights (normal 0.02, residual projections scaled by 1/sqrt(2 n_layer)),
random tokens. Train: forward, cross-entropy, backward, AdamW (lr 6e-4, betas 0.9/0.95,
weight decay 0.1 on matrices). Infer: forward of the whole sequence under no_grad, logits for
every position (a prefill).

    python3 experiments/workloads/gpt2.py --size small --mode train --warmup 3 --steps 5
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SIZES = {  # n_layer, n_embd, n_head
    "small": (12, 768, 12),
    "medium": (24, 1024, 16),
    "large": (36, 1280, 20),
    "xl": (48, 1600, 25),
}
VOCAB = 50257
N_POSITIONS = 1024
TINY = dict(n_layer=2, n_embd=64, n_head=4, vocab=503, seq=32, batch=2)


def build_model(torch, cfg):
    nn = torch.nn
    F = torch.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(cfg["n_embd"], 3 * cfg["n_embd"])
            self.c_proj = nn.Linear(cfg["n_embd"], cfg["n_embd"])
            self.resid_dropout = nn.Dropout(cfg["dropout"])

        def forward(self, x, future):
            b, t, c = x.shape
            nh = cfg["n_head"]
            q, k, v = self.c_attn(x).split(c, dim=2)
            q = q.view(b, t, nh, c // nh).transpose(1, 2)
            k = k.view(b, t, nh, c // nh).transpose(1, 2)
            v = v.view(b, t, nh, c // nh).transpose(1, 2)
            y = common.causal_attention(torch, q, k, v, impl=cfg["attention"], future=future,
                                        dropout_p=cfg["dropout"] if self.training else 0.0)
            y = y.transpose(1, 2).contiguous().view(b, t, c)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(cfg["n_embd"], 4 * cfg["n_embd"])
            self.c_proj = nn.Linear(4 * cfg["n_embd"], cfg["n_embd"])
            self.dropout = nn.Dropout(cfg["dropout"])

        def forward(self, x):
            return self.dropout(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(cfg["n_embd"])
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(cfg["n_embd"])
            self.mlp = MLP()

        def forward(self, x, future):
            x = x + self.attn(self.ln_1(x), future)
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg["vocab_padded"], cfg["n_embd"])
            self.wpe = nn.Embedding(cfg["n_positions"], cfg["n_embd"])
            self.drop = nn.Dropout(cfg["dropout"])
            self.h = nn.ModuleList(Block() for _ in range(cfg["n_layer"]))
            self.ln_f = nn.LayerNorm(cfg["n_embd"])
            self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab_padded"], bias=False)
            self.lm_head.weight = self.wte.weight
            if cfg["attention"] == "eager":
                self.register_buffer("future", common.causal_future_mask(torch, cfg["n_positions"], None),
                                     persistent=False)
            else:
                self.future = None
            self.apply(self._init)
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / (2 * cfg["n_layer"]) ** 0.5)

        @staticmethod
        def _init(m):
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)

        def forward(self, idx):
            t = idx.size(1)
            pos = torch.arange(t, dtype=torch.long, device=idx.device)
            x = self.drop(self.wte(idx) + self.wpe(pos))
            for block in self.h:
                x = block(x, self.future)
            return self.lm_head(self.ln_f(x))

    return GPT()


def main():
    p = common.make_parser("gpt2", __doc__.split("\n\n")[0], has_seq=True,
                           dropout_help="dropout on embeddings, attention and residuals "
                                        "(default 0.1 in train, as GPT-2's config; 0.0 in infer)")
    p.add_argument("--size", choices=list(SIZES), default="small", help="default small")
    p.add_argument("--pad-vocab", action="store_true",
                   help="pad the vocabulary to a multiple of 64 (50257 -> 50304), as nanoGPT does")
    p.add_argument("--attention", choices=("sdpa", "eager"), default="sdpa",
                   help="sdpa: F.scaled_dot_product_attention; eager: matmul, mask, softmax, matmul (default sdpa)")
    args = p.parse_args()
    torch = common.import_torch()
    env = common.setup(torch, args)

    n_layer, n_embd, n_head = SIZES[args.size]
    vocab, batch, seq = VOCAB, args.batch or 8, args.seq or 1024
    if args.tiny:
        n_layer, n_embd, n_head, vocab = TINY["n_layer"], TINY["n_embd"], TINY["n_head"], TINY["vocab"]
        batch, seq = args.batch or TINY["batch"], args.seq or TINY["seq"]
    dropout = args.dropout if args.dropout is not None else (0.1 if args.mode == "train" else 0.0)
    if args.mode == "infer":
        dropout = 0.0  # eval() disables dropout; record what runs
    attention, attention_note = common.resolve_attention(torch, args.attention)
    vocab_padded = (vocab + 63) // 64 * 64 if args.pad_vocab else vocab
    cfg = dict(n_layer=n_layer, n_embd=n_embd, n_head=n_head, vocab_padded=vocab_padded,
               n_positions=max(N_POSITIONS, seq), dropout=dropout, attention=attention)

    with env.build_ctx():
        model = build_model(torch, cfg)
    model = model.to(device=env.device, dtype=env.param_dtype)
    n_params = common.param_count(model)
    model.train(args.mode == "train")

    data = common.token_pool(env, vocab, batch, seq)

    fmodel = env.compile(model)
    if args.mode == "train":
        opt = torch.optim.AdamW(common.decay_groups(model, 0.1), lr=6e-4, betas=(0.9, 0.95),
                                **env.optimizer_kwargs())
    else:
        opt = None
    step = common.step_function(
        env, data, lambda b: fmodel(b[0]), opt, loss_in_autocast=True,
        loss=lambda logits, b: torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), b[1].view(-1)))

    knobs = common.base_knobs(env, f"gpt2-{args.size}", "experiments/workloads/gpt2.py")
    knobs.update({
        "model": f"GPT-2 {args.size}" + (" (tiny)" if args.tiny else ""),
        "n_layer": n_layer, "n_embd": n_embd, "n_head": n_head,
        "batch": batch, "seq": seq, "n_positions": cfg["n_positions"],
        "vocab_size": vocab, "vocab_padded": vocab_padded, "pad_vocab": bool(args.pad_vocab),
        "dropout": dropout, "attention": attention, "attention_note": attention_note,
        "param_count": n_params,
        "tied_embeddings": True,
        "loss": "cross_entropy over all positions" if args.mode == "train" else None,
        "optimizer": "AdamW lr 6e-4 betas (0.9, 0.95) wd 0.1 (matrices only)" if args.mode == "train" else None,
        "infer_kind": "prefill: forward of the whole sequence, logits for every position" if args.mode == "infer" else None,
    })
    common.run(env, knobs, step, samples_per_step=batch, tokens_per_step=batch * seq)


if __name__ == "__main__":
    main()
