"""The vision workloads' shared program: torchvision's ResNet-50 and ViT-B/16 (weights=None),
trained on random images and labels, for `kreach profile`. resnet50.py and vit_b16.py are its
entry points; see them for the defaults.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ARCHS = {
    # workload: default batch, optimizer recipe, whether --dropout applies
    "resnet50": dict(batch=128, dropout=False,
                     optimizer="SGD lr 0.1 momentum 0.9 wd 1e-4 (the classic ImageNet recipe)",
                     label_smoothing=0.0),
    "vit-b16": dict(batch=64, dropout=True,
                    optimizer="AdamW lr 3e-3 wd 0.3 (matrices only), as torchvision's ViT recipe",
                    label_smoothing=0.11),
}


def import_torchvision():
    try:
        import torchvision
    except ImportError as e:
        common.die(f"torchvision is not installed ({e}); this workload needs it", common.EXIT_SKIP)
    return torchvision


def build_model(torch, torchvision, arch, args, dropout, num_classes, image_size):
    models = torchvision.models
    if arch == "resnet50":
        return models.resnet50(weights=None, num_classes=num_classes)
    if args.tiny:
        from torchvision.models.vision_transformer import VisionTransformer
        return VisionTransformer(image_size=image_size, patch_size=16, num_layers=2, num_heads=2,
                                 hidden_dim=32, mlp_dim=64, dropout=dropout,
                                 attention_dropout=dropout, num_classes=num_classes)
    return models.vit_b_16(weights=None, image_size=image_size, dropout=dropout,
                           attention_dropout=dropout, num_classes=num_classes)


def main(arch, doc):
    spec = ARCHS[arch]
    p = common.make_parser(arch, doc.split("\n\n")[0], has_seq=False,
                           dropout_help=("dropout and attention dropout (default 0.0, as torchvision's vit_b_16)"
                                         if spec["dropout"] else "not used by ResNet-50 (must be 0 if given)"))
    p.add_argument("--channels-last", action="store_true",
                   help="model and images in torch.channels_last (NHWC) memory format (default: contiguous NCHW)")
    p.add_argument("--image-size", type=common.positive_int, default=None,
                   help="image side in pixels (default 224; 32 with --tiny)")
    p.add_argument("--num-classes", type=common.positive_int, default=1000, help="default 1000")
    args = p.parse_args()
    if not spec["dropout"] and args.dropout:
        common.die("--dropout: ResNet-50 has no dropout")
    torch = common.import_torch()
    torchvision = import_torchvision()
    env = common.setup(torch, args)

    batch = args.batch or (2 if args.tiny else spec["batch"])
    image_size = args.image_size or (32 if args.tiny else 224)
    if arch == "vit-b16" and image_size % 16:
        common.die("--image-size must be a multiple of the patch size, 16")
    dropout = (args.dropout or 0.0) if spec["dropout"] and args.mode == "train" else 0.0
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format

    with env.build_ctx():
        model = build_model(torch, torchvision, arch, args, dropout, args.num_classes, image_size)
    model = model.to(device=env.device, dtype=env.param_dtype, memory_format=memory_format)
    n_params = common.param_count(model)
    model.train(args.mode == "train")

    def make(gen):
        x = torch.randn(batch, 3, image_size, image_size, generator=gen, device=env.device)
        x = x.to(dtype=env.param_dtype, memory_format=memory_format)
        y = torch.randint(0, args.num_classes, (batch,), generator=gen, device=env.device)
        return x, y
    data = common.input_pool(env, make)

    fmodel = env.compile(model)
    if args.mode == "train":
        if arch == "resnet50":
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4,
                                  **env.optimizer_kwargs())
        else:
            opt = torch.optim.AdamW(common.decay_groups(model, 0.3), lr=3e-3, **env.optimizer_kwargs())
        criterion = torch.nn.CrossEntropyLoss(label_smoothing=spec["label_smoothing"])
    else:
        opt = criterion = None
    step = common.step_function(env, data, lambda b: fmodel(b[0]), opt, loss_in_autocast=True,
                                loss=lambda out, b: criterion(out, b[1]))

    knobs = common.base_knobs(env, arch, f"experiments/workloads/{arch.replace('-', '_')}.py")
    knobs.update({
        "model": {"resnet50": "torchvision resnet50", "vit-b16": "torchvision vit_b_16"}[arch]
                 + (" (tiny)" if args.tiny and arch == "vit-b16" else ""),
        "torchvision_version": torchvision.__version__,
        "batch": batch, "seq": None, "image_size": image_size, "num_classes": args.num_classes,
        "memory_format": "channels_last" if args.channels_last else "contiguous",
        "dropout": dropout,
        "param_count": n_params,
        "loss": (f"cross_entropy, label smoothing {spec['label_smoothing']}" if args.mode == "train" else None),
        "optimizer": spec["optimizer"] if args.mode == "train" else None,
    })
    common.run(env, knobs, step, samples_per_step=batch)
