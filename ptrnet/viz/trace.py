"""A decoding trace of one instance: what the pointer saw and chose at every step.

Shared by ``ptrnet plot`` (the heatmap) and the web page (the step-through view). No matplotlib
here, and torch only inside the functions that decode. Decoding goes through
:func:`ptrnet.decoding.decode` exactly as :func:`ptrnet.inference.predict` does, with the step
distributions kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptrnet.inference import LoadedModel, check_task
from ptrnet.tasks import END_TOKEN, Task


@dataclass(frozen=True)
class Trace:
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
    """(T, n+1) bool: the decoding mask before each of ``tokens`` (T,), replayed from the start."""
    import torch

    state = task.decode_state(torch.tensor([n]), constraints)
    masks = []
    for token in tokens.tolist():
        masks.append(state.allowed()[0].numpy())
        state = state.update(torch.tensor([token]))
    return np.stack(masks) if masks else np.zeros((0, n + 1), dtype=bool)


def decode_trace(
    loaded: LoadedModel,
    task: Task | str,
    points: np.ndarray,
    *,
    decode: str = "greedy",
    beam_width: int = 5,
    constraints: str | None = None,
) -> Trace:
    """Decode ``points`` (n, dim) with ``loaded`` and keep every step's distribution.

    Options are those of :func:`ptrnet.inference.predict` (``sample`` excepted: a trace shows
    the deterministic decoders).

    Raises:
        UsageError: the model was trained on another task.
        ValueError: a bad decoding option or an instance of the wrong dimension.
    """
    from ptrnet.batching import collate
    from ptrnet.decoding import decode as run_decode
    from ptrnet.evaluation.evaluate import default_constraints

    task = check_task(loaded, task)
    if decode not in ("greedy", "beam"):
        raise ValueError(f"a trace needs greedy or beam decoding, got {decode!r}")
    mode = constraints or default_constraints(task.name)
    result = run_decode(
        loaded.model,
        task,
        collate([points]),
        decode,
        constraints=mode,
        beam_width=beam_width,
        return_probs=True,
    )
    tokens = result.tokens[0].cpu().numpy()
    steps = trim_steps(tokens)
    tokens = tokens[:steps]
    return Trace(
        sequence=result.sequences[0],
        tokens=tokens,
        probs=result.probs[0, :steps].cpu().numpy(),
        allowed=allowed_masks(task, tokens, len(points), mode),
        log_prob=float(result.log_prob[0]),
        constraints=mode,
    )
