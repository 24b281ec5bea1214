"""Planar convex hull (paper Sec. 4.2).

Task card
    Input: n points uniform in [0, 1]^2.  Shape (n, 2).
    Output: the extreme hull vertices (collinear boundary points excluded), counter-clockwise,
    starting at the lowest index and closed by repeating it: e.g. ``[0, 3, 2, 0]``.
    A duplicated vertex is represented by its lowest index.
    Constraints (``task`` mode): the output is a convex polygon, counter-clockwise, closed by
    repeating its first vertex after at least three, so every output is a closed simple polygon
    (:func:`allowed_vertices`); after the closing index only the end symbol. The paper decodes
    hulls unconstrained (``none`` mode).
    Metrics: ``accuracy`` (same polygon as the truth, whatever its start and direction; a
    duplicated point's copies are one vertex), ``area_coverage`` (predicted area / true area,
    averaged over simple predictions only), ``non_simple_rate`` (share of predictions that are
    not simple polygons) and ``fail`` (the paper's FAIL flag: more than 1% not simple). An
    output that is not closed by repeating its first index (cut short, or empty) is no polygon:
    wrong, and not simple.
    Cost (REINFORCE): for an output cycle of m vertices against the hull's h,
    ``(max(m, h) - k + s) / (max(m, h) + 1)``, where k counts the output's edges ``a -> b``
    that are edges of the counter-clockwise hull and s is 1 when the output does not start at
    the label's first vertex (the lowest hull index). In [0, 1] and 0 exactly at the label:
    k = m = h makes the output trace the hull's edges, in its direction, and s = 0 fixes the
    start. Each missing or extra vertex, or stretch walked clockwise, costs its broken edges,
    so a policy gains from every edge it gets right; the start term keeps the label form that
    rotated views of an instance share (:mod:`ptrnet.decoding.views`). The cost needs the
    exact hull, so it is a training signal, not a decoding choice (``objective_cost`` false).
    Reference: Qhull via :func:`ptrnet.solvers.geometry.convex_hull`. Degenerate inputs (all
    collinear, fewer than 3 distinct points) raise :class:`DegenerateInstanceError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.solvers.geometry import convex_hull, first_copies, planar_degeneracy
from ptrnet.tasks.base import Task, check_indices
from ptrnet.tasks.sequences import (
    canonical_cycle,
    open_cycle,
    restart_closed_cycle,
    same_cycle,
    signed_area,
)
from ptrnet.tasks.state_fields import PREVIOUS, StateField, no_token

if TYPE_CHECKING:
    import torch

    from ptrnet.tasks.constraints import DecodeState

FAIL_THRESHOLD = 0.01  # the paper reports FAIL when more than 1% of outputs are not simple


def _second(value, state: DecodeState, token, moved) -> torch.Tensor:
    return token.where(moved & (state.steps == 1), value)


#: (B,) long: the polygon's second vertex (0 before two steps), which the closing edge's
#: neighbour turn reads (:func:`allowed_vertices`).
SECOND = StateField("second", no_token, _second)


def simple_polygon_area(points: np.ndarray, seq: np.ndarray) -> float | None:
    """Area of the polygon through ``points[seq]``, or None if it is not a simple polygon.

    A simple polygon has at least three distinct vertices, visits none twice and does not
    cross itself; a self-intersecting ring's shoelace area is meaningless (a bow-tie gives 0).
    """
    from shapely.geometry import LinearRing

    cycle = open_cycle(seq)
    if len(cycle) < 3 or not check_indices(cycle, len(points)) or len(set(cycle)) < len(cycle):
        return None
    if not LinearRing(points[cycle]).is_simple:
        return None
    area = abs(signed_area(points, cycle))
    return area if area > 0 else None


class ConvexHullTask(Task):
    name = "convex_hull"
    dim = 2
    min_n = 3
    metric_keys = ("accuracy", "area_coverage", "non_simple_rate", "fail")
    validation_metric = "accuracy"
    tiebreak_metric = "area_coverage"
    summary_metrics = ("accuracy", "area_coverage")
    demo_sizes = (5, 10, 50)
    drawing = "hull"
    rate_metrics = frozenset({"accuracy", "area_coverage", "non_simple_rate"})
    cycle_answer = True  # the same polygon from any vertex, either way round
    step_agreement = ("an edge of the reference hull", "not an edge of the reference hull")
    paper_results = MappingProxyType(  # the paper's Table 1
        {
            ("lstm n", 5): {"accuracy": 0.877, "area_coverage": 0.996},
            ("lstm n", 50): {"accuracy": 0.019},
            ("attention n", 50): {"accuracy": 0.389, "area_coverage": 0.997},
            ("ptr n", 50): {"accuracy": 0.726, "area_coverage": 0.999},
            ("ptr 5-50", 5): {"accuracy": 0.92, "area_coverage": 0.996},
            ("ptr 5-50", 10): {"accuracy": 0.87, "area_coverage": 0.998},
            ("ptr 5-50", 50): {"accuracy": 0.696, "area_coverage": 0.999},
            ("ptr 5-50", 100): {"accuracy": 0.503, "area_coverage": 0.999},
            ("ptr 5-50", 200): {"accuracy": 0.221, "area_coverage": 0.999},
            ("ptr 5-50", 500): {"accuracy": 0.013, "area_coverage": 0.992},
        }
    )
    paper_model = "ptr 5-50"
    solvers = ("qhull",)
    square_symmetric = True
    rotation_invariant_labels = True
    state_fields = (SECOND, PREVIOUS)  # the turns at v0 and at the last vertex
    has_cost = True

    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        self.check_solver(solver)
        cycle = canonical_cycle(convex_hull(points))
        return np.append(cycle, cycle[0])

    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        cycle = first_copies(points)[open_cycle(seq)]
        if signed_area(points, cycle) < 0:
            cycle = cycle[::-1]
        cycle = canonical_cycle(cycle)
        return np.append(cycle, cycle[0])

    def at_label_start(self, seq: np.ndarray) -> np.ndarray:
        return restart_closed_cycle(seq)

    def label_shape_problem(self, n: int, seq: np.ndarray) -> str | None:
        if len(seq) < 4 or seq[0] != seq[-1]:
            return "hull output must be at least 3 vertices closed by repeating the first"
        return None

    def degenerate_warning(self, points: np.ndarray) -> str | None:
        reason = planar_degeneracy(points)
        if reason is None:
            return None
        return (
            f"degenerate instance ({reason}): no convex hull exists; the model's output is "
            "written as decoded"
        )

    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        seq = np.asarray(seq)
        cycle = seq[:-1]
        return (
            len(seq) >= 4
            and seq[0] == seq[-1]
            and check_indices(seq, len(points))
            and len(np.unique(cycle)) == len(cycle)
        )

    def max_steps(self, n: int) -> int:
        return n + 1

    def sequence_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The distance of ``seq`` from the label (module docstring); inf for an output that
        is not a valid closed cycle.

        Raises:
            DegenerateInstanceError: an instance without a hull (all points collinear).
        """
        if not self.is_valid(points, seq):
            return math.inf
        hull = open_cycle(self.solve(points))  # (h,) counter-clockwise from the lowest index
        cycle = first_copies(points)[open_cycle(seq)]  # (m,) duplicates as their lowest index
        edges = set(zip(hull.tolist(), np.roll(hull, -1).tolist(), strict=True))
        found = sum(
            edge in edges for edge in zip(cycle.tolist(), np.roll(cycle, -1).tolist(), strict=True)
        )
        size = max(len(cycle), len(hull))
        return (size - found + float(cycle[0] != hull[0])) / (size + 1)

    def answer_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The output polygon's area (NaN when it is not a simple polygon)."""
        area = simple_polygon_area(points, seq)
        return math.nan if area is None else area

    def allowed_next(self, state: DecodeState) -> torch.Tensor:
        closed = (state.steps >= 2) & (state.last == state.first)
        opening = allowed_vertices(state) & (state.steps < state.lengths)[:, None]
        closing = state.one_hot(state.first, (state.steps >= 3) & ~closed)
        return (opening & ~closed[:, None]) | closing | state.end_if(closed)

    def dataset_metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        correct, coverages = 0, []
        for x, ref, pred in zip(points, refs, preds, strict=True):
            # An output that is not a closed cycle of distinct inputs (cut short before its
            # closing index, or empty) is no polygon: wrong, and counted as not simple.
            if not self.is_valid(x, pred):
                continue
            correct += same_cycle(ref, first_copies(x)[np.asarray(pred, dtype=np.int64)])
            area = simple_polygon_area(x, pred)
            if area is not None:
                coverages.append(area / simple_polygon_area(x, ref))
        count = len(refs)
        non_simple = (count - len(coverages)) / count
        return {
            "accuracy": correct / count,
            "area_coverage": float(np.mean(coverages)) if coverages else 0.0,
            "non_simple_rate": non_simple,
            "fail": bool(non_simple > FAIL_THRESHOLD),
            "count": count,
        }


def orientation(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """Twice the signed area of the triangles ``a, b, c`` (..., 2): > 0 when they turn left."""
    return (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (
        c[..., 0] - a[..., 0]
    )


def allowed_vertices(state: DecodeState) -> torch.Tensor:
    """(B, n+1) bool: the unvisited inputs that keep the output a convex counter-clockwise
    polygon, so that closing it is always a simple polygon.

    After vertices ``v0 .. vk`` (k >= 1) a point p may follow when the polygon ``v0 .. vk, p``
    turns strictly left at ``vk``, at p (towards ``v0``) and at ``v0`` (towards ``v1``): p then
    lies beyond the closing edge ``vk -> v0`` and within the lines of the edges beside it, and
    the polygon grows by the triangle ``vk, p, v0`` while staying convex. Its second vertex is
    allowed only where some third one could follow (:func:`_has_third`), so a decoder never
    runs into a polygon it cannot close. Any first vertex is allowed.
    """
    import torch

    where = state.located()  # (B, n+1, 2)
    rows = torch.arange(where.shape[0], device=where.device)
    v0, v1 = where[rows, state.first], where[rows, state.own["second"]]  # (B, 2)
    last, before = where[rows, state.last], where[rows, state.own["previous"]]
    left = _left_turns(before[:, None], last[:, None], where, v0[:, None], v1[:, None])
    free = state.unvisited()
    allowed = torch.where((state.steps >= 2)[:, None], free & left, free)
    second = state.steps == 1
    if bool(second.any()):
        rows = second.nonzero()[:, 0]
        allowed[rows] = free[rows] & _has_third(where[rows], v0[rows], free[rows])
    return allowed


def _left_turns(
    before: torch.Tensor, last: torch.Tensor, p: torch.Tensor, v0: torch.Tensor, v1: torch.Tensor
) -> torch.Tensor:
    """Whether ``before, last, p``, ``last, p, v0`` and ``p, v0, v1`` all turn strictly left
    (broadcast over the leading dimensions of the (..., 2) arguments)."""
    return (
        (orientation(before, last, p) > 0)
        & (orientation(last, p, v0) > 0)
        & (orientation(p, v0, v1) > 0)
    )


def _has_third(where: torch.Tensor, v0: torch.Tensor, free: torch.Tensor) -> torch.Tensor:
    """(R, n+1) bool: for each candidate second vertex, whether a free point makes a third
    that :func:`_left_turns` allows (the same test the next step makes). Rows go in chunks
    that keep the (rows, n+1, n+1) comparison near 4 million entries."""
    import torch

    width = where.shape[1]
    chunk = max(1, (1 << 22) // (width * width))
    parts = []
    for lo in range(0, where.shape[0], chunk):
        part, first = where[lo : lo + chunk], v0[lo : lo + chunk, None, None]  # (r, 1, 1, 2)
        second, third = part[:, :, None], part[:, None, :]  # (r, n+1, 1, 2), (r, 1, n+1, 2)
        ok = _left_turns(first, second, third, first, second) & free[lo : lo + chunk, None, :]
        parts.append(ok.any(dim=2))
    return torch.cat(parts)
