"""Decode a whole dataset in batches: the one batched decoder behind inference, evaluation,
validation during training and the demo.

Instances are decoded in batches sorted by n, which keeps padding small when a dataset mixes
sizes; predictions come back in the original order. A batch holds at most ``batch_size``
instances and at most :data:`~ptrnet.io.limits.MAX_SEARCH_POINTS` candidate points
(:meth:`~ptrnet.decoding.options.DecodeOptions.search_points`), so the memory a search takes
follows the batch, whatever the width, views or dataset.

An output the task's constraints forbid is never returned: decoding with ``constraints="task"``
checks every output with ``Task.is_valid`` and raises a
:class:`~ptrnet.decoding.search.DecodingError` naming the instance instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ptrnet.compute.devices import resolve_device
from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import DecodeResult, decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.search import DecodingError
from ptrnet.io.limits import MAX_SEARCH_POINTS
from ptrnet.tasks.base import Task, trim_steps


@dataclass(frozen=True)
class Decoded:
    """What one decoding pass found for one instance of n inputs.

    Attributes:
        sequence: the 0-based output (:func:`ptrnet.tasks.base.from_tokens`; with multistart
            a closed cycle is written from the start the labels use).
        log_prob: the decoder's score of the output: its log-likelihood under the masked step
            distributions it was drawn from (with view options, their combined score,
            :func:`ptrnet.decoding.decode.search`).
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
            ``seed`` seeds the one generator of a strategy that draws (``sample``: same seed,
            same samples).
        on_decoded: called after each batch with the number of instances it decoded (progress).
        return_probs: also keep each step's distribution (:attr:`Decoded.probs`).

    Raises:
        DecodeOptionError: options the task cannot use, or a SearchSizeError for an instance
            too large to search alone (both checked before any decoding).
        DecodingError: an instance whose model scores are not finite, or whose output breaks
            the task's constraints under ``constraints="task"``; it names the instance
            (1-based, in the order of ``points_list``).
        ValueError: ``return_probs`` with options whose decoder cannot return them (eight-view
            search, multistart over several views).
    """

    options = (options or DecodeOptions()).for_task(task)
    if options.device is not None:
        model.to(resolve_device(options.device))
    device = next(model.parameters()).device
    generator = None
    if options.card.seeded:  # a strategy that draws: its own generator, seeded
        generator = torch.Generator(device).manual_seed(options.seed)
    sizes = [len(p) for p in points_list]
    order = np.argsort(sizes, kind="stable")
    options.check_search(max(sizes, default=0))
    out: list[Decoded | None] = [None] * len(points_list)
    was_training = model.training
    if was_training:  # not every call: a walk over the modules costs ~0.3 ms a call
        model.eval()
    # Inference mode rather than decode's no_grad: no autograd bookkeeping on any tensor (a
    # fifth of a lone instance's greedy decoding at n = 50, docs/speed.md); safe because only
    # numpy arrays and floats leave this function.
    try:
        with torch.inference_mode():
            for rows in search_batches(order, sizes, options):
                batch = collate([points_list[i] for i in rows]).to(device)
                try:
                    result = decode(
                        model, task, batch, options, generator=generator, return_probs=return_probs
                    )
                except DecodingError as err:
                    raise err.renumbered(int(rows[err.instance])) from None
                for b, i in enumerate(rows):
                    out[i] = _row(result, b, len(points_list[i]))
                    check_output(task, points_list[i], out[i].sequence, options, int(i))
                if on_decoded is not None:
                    on_decoded(len(rows))
    finally:
        if was_training:
            model.train()
    return out


def _row(result: DecodeResult, b: int, n: int) -> Decoded:
    """Row ``b`` of a batch's decoding, for an instance of n inputs."""
    probs = None
    if result.probs is not None:
        steps = trim_steps(result.tokens[b].cpu().numpy())
        probs = result.probs[b, :steps, : n + 1].cpu().numpy()
    sequence = np.asarray(result.sequences[b], dtype=np.int64)
    return Decoded(sequence, float(result.log_prob[b]), probs)


def search_batches(
    order: np.ndarray, sizes: Sequence[int], options: DecodeOptions
) -> list[np.ndarray]:
    """``order`` (instance indices, ascending by size) cut into consecutive batches: each at
    most ``options.batch_size`` instances (multistart: ``batch_size`` runs, so
    ``batch_size // n`` instances, n the dataset's largest) and at most
    :data:`~ptrnet.io.limits.MAX_SEARCH_POINTS` candidate points, counted at the batch's largest
    instance (one instance per batch at least)."""
    size = options.batch_size
    if options.multistart and len(sizes):  # n runs per instance
        size = max(1, size // max(sizes))
    batches, lo = [], 0
    while lo < len(order):
        hi = lo + 1
        while hi < len(order) and hi - lo < size and fits(options, hi - lo + 1, sizes[order[hi]]):
            hi += 1
        batches.append(order[lo:hi])
        lo = hi
    return batches


def fits(options: DecodeOptions, instances: int, n: int) -> bool:
    """Whether a search of ``instances`` instances padded to ``n`` inputs fits
    :data:`~ptrnet.io.limits.MAX_SEARCH_POINTS`."""
    return instances * options.search_points(n) <= MAX_SEARCH_POINTS


def check_output(
    task: Task, points: np.ndarray, sequence: np.ndarray, options: DecodeOptions, index: int
) -> None:
    """Raise DecodingError when ``sequence`` breaks the task's constraints although they were
    decoded with (``constraints="task"``): such an output is never returned as a result."""
    if options.constraints == "task" and not task.is_valid(points, sequence):
        shown = " ".join(str(i) for i in sequence[:12]) + (" ..." if len(sequence) > 12 else "")
        raise DecodingError(
            index,
            f"the decoded output [{shown}] is not a valid {task.name} output for its "
            f"{len(points)} points, although decoded under the task's constraints",
        )
