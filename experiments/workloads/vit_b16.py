"""ViT-B/16 (torchvision vit_b_16, weights=None) on random 224x224 images, a workload for `kreach profile`.

Train (the default): forward, cross-entropy with label smoothing 0.11, backward, AdamW (lr 3e-3,
weight decay 0.3 on matrices), as torchvision's ViT recipe, batch 64. Dropout 0.0 by default (as
torchvision's vit_b_16); --dropout sets both its dropout and attention dropout. Infer: forward under
no_grad. torchvision's encoder calls nn.MultiheadAttention with need_weights=False, which runs
F.scaled_dot_product_attention in PyTorch 2.

    python3 experiments/workloads/vit_b16.py --warmup 3 --steps 5
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vision  # noqa: E402

if __name__ == "__main__":
    vision.main("vit-b16", __doc__)
