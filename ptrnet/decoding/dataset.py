"""Decode a whole dataset in batches: the one batched decoder behind inference, evaluation,
validation during training and the demo.

Instances are decoded in batches sorted by n, which keeps padding small when a dataset mixes
sizes; predictions come back in the original order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from ptrnet.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.tasks.base import Task


def decode_all(
    model: nn.Module,
    task: Task,
    points_list: Sequence[np.ndarray],
    options: DecodeOptions | None = None,
    on_decoded: Callable[[int], None] | None = None,
) -> list[np.ndarray]:
    """Decode every instance; returns 0-based sequences in the order of ``points_list``.

    Args:
        model: a network taking (B, n, dim) points; put in eval mode for the call (and moved
            to ``options.device`` when that is set).
        points_list: instances, each (n, dim).
        options: how to decode (None = the defaults); ``batch_size`` instances per batch
            (multistart: ``batch_size`` runs, so ``batch_size // n`` instances),
            ``seed`` seeds the one generator of ``sample`` decoding (same seed, same samples).
        on_decoded: called after each batch with the number of instances it decoded (progress).

    Raises:
        DecodeOptionError: options the task cannot use (checked before any decoding).
    """
    from ptrnet.devices import resolve_device

    options = (options or DecodeOptions()).for_task(task)
    if options.device is not None:
        model.to(resolve_device(options.device))
    device = next(model.parameters()).device
    generator = None
    if options.strategy == "sample":
        generator = torch.Generator(device).manual_seed(options.seed)
    order = np.argsort([len(p) for p in points_list], kind="stable")
    size = options.batch_size
    if options.strategy == "multistart" and len(points_list):  # n runs per instance
        size = max(1, size // max(len(p) for p in points_list))
    out: list[np.ndarray | None] = [None] * len(points_list)
    was_training = model.training
    model.eval()
    try:
        for lo in range(0, len(order), size):
            rows = order[lo : lo + size]
            batch = collate([points_list[i] for i in rows]).to(device)
            result = decode(model, task, batch, options, generator=generator)
            for i, seq in zip(rows, result.sequences, strict=True):
                out[i] = np.asarray(seq, dtype=np.int64)
            if on_decoded is not None:
                on_decoded(len(rows))
    finally:
        model.train(was_training)
    return out
