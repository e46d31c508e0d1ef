"""ResNet-50 (torchvision, weights=None) on random 224x224 images, a workload for `kreach profile`.

Train (the default): forward, cross-entropy, backward, SGD (lr 0.1, momentum 0.9, weight decay
1e-4), batch 128. Infer: forward under no_grad. --channels-last puts the model and the images in
NHWC, the layout cuDNN's bf16 convolutions want.

    python3 experiments/workloads/resnet50.py --channels-last --warmup 3 --steps 5
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vision  # noqa: E402

if __name__ == "__main__":
    vision.main("resnet50", __doc__)
