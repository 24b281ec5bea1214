"""Planar symmetric travelling salesman problem (paper Sec. 4.4).

Task card
    Input: n cities uniform in [0, 1]^2.  Shape (n, 2).
    Output: a closed tour starting at the first city (index 0) and returning to it:
    ``[0, c1, ..., c_{n-1}, 0]``. The paper fixes no direction; ptrnet's training labels run
    **counter-clockwise** (positive shoelace area of the tour polygon), the same sense as the
    hull labels, so the direction is a geometric property a model can see. If that area is
    zero (collinear cities), the direction whose second city has the lower index is used.
    Constraints (``task`` mode, the paper's TSP beam): start at city 0, every city once, then
    the return to city 0, then the end symbol.
    Metrics: ``valid_rate`` (a tour through every city once), ``mean_length`` (closed tour, the
    return edge counts; averaged over valid predictions) and ``mean_gap`` (predicted over
    reference length minus one, averaged over valid predictions).
    Reference: exact for n <= 20, near-exact beyond (:mod:`ptrnet.solvers.tsp`).
    Distances: Euclidean in the input's units; :meth:`TSPTask.with_distances` measures cities
    by another rule (:mod:`ptrnet.solvers.distances`: great-circle kilometres between
    ``(lon, lat)`` degrees, TSPLIB's GEO and ATT), which its references, ``answer_cost`` and
    metrics then use; a model still reads a plane (:meth:`~ptrnet.tasks.base.Task.plane`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.solvers.distances import EUCLIDEAN, Distances
from ptrnet.solvers.geometry import safe_range
from ptrnet.solvers.or_opt import two_opt_or_opt
from ptrnet.solvers.tsp import TSP_SOLVERS, solve_path, solve_tour, tour_length
from ptrnet.solvers.tsp_exact import EXACT_MAX_N
from ptrnet.solvers.tsp_heuristics import two_opt
from ptrnet.tasks.base import Task
from ptrnet.tasks.lengths import length_metrics
from ptrnet.tasks.searches import RANDOM_RECONSTRUCT, LocalSearch
from ptrnet.tasks.sequences import (
    closed_from,
    closed_tour_problem,
    is_permutation,
    open_cycle,
    restart_closed_cycle,
    signed_area,
)

if TYPE_CHECKING:
    import torch

    from ptrnet.tasks.constraints import DecodeState


def canonical_tour(points: np.ndarray, tour: np.ndarray) -> np.ndarray:
    """Rotate a tour (any start, any direction, optional closing index) into the label form.

    Returns ``[0, ..., 0]`` (n + 1 indices) running counter-clockwise; see the module docstring.
    The area is measured on one fixed direction of the cycle (the one whose second city has the
    lower index) and its sign flipped for the other: float shoelace sums are not exactly
    antisymmetric, and near zero (collinear cities) the two directions could otherwise both
    measure positive and keep their own direction.
    """
    cycle = open_cycle(tour)
    cycle = np.roll(cycle, -int(np.flatnonzero(cycle == 0)[0]))
    if len(cycle) > 2 and cycle[1] > cycle[-1]:
        cycle = np.append(cycle[:1], cycle[:0:-1])  # the fixed direction: lower second city
    if signed_area(points, cycle) < 0:
        cycle = np.append(cycle[:1], cycle[:0:-1])
    return np.append(cycle, 0)


def searched_tour(
    polish: Callable[[np.ndarray, np.ndarray], np.ndarray],
    points: np.ndarray,
    tour: np.ndarray,
    lengths: np.ndarray,
) -> np.ndarray:
    """A local search's answer (:data:`ptrnet.tasks.searches.Moves`): the closed ``tour``
    (n + 1 indices) improved by ``polish`` (a solver's: distances, open tour -> open tour) on
    ``lengths``, still closed and from the same city.

    Raises:
        ValueError: a tour that is not closed over ``points``.
    """
    tour = np.asarray(tour, dtype=np.int64)
    problem = closed_tour_problem(len(points), tour)
    if problem is not None:
        raise ValueError(problem)
    return closed_from(polish(lengths, tour[:-1]), tour[0])


TWO_OPT = LocalSearch(
    name="two_opt",
    words="2-opt",
    verb="shortens",
    answers="tours",
    help="then 2-opt each tour (after --improve rrc where given) to a local optimum, on the "
    "instance's own distances (TSPLIB files: its rounded EUC_2D lengths); a search, like rrc",
    moves=partial(searched_tour, two_opt),
)
OR_OPT = LocalSearch(
    name="or_opt",
    words="2-opt and Or-opt",
    verb="shortens",
    answers="tours",
    help="as --two-opt, with Or-opt moves too (a run of 1-3 cities moved, either way round, "
    "elsewhere in the tour), in turn with 2-opt until neither shortens the tour; includes "
    "--two-opt",
    moves=partial(searched_tour, two_opt_or_opt),
    includes=("two_opt",),
)


class TSPTask(Task):
    name = "tsp"
    dim = 2
    min_n = 2
    metric_keys = ("valid_rate", "mean_length", "mean_gap")
    # The mean per-instance gap, not the mean length: on a validation set of mixed sizes the
    # length weighs the largest instances most and can rank checkpoints otherwise.
    validation_metric = "mean_gap"
    lower_is_better = True
    # the means average over valid tours only (with task constraints every tour is one)
    validity_metric = "valid_rate"
    summary_metrics = ("mean_length", "mean_gap")
    demo_sizes = (5, 10, 20)
    drawing = "tour"
    rate_metrics = frozenset({"valid_rate", "mean_gap"})
    cycle_answer = True  # the same tour from any start, either way round
    step_agreement = ("an edge of the reference tour", "not an edge of the reference tour")
    paper_results = MappingProxyType(  # the paper's Table 2; mean closed-tour lengths
        {
            ("optimal", 5): {"mean_length": 2.12},
            ("optimal", 10): {"mean_length": 2.87},
            ("optimal", 20): {"mean_length": 3.83},
            ("ptr n", 5): {"mean_length": 2.12},
            ("ptr n", 10): {"mean_length": 2.88},
            ("ptr 5-20", 5): {"mean_length": 2.12},
            ("ptr 5-20", 10): {"mean_length": 2.87},
            ("ptr 5-20", 20): {"mean_length": 3.88},
            ("ptr 5-20", 25): {"mean_length": 4.3},
            ("ptr 5-20", 30): {"mean_length": 4.72},
            ("ptr 5-20", 40): {"mean_length": 5.91},
            ("ptr 5-20", 50): {"mean_length": 7.66},
        }
    )
    paper_model = "ptr 5-20"
    paper_constraints = "task"  # the paper's TSP beam keeps to valid tours (Sec. 4)
    solvers = TSP_SOLVERS
    square_symmetric = True
    rotation_invariant_labels = True
    has_cost = True
    objective_cost = True
    best_pick = "shortest tour"
    permutation_output = True
    completable = True
    searches = (RANDOM_RECONSTRUCT, TWO_OPT, OR_OPT)
    reads_tsplib = True

    def __init__(self, distances: Distances = EUCLIDEAN) -> None:
        self.distances = distances

    def with_distances(self, distances: Distances) -> TSPTask:
        return TSPTask(distances)

    def check_points(self, points: np.ndarray) -> None:
        """Raise ValueError for points the task's distance rule cannot measure (a latitude
        beyond 90 degrees under great-circle distances)."""
        problem = self.distances.problem(points)
        if problem is not None:
            raise ValueError(f"{self.distances.name} cities: {problem}")

    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        """The reference tour under the task's distances, counter-clockwise on
        :meth:`~ptrnet.tasks.base.Task.plane` (for Euclidean distances, on the points)."""
        solver = self.check_solver(solver)
        if self.distances == EUCLIDEAN:
            points = safe_range(points)  # the direction's shoelace area overflows at 1e300
            return canonical_tour(points, solve_tour(points, solver))
        tour = solve_tour(points, solver, dist=self.distances.search_matrix(points))
        return canonical_tour(self.plane(points), tour)

    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        return canonical_tour(points, seq)

    def reference_is_exact(self, n: int) -> bool:
        return n <= EXACT_MAX_N  # the ``auto`` solver: exact up to 20 cities, near-exact beyond

    def at_label_start(self, seq: np.ndarray) -> np.ndarray:
        return restart_closed_cycle(seq)  # a whole tour's lowest index is city 0

    def complete(
        self, points: np.ndarray, prefix: np.ndarray, solver: str | None = None
    ) -> np.ndarray:
        """``prefix`` (k cities from city 0, distinct) then the shortest path found by
        ``solver`` from its last city through the cities left back to city 0: the closed tour
        ``[0, ..., 0]`` (n + 1 indices) that is best among those starting with ``prefix``.
        A prefix of at most one city gets :meth:`solve`'s label (either direction is then as
        short; the label runs counter-clockwise)."""
        points = np.asarray(points, dtype=np.float64)
        prefix = np.asarray(prefix, dtype=np.int64)
        n = len(points)
        inside = len(prefix) == 0 or (prefix.min() >= 0 and prefix.max() < n)
        if len(prefix) and (prefix[0] != 0 or not inside or len(np.unique(prefix)) < len(prefix)):
            raise ValueError(f"not a tour prefix from city 0 of {n} cities: {prefix.tolist()}")
        if len(prefix) <= 1:
            return self.solve(points, solver)
        left = np.setdiff1d(np.arange(n), prefix)
        if not len(left):
            return np.append(prefix, 0)
        cities = np.concatenate([prefix[-1:], left, [0]])  # the path's ends first and last
        last, solver = len(cities) - 1, self.check_solver(solver)
        dist = self.distances.search_matrix(points[cities])
        path = solve_path(points[cities], 0, last, solver, dist)
        return np.concatenate([prefix[:-1], cities[path]])

    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        seq = np.asarray(seq)
        closed = len(seq) == len(points) + 1 and seq[0] == seq[-1]
        return (closed or len(seq) == len(points)) and is_permutation(open_cycle(seq), len(points))

    def label_shape_problem(self, n: int, seq: np.ndarray) -> str | None:
        if len(seq) != n + 1:
            return (
                f"TSP output has {len(seq)} indices, expected n + 1 = {n + 1} "
                "(closing index included)"
            )
        return None

    def sequence_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The closed tour's Euclidean length on the coordinates given, a model's frame
        (training's reward, the beam's ``shortest`` pick); inf for a sequence that is not a
        tour (possible in unconstrained decoding). A user's tour is measured by
        :meth:`answer_cost`, under the task's distances."""
        try:
            return tour_length(points, seq)
        except ValueError:
            return math.inf

    def answer_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The closed tour's length under the task's distances, in their unit (the input's
        units when Euclidean; kilometres for cities on the sphere); inf for a sequence that is
        not a tour."""
        try:
            return self.distances.tour_length(points, seq)
        except ValueError:
            return math.inf

    def max_steps(self, n: int) -> int:
        return n + 1

    def allowed_next(self, state: DecodeState) -> torch.Tensor:
        # Step 0: the first input (token 1) only; then every input not yet visited; at step
        # n_b, back to the first; after it, the end. Few tensor operations: each one's fixed
        # cost counts at every step of a lone decoding (docs/speed.md). Where every row is at
        # the same step of one size (DecodeState.moves, .size), the step's kind is known here.
        moves, size = state.moves, state.size
        if moves is not None and size:
            if moves == 0:
                return state.end.roll(1, dims=1)  # token 1
            if moves < size:
                return state.unvisited()
            if moves == size:
                return state.one_hot(state.first, state.first.bool())  # every row's first
            return state.end.clone()
        # Outside the middle steps one column is set by a scatter: token 1 at step 0 (the first
        # token is 0 until the first step), the first input at step n_b, the end after it; in
        # the middle the scatter writes False at the first input, visited already.
        steps, lengths = state.steps, state.lengths
        middle = (steps.bool() & (steps < lengths)).unsqueeze(1)  # (B, 1): 0 < steps < n_b
        column = (state.first.clamp(min=1) * (steps <= lengths)).unsqueeze(1)  # (B, 1)
        return (state.unvisited() & middle).scatter(1, column, ~middle)

    def batch_cost(
        self, points: torch.Tensor, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> torch.Tensor:
        """(B,) closed-tour lengths; row b's first ``lengths[b]`` tokens are its cities."""
        import torch

        size = points.shape[1]
        cities = (tokens[:, :size] - 1).clamp(min=0)  # (B, N) 0-based, junk past n_b
        ordered = points.gather(1, cities[..., None].expand(-1, -1, points.shape[2]))  # (B, N, 2)
        real = torch.arange(size, device=points.device)[None, :] < lengths[:, None]  # (B, N)
        # Pad positions repeat the first city, so the closing edge runs from the last real city
        # to it and every edge after that has length 0.
        ordered = torch.where(real[..., None], ordered, ordered[:, :1])
        return (ordered - ordered.roll(-1, dims=1)).norm(dim=2).sum(dim=1)

    def dataset_metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        return length_metrics(points, refs, preds, self.is_valid, self.distances.tour_length)
