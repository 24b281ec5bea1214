"""A decoding trace of one instance: what the pointer saw and chose at every step.

Shared by ``ptrnet plot`` (the heatmap) and the web page (the step-through view). No matplotlib
here, and torch only inside the functions that decode. Decoding goes through
:func:`ptrnet.decoding.decode` exactly as :func:`ptrnet.inference.predict` does, with the step
distributions kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.inference import LoadedModel, check_task
from ptrnet.io.unit_square import to_unit_square
from ptrnet.tasks import END_TOKEN, Task

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


def trim_steps(tokens: np.ndarray) -> int:
    """Number of steps up to and including the first end token (all steps if none)."""
    ends = np.flatnonzero(np.asarray(tokens) == END_TOKEN)
    return int(ends[0]) + 1 if ends.size else len(tokens)


def allowed_masks(task: Task, tokens: np.ndarray, n: int, constraints: str) -> np.ndarray:
    """(T, n+1) bool: the decoding mask before each of ``tokens`` (T,), replayed from the start
    (:func:`ptrnet.tasks.constraints.replay_masks`)."""
    import torch

    from ptrnet.tasks.constraints import replay_masks

    rows = torch.as_tensor(np.asarray(tokens, dtype=np.int64))[None]  # (1, T)
    return replay_masks(task, torch.tensor([n]), rows, constraints)[0].numpy()


def decode_trace(
    loaded: LoadedModel,
    task: Task | str,
    points: np.ndarray,
    options: DecodeOptions | None = None,
) -> InstanceTrace:
    """Decode ``points`` (n, dim, in any units) with ``loaded`` (the model it routes n to, with
    that route's window, :meth:`ptrnet.inference.LoadedModel.for_size`) on their unit-square
    image, as :func:`ptrnet.inference.predict` decodes them, and keep every step's distribution.

    ``options`` are those of :func:`ptrnet.inference.predict` (None = its defaults), with
    greedy or beam search and one view: a trace shows the deterministic decoders' own steps.

    Raises:
        UsageError: the model was trained on another task.
        ValueError: a bad decoding option or an instance of the wrong dimension.
    """
    from ptrnet.batching import collate
    from ptrnet.decoding.decode import decode
    from ptrnet.decoding.options import DecodeOptions

    task = check_task(loaded, task)
    options = (options or DecodeOptions()).for_task(task)
    if options.strategy not in ("greedy", "beam"):
        raise ValueError(f"a trace needs greedy or beam decoding, got {options.strategy!r}")
    points = to_unit_square(points)
    served = loaded.for_size(len(points))
    options = options.with_window(served.window)  # as predict() decodes it
    result = decode(served.model, task, collate([points]), options, return_probs=True)
    tokens = result.tokens[0].cpu().numpy()
    steps = trim_steps(tokens)
    tokens = tokens[:steps]
    return InstanceTrace(
        sequence=result.sequences[0],
        tokens=tokens,
        probs=result.probs[0, :steps].cpu().numpy(),
        allowed=allowed_masks(task, tokens, len(points), options.constraints),
        log_prob=float(result.log_prob[0]),
        constraints=options.constraints,
    )
