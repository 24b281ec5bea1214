"""Scoring finished outputs under all eight symmetries of the unit square (``views=8``).

A reflection turns a counter-clockwise hull or tour clockwise, so the model read through a
mirrored instance cannot join the step-by-step product of
:class:`ptrnet.decoding.views.ViewEnsemble`. It can still judge a finished output: in a
mirrored view the image of a cycle ``[s0, s1, ..., s_m-1, s0]`` is the same cycle read
backwards from the same start, ``[s0, s_m-1, ..., s1, s0]`` (:func:`mirror_sequence`), which is
the label form there whenever the output was the label form here.
:func:`mean_view_log_likelihood` averages each view's own log-likelihood of its image of the
output, under the decoding constraints.
"""

from __future__ import annotations

import numpy as np
import torch

from ptrnet.decoding.search import masked_log_probs
from ptrnet.model.pointer import EncoderDecoder
from ptrnet.tasks.base import Task, from_tokens, to_tokens
from ptrnet.tasks.constraints import DecodeState
from ptrnet.tasks.symmetry import ROTATIONS, SQUARE_SYMMETRIES, square_symmetry_tensor

# Rows scored at once: the pointer's attention works in a (rows, n+1, d) slab per step, which
# past a few hundred rows no longer stays in the CPU caches (2,560 rows in one go took 1.9x as
# long as in chunks of 256; n = 20, hidden 256).
SCORE_ROWS = 256


def mirror_sequence(seq: np.ndarray) -> np.ndarray:
    """The same cycle read backwards from the same first index (0-based, closing index kept).

    ``[0, 3, 1, 2, 0] -> [0, 2, 1, 3, 0]``; a sequence that does not close on its first index is
    reversed after it (``[4, 1, 2] -> [4, 2, 1]``); an empty one stays empty. Its own inverse.
    """
    seq = np.asarray(seq, dtype=np.int64)
    if len(seq) < 2:
        return seq.copy()
    if seq[-1] == seq[0]:
        return np.concatenate([seq[:1], seq[-2:0:-1], seq[-1:]])
    return np.concatenate([seq[:1], seq[:0:-1]])


def mirror_tokens(tokens: torch.Tensor) -> torch.Tensor:
    """(R, T) model tokens -> each row's :func:`mirror_sequence`, end token, end-padded to T."""
    rows = [to_tokens(mirror_sequence(from_tokens(row))) for row in tokens.cpu().numpy()]
    out = np.zeros(tuple(tokens.shape), dtype=np.int64)  # END_TOKEN = 0 pads the tail
    for r, row in enumerate(rows):
        row = row[: out.shape[1]]  # an output cut off at the step limit loses its end token
        out[r, : len(row)] = row
    return torch.from_numpy(out).to(tokens.device)


def sequence_log_likelihood(
    model: EncoderDecoder,
    task: Task,
    points: torch.Tensor,
    lengths: torch.Tensor,
    tokens: torch.Tensor,
    constraints: str,
) -> torch.Tensor:
    """(R,) float32 log-likelihood of token rows (R, T) under the masked step distributions of
    ``constraints``, the ones the decoder draws from; -inf for a row with a disallowed token.

    Tokens after a row's end token are end tokens, the only token then allowed: they add 0.
    """
    logits = model(points, lengths, tokens)  # (R, T, V), teacher forced
    state = DecodeState.start(task, lengths, constraints)
    total = torch.zeros(tokens.shape[0], device=tokens.device)
    for step in range(tokens.shape[1]):
        logp = masked_log_probs(logits[:, step], state.allowed())  # (R, V)
        total = total + logp.gather(1, tokens[:, step, None])[:, 0]
        state = state.update(tokens[:, step])
    return total


def mean_view_log_likelihood(
    model: EncoderDecoder,
    task: Task,
    points: torch.Tensor,
    lengths: torch.Tensor,
    tokens: torch.Tensor,
    constraints: str,
) -> torch.Tensor:
    """(R,) mean over the 8 symmetries of each view's log-likelihood of its image of ``tokens``.

    Args:
        points: (R, n, 2) one instance per candidate row; lengths: (R,).
        tokens: (R, T) candidate outputs in model tokens, end-padded.
    """
    mirrored = mirror_tokens(tokens)
    total = torch.zeros(tokens.shape[0], device=tokens.device)
    for lo in range(0, tokens.shape[0], SCORE_ROWS):
        rows = slice(lo, lo + SCORE_ROWS)
        for which in range(SQUARE_SYMMETRIES):
            view = square_symmetry_tensor(points[rows], which)
            image = (tokens if which in ROTATIONS else mirrored)[rows]
            total[rows] += sequence_log_likelihood(
                model, task, view, lengths[rows], image, constraints
            )
    return total / SQUARE_SYMMETRIES
