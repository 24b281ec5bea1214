"""What :meth:`ptrnet.api.Solver.solve` returns: one :class:`Result` per instance, and the
measure of an output each task reports as its ``cost``.

``cost`` is the number a user of each task asks for first, as each task defines it
(:meth:`ptrnet.tasks.base.Task.answer_cost`):

* ``tsp``: the closed tour's length (the return edge counts), as in the paper's tables;
* ``convex_hull``: the area of the output polygon (NaN when it is not a simple polygon);
* ``delaunay``: the share of the exact Delaunay triangles the output contains (triangle
  coverage, the paper's second Delaunay metric; 1.0 = all found);
* ``sort``: the number of neighbouring output pairs out of ascending order (0 = sorted);
* a task without a measure of its own: NaN.

An output the task calls invalid (``valid`` False) has cost NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ptrnet.tasks import Task, to_tokens


@dataclass(frozen=True)
class Result:
    """One decoded instance.

    Attributes:
        sequence: 0-based output, as in the paper's format minus one (a tour or hull is closed:
            its first index repeated at the end; Delaunay triangles flattened as triples).
        cost: the task's measure of the output (module docstring); NaN for an invalid output.
        log_prob: the decoder's score of ``sequence`` from the pass that chose it
            (:attr:`ptrnet.decoding.dataset.Decoded.log_prob`): its log-likelihood (end symbol
            included) under the decoding constraints, through the ``window`` when one decoded
            it (:mod:`ptrnet.decoding.window`); with ``average_views`` or ``search_views``,
            the views' combined score. None for a searched tour (``improve`` or ``two_opt``),
            which is not the model's output.
        valid: whether the output is well formed for the task (a tour visits every city once).
        probs: (T, n + 1) pointer distribution at each of the T output steps, end symbol
            included (column 0 = end symbol, column j = input j - 1), from the same pass, with
            ``return_probs=True``; else None.
    """

    sequence: np.ndarray
    cost: float
    log_prob: float | None
    valid: bool
    probs: np.ndarray | None = None

    @property
    def tokens(self) -> np.ndarray:
        """(T,) the output as the pointer emitted it, one token per row of ``probs``: input
        ``j`` is token ``j + 1``, then the end symbol 0."""
        return to_tokens(self.sequence)


def output_cost(task: Task, points: np.ndarray, seq: np.ndarray) -> float:
    """The ``cost`` of output ``seq`` (0-based) for ``points`` (n, dim): the task's
    :meth:`~ptrnet.tasks.base.Task.answer_cost`; NaN if the output is invalid."""
    if not task.is_valid(points, seq):
        return math.nan
    return task.answer_cost(points, np.asarray(seq, dtype=np.int64))
