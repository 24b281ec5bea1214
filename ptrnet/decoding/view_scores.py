"""Scoring finished outputs under all eight symmetries of the unit square (``search_views=8``).

A reflection turns a counter-clockwise hull or tour clockwise, so the model read through a
mirrored instance cannot join the step-by-step product of
:class:`ptrnet.decoding.views.ViewEnsemble`. It can still judge a finished output: in a
mirrored view the image of a cycle ``[s0, s1, ..., s_m-1, s0]`` is the same cycle read
backwards from the same start, ``[s0, s_m-1, ..., s1, s0]`` (:func:`mirror_sequence`), which is
the label form there whenever the output was the label form here.
Delaunay's label, a set of triangles ordered by their incentres, changes order under any
symmetry; its image in a view is the output re-sorted into that view's label order
(:meth:`Task.canonical`). :func:`image_tokens` applies the rule that fits the task, and
:func:`mean_view_log_likelihood` averages each view's own log-likelihood of its image of the
output, under the decoding constraints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from ptrnet.decoding.interface import Network
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.tasks.base import Task, from_tokens, to_tokens
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
    return _map_rows(tokens, lambda _, seq: mirror_sequence(seq))


def image_tokens(
    task: Task, points: Sequence[np.ndarray], tokens: torch.Tensor, which: int
) -> torch.Tensor:
    """(R, T) outputs -> their images under symmetry ``which``, in the label form of the frame
    whose row ``r`` instance is ``points[r]``.

    Rotation-invariant labels (hull, TSP): the outputs themselves for a rotation, read backwards
    (:func:`mirror_sequence`) for a reflection, or the outputs themselves for a reflection too
    where labels are ``reflection_invariant_labels`` (routes, written by indices alone).
    Other tasks: each valid output in :meth:`Task.canonical` form for ``points[r]``; an invalid
    one is left as it is.
    """
    if task.rotation_invariant_labels:
        kept = which in ROTATIONS or task.reflection_invariant_labels
        return tokens if kept else mirror_tokens(tokens)

    def relabel(row: int, seq: np.ndarray) -> np.ndarray:
        valid = task.is_valid(points[row], seq)
        return task.canonical(points[row], seq) if valid else seq

    return _map_rows(tokens, relabel)


def _map_rows(tokens: torch.Tensor, change: Callable[[int, np.ndarray], np.ndarray]):
    """Apply ``change(row, 0-based sequence)`` to every row of (R, T) tokens; end-padded to T."""
    rows = [to_tokens(change(r, from_tokens(row))) for r, row in enumerate(tokens.cpu().numpy())]
    out = np.zeros(tuple(tokens.shape), dtype=np.int64)  # END_TOKEN = 0 pads the tail
    for r, row in enumerate(rows):
        row = row[: out.shape[1]]  # an output cut off at the step limit loses its end token
        out[r, : len(row)] = row
    return torch.from_numpy(out).to(tokens.device)


def _arrays(points: torch.Tensor, lengths: torch.Tensor) -> list[np.ndarray]:
    """Each row's real (n_r, 2) points as float64 arrays."""
    rows = points.double().cpu().numpy()
    return [row[:n] for row, n in zip(rows, lengths.tolist(), strict=True)]


def mean_view_log_likelihood(
    model: Network,
    task: Task,
    points: torch.Tensor,
    lengths: torch.Tensor,
    tokens: torch.Tensor,
    constraints: str,
) -> torch.Tensor:
    """(R,) mean over the 8 symmetries of each view's log-likelihood of its image of ``tokens``
    (:func:`image_tokens`).

    Args:
        points: (R, n, 2) one instance per candidate row; lengths: (R,).
        tokens: (R, T) candidate outputs in model tokens, end-padded.
    """
    total = torch.zeros(tokens.shape[0], device=tokens.device)
    for which in range(SQUARE_SYMMETRIES):
        view = square_symmetry_tensor(points, which)
        image = image_tokens(task, _arrays(view, lengths), tokens, which)
        for lo in range(0, tokens.shape[0], SCORE_ROWS):
            rows = slice(lo, lo + SCORE_ROWS)
            total[rows] += masked_sequence_log_likelihood(
                model, task, view[rows], lengths[rows], image[rows], constraints
            )
    return total / SQUARE_SYMMETRIES
