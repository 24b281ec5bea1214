"""Delaunay triangulation (paper Sec. 4.3).

Task card
    Input: n points uniform in [0, 1]^2.  Shape (n, 2).
    Output: the Delaunay triangles, each as an ascending index triple ``i < j < k``, triangles
    ordered lexicographically by their incenter (x, then y; ties by the triple), flattened:
    ``[i1, j1, k1, i2, j2, k2, ...]``. The paper found models learned worse without this order.
    Duplicated points are represented by their lowest index; cocircular points get whichever
    valid triangulation Qhull returns (deterministic for a given input); all-collinear inputs
    raise :class:`DegenerateInstanceError`.
    Constraints (``task`` mode, every user-facing default): three distinct inputs per triangle,
    in any order (the label's ascending order is a convention of the label, which a set
    encoder such as the n = 10 model's Transformer cannot see); no triangle twice, in any vertex
    order; the end symbol only between triangles, after at least one; never a dead end (a
    first or second vertex only where a new triangle can still be completed). The paper decodes
    unconstrained (``none`` mode).
    Metrics: ``accuracy`` (exact set of triangles) and ``triangle_coverage`` (share of true
    triangles found, averaged over instances); a duplicated point's copies are one vertex.
    Cost: none (``has_cost`` false), so ``objective reinforce`` refuses the task. A cost with
    its minimum exactly at the label would have to score the incenter order of a decoded
    triangle list, which a set measure (missing plus extra triangles) cannot; none is chosen.
    Reference: Qhull via :func:`ptrnet.solvers.geometry.delaunay_triangles`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.solvers.errors import DegenerateInstanceError
from ptrnet.solvers.geometry import (
    delaunay_triangles,
    first_copies,
    incenters,
    planar_degeneracy,
    safe_range,
)
from ptrnet.tasks.base import Task, check_indices
from ptrnet.tasks.state_fields import PREVIOUS

if TYPE_CHECKING:
    import torch

    from ptrnet.tasks.constraints import DecodeState


def order_by_incenter(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Sort ascending triples (m, 3) by incenter x, then y, then the triple itself."""
    centers = incenters(points, triangles)
    keys = (triangles[:, 2], triangles[:, 1], triangles[:, 0], centers[:, 1], centers[:, 0])
    return triangles[np.lexsort(keys)]


def triangle_set(seq: np.ndarray) -> set[tuple[int, ...]]:
    """The triangles (sorted tuples) of a flattened sequence; a partial tail is dropped."""
    seq = np.asarray(seq, dtype=np.int64)
    triples = seq[: len(seq) // 3 * 3].reshape(-1, 3)
    return {tuple(sorted(t)) for t in triples.tolist()}


def emitted_triangles(state: DecodeState) -> torch.Tensor:
    """(B, m, 3) tokens of the complete triangles in ``state.history`` (a row not done: all the
    triangles it has emitted; a done row's end tokens fill its tail with zeros)."""
    history = state.history  # (B, t)
    return history[:, : history.shape[1] // 3 * 3].reshape(history.shape[0], -1, 3)


def co_occurrences(state: DecodeState, triangles: torch.Tensor, *with_tokens) -> torch.Tensor:
    """(B, n+1) long: per token, the number of ``triangles`` (B, m, 3) that hold it together
    with every token of ``with_tokens`` ((B,) each; none: the triangles that hold it)."""
    import torch

    holds = torch.ones(triangles.shape[:2], dtype=torch.bool, device=triangles.device)  # (B, m)
    for token in with_tokens:
        holds = holds & (triangles == token[:, None, None]).any(dim=2)
    counts = torch.zeros_like(state.visited, dtype=torch.long)  # (B, n+1)
    weights = holds[:, :, None].expand(triangles.shape).reshape(triangles.shape[0], -1)
    return counts.scatter_add_(1, triangles.reshape(triangles.shape[0], -1), weights.long())


def torch_where_position(position, opening, second, third):
    """Pick, per row, the mask for its position in the current triple (0, 1 or 2)."""
    return (
        (opening & (position == 0)[:, None])
        | (second & (position == 1)[:, None])
        | (third & (position == 2)[:, None])
    )


class DelaunayTask(Task):
    name = "delaunay"
    reads_history = True
    state_fields = (PREVIOUS,)  # a triangle's third vertex is neither of the two before it
    dim = 2
    min_n = 3
    metric_keys = ("accuracy", "triangle_coverage")
    validation_metric = "triangle_coverage"
    tiebreak_metric = "accuracy"
    summary_metrics = ("accuracy", "triangle_coverage")
    demo_sizes = (5, 10)
    drawing = "triangles"
    rate_metrics = frozenset({"accuracy", "triangle_coverage"})
    paper_results = MappingProxyType(  # the paper's Sec. 4.3
        {
            ("ptr n", 5): {"accuracy": 0.807, "triangle_coverage": 0.93},
            ("ptr n", 10): {"accuracy": 0.226, "triangle_coverage": 0.813},
            ("ptr n", 50): {"triangle_coverage": 0.528},
        }
    )
    paper_model = "ptr n"
    solvers = ("qhull",)
    square_symmetric = True

    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        self.check_solver(solver)
        points = safe_range(points)  # incentres of 1e300-sized triangles overflow
        return order_by_incenter(points, delaunay_triangles(points)).reshape(-1)

    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        seq = first_copies(points)[np.asarray(seq, dtype=np.int64)]
        triples = np.sort(seq.reshape(-1, 3), axis=1)
        return order_by_incenter(points, triples).reshape(-1)

    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        """At least one triangle, each of three distinct inputs, none given twice."""
        seq = np.asarray(seq)
        if len(seq) == 0 or len(seq) % 3 or not check_indices(seq, len(points)):
            return False
        triples = np.sort(seq.reshape(-1, 3), axis=1)
        distinct = bool(np.all(np.diff(triples, axis=1) > 0))
        return distinct and len(np.unique(triples, axis=0)) == len(triples)

    def label_shape_problem(self, n: int, seq: np.ndarray) -> str | None:
        if len(seq) % 3:
            return f"Delaunay output has {len(seq)} indices, not a multiple of 3"
        triples = np.sort(np.asarray(seq).reshape(-1, 3), axis=1)
        if len(np.unique(triples, axis=0)) < len(triples):
            return "Delaunay output lists a triangle twice"
        return None

    def degenerate_warning(self, points: np.ndarray) -> str | None:
        reason = planar_degeneracy(points)
        if reason is None:
            return None
        return (
            f"degenerate instance ({reason}): no triangulation exists; the model's output is "
            "written as decoded"
        )

    def max_steps(self, n: int) -> int:
        return 6 * n  # a triangulation has at most 2n - 5 triangles; works on tensors too

    def answer_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The share of the exact Delaunay triangles the output contains (triangle coverage;
        1.0 = all found), NaN for an instance without a triangulation."""
        try:
            truth = triangle_set(self.solve(points))
        except DegenerateInstanceError:
            return math.nan
        return len(truth & triangle_set(seq)) / len(truth)

    def allowed_next(self, state: DecodeState) -> torch.Tensor:
        """Three distinct inputs a triangle, none twice (module docstring). A first vertex
        needs a pair it has not been a triangle with (fewer than C(n-1, 2) triangles), a second
        a third vertex left (fewer than n - 2 triangles on the edge), so no row gets stuck."""
        position, size = state.steps % 3, state.lengths[:, None]  # (B,), (B, 1)
        triangles = emitted_triangles(state)  # (B, m, 3)
        real, last, previous = state.real_columns(), state.last, state.own["previous"]
        fresh = ~state.one_hot(last, state.steps > 0)  # not the vertex just given
        pairs = (size - 1) * (size - 2) // 2
        opening = real & (co_occurrences(state, triangles) < pairs)
        opening = opening | state.end_if(state.steps > 0)
        second = real & fresh & (co_occurrences(state, triangles, last) < size - 2)
        given = co_occurrences(state, triangles, previous, last) > 0
        third = real & fresh & ~state.one_hot(previous, state.steps > 1) & ~given
        return torch_where_position(position, opening, second, third)

    def dataset_metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        exact = coverage = 0.0
        for x, ref, pred in zip(points, refs, preds, strict=True):
            pred = np.asarray(pred, dtype=np.int64)
            if check_indices(pred, len(x)):  # a duplicated point's copies are one vertex
                pred = first_copies(x)[pred]
            truth, found = triangle_set(ref), triangle_set(pred)
            exact += float(truth == found and len(pred) == 3 * len(truth))
            coverage += len(truth & found) / len(truth)
        count = len(refs)
        return {"accuracy": exact / count, "triangle_coverage": coverage / count, "count": count}
