"""A Llama-3.2-1B-shaped model (or 3B, --size 3b) in plain PyTorch, a workload for `kreach profile`.

Shape of meta-llama/Llama-3.2-1B's config: 16 layers, hidden 2048, 32 query heads and 8
key/value heads (GQA, head dim 64), SwiGLU MLP of 8192, RMSNorm (eps 1e-5), RoPE (theta 500000
with the 'llama3' frequency scaling: factor 32, low 1, high 4, original context 8192),
vocabulary 128256, embeddings tied to the LM head, no biases. --size 3b takes
meta-llama/Llama-3.2-3B's: 28 layers, hidden 3072, 24 query heads and 8 key/value heads (head
dim 128), SwiGLU MLP of 8192, the rest as 1B's (tied embeddings too). The layers follow Hugging Face's
LlamaForCausalLM (RMSNorm in fp32 then cast back, rotate_half RoPE with cos/sin computed once
per forward, repeat_kv or SDPA's own GQA). Random weights (normal 0.02), random tokens.
Train: forward, cross-entropy (on fp32 logits, as Hugging Face computes it), backward, AdamW
(lr 3e-4, betas 0.9/0.95, weight decay 0.1 on matrices). Infer: forward of the whole sequence
under no_grad, logits for every position (a prefill).

    python3 experiments/workloads/llama.py --mode train --warmup 3 --steps 5
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

LLAMA_1B = dict(n_layer=16, hidden=2048, n_head=32, n_kv_head=8, intermediate=8192, vocab=128256,
                rope_theta=500000.0, rms_eps=1e-5,
                rope_scaling=dict(factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                  original_max_position_embeddings=8192))
LLAMA_3B = dict(LLAMA_1B, n_layer=28, hidden=3072, n_head=24, n_kv_head=8, intermediate=8192)
SIZES = {"1b": LLAMA_1B, "3b": LLAMA_3B}
TINY = dict(n_layer=2, hidden=64, n_head=4, n_kv_head=2, intermediate=128, vocab=512,
            rope_theta=500000.0, rms_eps=1e-5, rope_scaling=LLAMA_1B["rope_scaling"])


def rope_inv_freq(torch, head_dim, theta, scaling):
    """inv_freq with Llama 3's frequency scaling (Hugging Face's _compute_llama3_parameters)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old_ctx = scaling["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old_ctx / low, old_ctx / high
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_ctx / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return torch.where(medium, smoothed, scaled)


def build_model(torch, cfg):
    nn = torch.nn
    F = torch.nn.functional
    hidden, nh, nkv = cfg["hidden"], cfg["n_head"], cfg["n_kv_head"]
    hd = hidden // nh

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden))
            self.eps = cfg["rms_eps"]

        def forward(self, x):
            if cfg["rmsnorm"] == "torch":
                return F.rms_norm(x, (hidden,), self.weight, self.eps)
            dtype = x.dtype
            x = x.to(torch.float32)
            var = x.pow(2).mean(-1, keepdim=True)
            x = x * torch.rsqrt(var + self.eps)
            return self.weight * x.to(dtype)

    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj = nn.Linear(hidden, nh * hd, bias=False)
            self.k_proj = nn.Linear(hidden, nkv * hd, bias=False)
            self.v_proj = nn.Linear(hidden, nkv * hd, bias=False)
            self.o_proj = nn.Linear(nh * hd, hidden, bias=False)

        def forward(self, x, cos, sin, future):
            b, t, _ = x.shape
            q = self.q_proj(x).view(b, t, nh, hd).transpose(1, 2)
            k = self.k_proj(x).view(b, t, nkv, hd).transpose(1, 2)
            v = self.v_proj(x).view(b, t, nkv, hd).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            y = common.causal_attention(torch, q, k, v, impl=cfg["attention"], n_rep=nh // nkv,
                                        native_gqa=cfg["gqa"] == "native", future=future,
                                        dropout_p=cfg["dropout"] if self.training else 0.0)
            return self.o_proj(y.transpose(1, 2).reshape(b, t, nh * hd))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = nn.Linear(hidden, cfg["intermediate"], bias=False)
            self.up_proj = nn.Linear(hidden, cfg["intermediate"], bias=False)
            self.down_proj = nn.Linear(cfg["intermediate"], hidden, bias=False)

        def forward(self, x):
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm = RMSNorm()
            self.self_attn = Attention()
            self.post_attention_layernorm = RMSNorm()
            self.mlp = MLP()

        def forward(self, x, cos, sin, future):
            x = x + self.self_attn(self.input_layernorm(x), cos, sin, future)
            return x + self.mlp(self.post_attention_layernorm(x))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(cfg["vocab"], hidden)
            self.layers = nn.ModuleList(Layer() for _ in range(cfg["n_layer"]))
            self.norm = RMSNorm()
            self.lm_head = nn.Linear(hidden, cfg["vocab"], bias=False)
            self.lm_head.weight = self.embed_tokens.weight
            self.register_buffer("inv_freq", rope_inv_freq(torch, hd, cfg["rope_theta"], cfg["rope_scaling"]),
                                 persistent=False)
            if cfg["attention"] == "eager":
                self.register_buffer("future", common.causal_future_mask(torch, cfg["seq"], None),
                                     persistent=False)
            else:
                self.future = None
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, mean=0.0, std=0.02)

        def rope(self, t, dtype, device):
            # As LlamaRotaryEmbedding.forward: in fp32, outside autocast, once per forward.
            with torch.autocast(device_type=device.type, enabled=False):
                pos = torch.arange(t, device=device, dtype=torch.float32)
                freqs = torch.outer(pos, self.inv_freq.float())
                emb = torch.cat((freqs, freqs), dim=-1)
                return emb.cos().to(dtype), emb.sin().to(dtype)

        def forward(self, idx):
            x = self.embed_tokens(idx)
            cos, sin = self.rope(idx.size(1), x.dtype, idx.device)
            for layer in self.layers:
                x = layer(x, cos, sin, self.future)
            return self.lm_head(self.norm(x))

    return Llama()


def main():
    p = common.make_parser("llama", __doc__.split("\n\n")[0], has_seq=True,
                           dropout_help="attention dropout, Llama's only dropout (default 0.0, as its config)")
    p.add_argument("--size", choices=list(SIZES), default="1b",
                   help="1b: Llama-3.2-1B's shape; 3b: Llama-3.2-3B's (default 1b)")
    p.add_argument("--attention", choices=("sdpa", "eager"), default="sdpa",
                   help="sdpa: F.scaled_dot_product_attention; eager: matmul, mask, softmax, matmul (default sdpa)")
    p.add_argument("--gqa", choices=("auto", "native", "repeat"), default="auto",
                   help="native: SDPA's enable_gqa; repeat: repeat_kv copies keys and values to every head; "
                        "auto: native where torch has it (>= 2.5) and the attention runs in bf16 (flash), "
                        "else repeat (default auto)")
    p.add_argument("--rmsnorm", choices=("eager", "torch"), default="eager",
                   help="eager: Hugging Face's LlamaRMSNorm written out; torch: F.rms_norm (torch >= 2.4) (default eager)")
    args = p.parse_args()
    torch = common.import_torch()
    env = common.setup(torch, args)

    base = TINY if args.tiny else SIZES[args.size]
    batch = args.batch or (2 if args.tiny else 4)
    seq = args.seq or (32 if args.tiny else 2048)
    dropout = args.dropout if args.dropout is not None else 0.0
    if args.mode == "infer":
        dropout = 0.0
    attention, attention_note = common.resolve_attention(torch, args.attention)
    has_native = attention == "sdpa" and torch_at_least(torch, 2, 5)
    if args.gqa == "native" and not has_native:
        common.die("--gqa native needs --attention sdpa and torch >= 2.5")
    gqa = args.gqa
    if gqa == "auto":
        gqa = "native" if has_native and args.precision in ("bf16", "autocast-bf16") else "repeat"
    if args.rmsnorm == "torch" and not hasattr(torch.nn.functional, "rms_norm"):
        common.die(f"--rmsnorm torch needs F.rms_norm (torch >= 2.4; this is {torch.__version__})")
    cfg = dict(base, dropout=dropout, attention=attention, gqa=gqa, rmsnorm=args.rmsnorm, seq=seq)

    with env.build_ctx():
        model = build_model(torch, cfg)
    model = model.to(device=env.device, dtype=env.param_dtype)
    # RoPE's frequencies stay in fp32 whatever the precision (recomputed, not cast back from bf16).
    model.register_buffer("inv_freq", rope_inv_freq(torch, cfg["hidden"] // cfg["n_head"], cfg["rope_theta"],
                                                    cfg["rope_scaling"]).to(env.device), persistent=False)
    n_params = common.param_count(model)
    model.train(args.mode == "train")

    data = common.token_pool(env, cfg["vocab"], batch, seq)

    fmodel = env.compile(model)
    if args.mode == "train":
        opt = torch.optim.AdamW(common.decay_groups(model, 0.1), lr=3e-4, betas=(0.9, 0.95),
                                **env.optimizer_kwargs())
    else:
        opt = None
    step = common.step_function(
        env, data, lambda b: fmodel(b[0]), opt,
        loss=lambda logits, b: torch.nn.functional.cross_entropy(logits.float().view(-1, logits.size(-1)), b[1].view(-1)))

    knobs = common.base_knobs(env, f"llama-{args.size}", "experiments/workloads/llama.py")
    knobs.update({
        "model": f"Llama-3.2-{args.size.upper()} shape" + (" (tiny)" if args.tiny else ""),
        "n_layer": cfg["n_layer"], "hidden": cfg["hidden"], "n_head": cfg["n_head"],
        "n_kv_head": cfg["n_kv_head"], "intermediate": cfg["intermediate"],
        "batch": batch, "seq": seq,
        "vocab_size": cfg["vocab"], "vocab_padded": cfg["vocab"],
        "dropout": dropout, "attention": attention, "attention_note": attention_note,
        "gqa": gqa, "rmsnorm": args.rmsnorm, "rope_theta": cfg["rope_theta"], "rope_scaling": "llama3",
        "param_count": n_params,
        "tied_embeddings": True,
        "loss": "cross_entropy on fp32 logits over all positions" if args.mode == "train" else None,
        "optimizer": "AdamW lr 3e-4 betas (0.9, 0.95) wd 0.1 (matrices only)" if args.mode == "train" else None,
        "infer_kind": "prefill: forward of the whole sequence, logits for every position" if args.mode == "infer" else None,
    })
    common.run(env, knobs, step, samples_per_step=batch, tokens_per_step=batch * seq)


def torch_at_least(torch, major, minor):
    v = torch.__version__.split("+")[0].split(".")
    try:
        return (int(v[0]), int(v[1])) >= (major, minor)
    except (ValueError, IndexError):
        return False


if __name__ == "__main__":
    main()
