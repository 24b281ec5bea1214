"""Sorting: the fourth problem class the paper names (Sec. 1) but never runs.

Task card
    Input: n scalars uniform in [0, 1).  Shape (n, 1).
    Output: a permutation of the inputs into ascending order; ties keep index order (stable).
    Constraints (``task`` mode): each input once; the end symbol only after all n.
    Metrics: ``exact_match`` (whole sorted order right), ``position_accuracy`` (share of output
    positions holding the right value), ``valid_rate`` (output is a permutation).
    Cost (REINFORCE): the share of output pairs out of ascending order, inversions / (n choose
    2), the normalised Kendall tau distance to the sorted order: 0 exactly for a sorted output
    (equal values in any order), 1 for the descending one. Unlike the number of neighbouring
    descents (:func:`ptrnet.api.results.output_cost`'s measure), it falls with every swap that
    moves a value towards its place, the finer signal for a policy gradient.
    Reference: ``numpy.argsort(kind="stable")``. No paper numbers exist for this task.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.tasks.base import Task, check_indices
from ptrnet.tasks.sequences import is_permutation

if TYPE_CHECKING:
    import torch

    from ptrnet.tasks.constraints import DecodeState


class SortTask(Task):
    name = "sort"
    dim = 1
    min_n = 1
    metric_keys = ("exact_match", "position_accuracy", "valid_rate")
    validation_metric = "exact_match"
    tiebreak_metric = "position_accuracy"
    summary_metrics = ("exact_match", "valid_rate")
    demo_sizes = (5, 10, 20)
    drawing = "bars"
    rate_metrics = frozenset({"exact_match", "position_accuracy", "valid_rate"})
    paper_constraints = "task"  # not in the paper: permutations, as TSP's tours
    solvers = ("stable_argsort",)
    has_cost = True
    permutation_output = True

    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        self.check_solver(solver)
        return np.argsort(np.asarray(points)[:, 0], kind="stable").astype(np.int64)

    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        seq = np.asarray(seq, dtype=np.int64)  # equal values: ascending index (stable)
        return seq[np.lexsort((seq, np.asarray(points)[seq, 0]))]

    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        return is_permutation(np.asarray(seq), len(points))

    def max_steps(self, n: int) -> int:
        return n

    def sequence_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The share of output pairs out of ascending order (module docstring); inf for an
        output that is not a permutation."""
        if not self.is_valid(points, seq):
            return math.inf
        n = len(seq)
        values = np.asarray(points, dtype=np.float64)[seq, 0]
        inversions = np.triu(values[:, None] > values[None, :], k=1).sum()
        return float(inversions / max(n * (n - 1) // 2, 1))

    def answer_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The number of neighbouring output pairs out of ascending order (0 = sorted)."""
        values = np.asarray(points, dtype=np.float64)[np.asarray(seq, dtype=np.int64), 0]
        return float(np.count_nonzero(np.diff(values) < 0))

    def batch_cost(
        self, points: torch.Tensor, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> torch.Tensor:
        """(B,) shares of output pairs out of order; row b's first ``lengths[b]`` tokens are
        its permutation."""
        import torch

        size = points.shape[1]
        picked = (tokens[:, :size] - 1).clamp(min=0)  # (B, N) 0-based, junk past n_b
        values = points[..., 0].gather(1, picked)  # (B, N) in output order
        real = torch.arange(size, device=points.device)[None, :] < lengths[:, None]  # (B, N)
        later = torch.ones(size, size, dtype=torch.bool, device=points.device).triu(1)  # i < j
        pairs = later & real[:, :, None] & real[:, None, :]  # (B, N, N)
        inversions = ((values[:, :, None] > values[:, None, :]) & pairs).sum(dim=(1, 2))
        total = (lengths * (lengths - 1) // 2).clamp(min=1)
        return inversions.to(points.dtype) / total.to(points.dtype)

    def allowed_next(self, state: DecodeState) -> torch.Tensor:
        return state.unvisited() | state.end_if(state.steps >= state.lengths)

    def dataset_metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        exact = positions = valid = 0.0
        for x, ref, pred in zip(points, refs, preds, strict=True):
            values, ok = x[:, 0], self.is_valid(x, pred)
            # Compare values, not indices: equal values may appear in either order.
            want = values[ref]
            got = values[pred[: len(ref)]] if check_indices(pred, len(x)) else np.full(0, np.nan)
            hits = np.sum(got == want[: len(got)])
            positions += hits / len(ref)
            exact += float(ok and hits == len(ref))
            valid += float(ok)
        count = len(refs)
        return {
            "exact_match": exact / count,
            "position_accuracy": positions / count,
            "valid_rate": valid / count,
            "count": count,
        }
