"""Exponential moving average (EMA) of the weights: the model a run validates and keeps.

With ``TrainConfig.ema`` = d > 0, after every optimiser step the shadow weights move
``shadow = d * shadow + (1 - d) * weights`` (the first step copies the weights). Validation
decodes with the shadow, so ``best`` holds shadow weights; ``last`` holds both the live weights
(for the optimiser to continue) and the shadow (``ema.*`` tensors), so resuming is exact.
Averaging over roughly the last ``1 / (1 - d)`` steps smooths out the noise of the final
steps, a cheap gain when a run is annealed (d = 0.999 averages about 1,000 steps).

torch's :class:`~torch.optim.swa_utils.AveragedModel` does the averaging (one fused
``foreach`` update per step); this module only builds it and moves its state in and out of
checkpoints.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn


def ema_model(model: nn.Module, decay: float) -> AveragedModel:
    """A shadow copy of ``model`` to be updated with ``.update_parameters(model)`` each step;
    ``.module`` is the averaged network."""
    return AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=True)


def ema_state(ema: AveragedModel) -> dict[str, torch.Tensor]:
    """The shadow's full state (weights and the count of updates), for a checkpoint."""
    return {k: v.detach().contiguous() for k, v in ema.state_dict().items()}


def load_ema_state(ema: AveragedModel, state: dict[str, torch.Tensor]) -> None:
    """Restore :func:`ema_state`'s output into ``ema`` (same architecture)."""
    ema.load_state_dict(state)
