"""A decoding trace of one instance: what the pointer saw and chose at every step.

Shared by ``ptrnet plot`` (the heatmap) and the web page (the step-through view). No matplotlib
here, and torch only inside the functions that decode. Decoding is
:func:`ptrnet.inference.predict_outputs`, the one pass behind ``predict`` and the API, with the
step distributions kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import LoadedModel, check_task, predict_outputs
from ptrnet.io.unit_square import model_image
from ptrnet.tasks import Task, to_tokens
from ptrnet.tasks.constraints import replay_masks

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions


@dataclass(frozen=True)
class InstanceTrace:
    """One decoded instance of size n over T steps (up to and including the first end token).

    Attributes:
        sequence: 0-based output sequence (what ``predict`` returns).
        tokens: (T,) model tokens (0 = end symbol, j = input j-1).
        probs: (T, n+1) masked pointer distribution at each step (column 0 = end symbol).
        allowed: (T, n+1) bool, the decoding mask at each step (True = allowed).
        log_prob: total log-likelihood of ``tokens``.
        constraints: the mode decoded with, ``none`` or ``task``.
    """

    sequence: np.ndarray
    tokens: np.ndarray
    probs: np.ndarray
    allowed: np.ndarray
    log_prob: float
    constraints: str


def allowed_masks(
    task: Task, points: np.ndarray, tokens: np.ndarray, constraints: str
) -> np.ndarray:
    """(T, n+1) bool: the decoding mask before each of ``tokens`` (T,) for ``points`` (n, dim),
    replayed from the start (:func:`ptrnet.tasks.constraints.replay_masks`)."""

    rows = torch.as_tensor(np.asarray(tokens, dtype=np.int64))[None]  # (1, T)
    # float32, as a decoding batch holds them (:func:`ptrnet.datasets.batching.collate`)
    where = torch.as_tensor(np.asarray(points, dtype=np.float32))[None]  # (1, n, dim)
    return replay_masks(task, torch.tensor([len(points)]), rows, constraints, where)[0].numpy()


def decode_trace(
    loaded: LoadedModel,
    task: Task | str,
    points: np.ndarray,
    options: DecodeOptions | None = None,
) -> InstanceTrace:
    """Decode ``points`` (n, dim, in any units) with ``loaded`` (the model it routes n to, with
    that route's window, :meth:`ptrnet.inference.LoadedModel.for_size`) on their unit-square
    image, as :func:`ptrnet.inference.predict` decodes them, and keep every step's distribution.

    ``options`` are those of :func:`ptrnet.inference.predict` (None = its defaults), any
    strategy, with one view: the trace is the returned output's own steps (with several rows
    per instance, the distributions its row read on its way).

    Raises:
        UsageError: the model was trained on another task.
        ValueError: a bad decoding option or an instance of the wrong dimension.
    """

    task = check_task(loaded, task)
    options = (options or DecodeOptions()).for_task(task)
    (found,) = predict_outputs(loaded, task, [points], options, return_probs=True)
    tokens = to_tokens(found.sequence)[: len(found.probs)]  # no end token if cut off
    return InstanceTrace(
        sequence=found.sequence,
        tokens=tokens,
        probs=found.probs,
        allowed=allowed_masks(
            task,
            model_image(task, points)[0],
            tokens,
            options.constraints,
        ),
        log_prob=found.log_prob,
        constraints=options.constraints,
    )
