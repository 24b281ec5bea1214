"""Randomly initialised tiny models saved as checkpoints, standing in for trained ones."""

import torch

from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import get_task

# The pointer model beyond the paper, tiny: Transformer encoder, one glimpse, clipped logits.
TRANSFORMER = dict(encoder="transformer", encoder_layers=2, heads=2, glimpses=1, logit_clip=10.0)


def bundle_tiny_models(root, tasks):
    """Write randomly initialised tiny models where the bundled ones would be."""
    torch.manual_seed(0)
    for name in tasks:
        config = RunConfig(
            ModelConfig(input_dim=get_task(name).dim, hidden=8),
            TrainConfig(task=name, sizes="5", steps=1),
        )
        (root / name).mkdir(parents=True)
        save_checkpoint(root / name / "best.safetensors", config, 0, build_model(config.model))
