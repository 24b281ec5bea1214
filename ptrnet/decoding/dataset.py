"""Decode a whole dataset in batches: the one batched decoder behind inference, evaluation,
validation during training and the demo.

Instances are decoded in batches sorted by n, which keeps padding small when a dataset mixes
sizes; predictions come back in the original order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ptrnet.batching import collate
from ptrnet.decoding.decode import DecodeResult, decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.tasks.base import Task, trim_steps


@dataclass(frozen=True)
class Decoded:
    """What one decoding pass found for one instance of n inputs.

    Attributes:
        sequence: the 0-based output (:func:`ptrnet.tasks.base.from_tokens`; with multistart
            a closed cycle is written from the start the labels use).
        log_prob: the decoder's score of the output: its log-likelihood under the masked step
            distributions it was drawn from (with several views, their combined score,
            :func:`ptrnet.decoding.views.decode_views`).
        probs: (T, n+1) float32 masked distribution at each of the T steps the decoder took,
            up to and including the first end token (column 0 = end), when asked for; else None.
            With multistart they are those of the run that found the output, from its own
            start.
    """

    sequence: np.ndarray
    log_prob: float
    probs: np.ndarray | None = None


def decode_all(
    model: nn.Module,
    task: Task,
    points_list: Sequence[np.ndarray],
    options: DecodeOptions | None = None,
    on_decoded: Callable[[int], None] | None = None,
) -> list[np.ndarray]:
    """Decode every instance; returns 0-based sequences in the order of ``points_list``
    (the sequences of :func:`decode_outputs`)."""
    found = decode_outputs(model, task, points_list, options, on_decoded)
    return [item.sequence for item in found]


def decode_outputs(
    model: nn.Module,
    task: Task,
    points_list: Sequence[np.ndarray],
    options: DecodeOptions | None = None,
    on_decoded: Callable[[int], None] | None = None,
    *,
    return_probs: bool = False,
) -> list[Decoded]:
    """Decode every instance once; returns one :class:`Decoded` per instance, in the order of
    ``points_list``.

    Args:
        model: a network taking (B, n, dim) points; put in eval mode for the call (and moved
            to ``options.device`` when that is set).
        points_list: instances, each (n, dim).
        options: how to decode (None = the defaults); ``batch_size`` instances per batch
            (multistart: ``batch_size`` runs, so ``batch_size // n`` instances),
            ``seed`` seeds the one generator of ``sample`` decoding (same seed, same samples).
        on_decoded: called after each batch with the number of instances it decoded (progress).
        return_probs: also keep each step's distribution (:attr:`Decoded.probs`).

    Raises:
        DecodeOptionError: options the task cannot use (checked before any decoding).
        ValueError: ``return_probs`` with options whose decoder cannot return them (8 views,
            multistart over several views).
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
    out: list[Decoded | None] = [None] * len(points_list)
    was_training = model.training
    model.eval()
    try:
        for lo in range(0, len(order), size):
            rows = order[lo : lo + size]
            batch = collate([points_list[i] for i in rows]).to(device)
            result = decode(
                model, task, batch, options, generator=generator, return_probs=return_probs
            )
            for b, i in enumerate(rows):
                out[i] = _row(result, b, len(points_list[i]))
            if on_decoded is not None:
                on_decoded(len(rows))
    finally:
        model.train(was_training)
    return out


def _row(result: DecodeResult, b: int, n: int) -> Decoded:
    """Row ``b`` of a batch's decoding, for an instance of n inputs."""
    probs = None
    if result.probs is not None:
        steps = trim_steps(result.tokens[b].cpu().numpy())
        probs = result.probs[b, :steps, : n + 1].cpu().numpy()
    sequence = np.asarray(result.sequences[b], dtype=np.int64)
    return Decoded(sequence, float(result.log_prob[b]), probs)
