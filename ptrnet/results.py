"""What :meth:`ptrnet.api.Solver.solve` returns: one :class:`Result` per instance, and the
measure of an output each task reports as its ``cost``.

``cost`` is the number a user of each task asks for first:

* ``tsp``: the closed tour's length (the return edge counts), as in the paper's tables;
* ``convex_hull``: the area of the output polygon (NaN when it is not a simple polygon);
* ``delaunay``: the share of the exact Delaunay triangles the output contains (triangle
  coverage, the paper's second Delaunay metric; 1.0 = all found);
* ``sort``: the number of neighbouring output pairs out of ascending order (0 = sorted).

An output the task calls invalid (``valid`` False) has cost NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ptrnet.tasks import DegenerateInstanceError, Task


@dataclass(frozen=True)
class Result:
    """One decoded instance.

    Attributes:
        sequence: 0-based output, as in the paper's format minus one (a tour or hull is closed:
            its first index repeated at the end; Delaunay triangles flattened as triples).
        cost: the task's measure of the output (module docstring); NaN for an invalid output.
        log_prob: the model's log-likelihood of ``sequence`` (end symbol included) under the
            decoding constraints, read with the instance as given (one view), through the
            ``window`` when one decoded it (:mod:`ptrnet.decoding.window`).
        valid: whether the output is well formed for the task (a tour visits every city once).
        probs: (T, n + 1) pointer distribution at each of the T output steps, end symbol
            included (column 0 = end symbol, column j = input j - 1), with
            ``return_probs=True``; else None.
    """

    sequence: np.ndarray
    cost: float
    log_prob: float
    valid: bool
    probs: np.ndarray | None = None

    @property
    def tokens(self) -> np.ndarray:
        """(T,) the output as the pointer emitted it, one token per row of ``probs``: input
        ``j`` is token ``j + 1``, then the end symbol 0."""
        from ptrnet.tasks import to_tokens

        return to_tokens(self.sequence)


def output_cost(task: Task, points: np.ndarray, seq: np.ndarray) -> float:
    """The ``cost`` of output ``seq`` (0-based) for ``points`` (n, dim); NaN if invalid."""
    if not task.is_valid(points, seq):
        return math.nan
    return _COSTS[task.name](points, np.asarray(seq, dtype=np.int64))


def _tour_length(points: np.ndarray, seq: np.ndarray) -> float:
    from ptrnet.solvers.tsp import tour_length

    return tour_length(points, seq)


def _hull_area(points: np.ndarray, seq: np.ndarray) -> float:
    from ptrnet.tasks.convex_hull import simple_polygon_area

    area = simple_polygon_area(points, seq)
    return math.nan if area is None else area


def _triangle_coverage(points: np.ndarray, seq: np.ndarray) -> float:
    from ptrnet.tasks import get_task
    from ptrnet.tasks.delaunay import triangle_set

    try:
        truth = triangle_set(get_task("delaunay").solve(points))
    except DegenerateInstanceError:
        return math.nan
    return len(truth & triangle_set(seq)) / len(truth)


def _descents(points: np.ndarray, seq: np.ndarray) -> float:
    values = np.asarray(points, dtype=np.float64)[seq, 0]
    return float(np.count_nonzero(np.diff(values) < 0))


_COSTS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "tsp": _tour_length,
    "convex_hull": _hull_area,
    "delaunay": _triangle_coverage,
    "sort": _descents,
}
