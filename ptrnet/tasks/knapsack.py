"""0-1 knapsack, the problem Bello et al. (2016, "Neural Combinatorial Optimization with
Reinforcement Learning", Sec. 5) solved with a Ptr-Net beside TSP.

Task card
    Input: n items, each a point (weight, value), uniform in [0, 1) (float32 numbers, so the
    model reads them exactly).  Shape (n, 2).
    Capacity: Bello et al.'s, 12.5 for n = 50 and 25 for n = 100 and 200; for any n the rule
    ``min(n / 4, 25)`` (:func:`capacity`), which gives theirs.
    Output: the chosen items, each once, in decreasing value-per-weight order (ties by index),
    then the end symbol; files list their 1-based indices after ``output``. A weight counts at
    float32 precision, the precision a model reads it at (generated weights are float32
    numbers, so nothing is rounded for them); values count in full.
    Constraints (``task`` mode): an item not chosen yet that still fits; the end symbol only
    once no item fits, so every output is a feasible set to which no item can be added (an
    optimal set, values being >= 0, can always be filled up so). Bello et al. stop decoding at
    the first item that overflows; the mask keeps to feasible sets instead
    (``paper_constraints = "task"``).
    Metrics: ``valid_rate`` (distinct items whose weights fit), ``mean_value`` (total value,
    averaged over valid outputs), ``mean_gap`` (1 - value / optimal value, over valid outputs)
    and ``optimal_rate`` (share of all outputs worth the optimum).
    Cost (REINFORCE, the ``shortest`` pick): the negated total value. A result's answer cost
    is the total value.
    Reference: exact (:mod:`ptrnet.solvers.knapsack`), within a bound on its work
    (:data:`~ptrnet.solvers.knapsack.MAX_STATES` partial solutions) that random instances stay
    far below and adversarial ones (value = weight) pass, raising
    :class:`~ptrnet.solvers.errors.SearchBoundError`; solver ``near_exact`` is the exact one
    within that bound and beyond it a set within a stated distance of the optimum (what the
    web page shows, with its note: ``answer_solver``); solver ``greedy`` is the heuristic of
    taking items by decreasing value per weight while they fit, the baseline a model must beat
    (Bello et al.'s greedy stops at the first item that overflows; this one goes on). Negative
    weights or values, and numbers past float32's range (which no weight counts at and no
    model reads), are refused (:meth:`KnapsackTask.check_points`,
    :class:`DegenerateInstanceError`). Items are never mapped into the
    unit square (a weight means itself against the capacity: ``shape_invariant`` false);
    items outside [0, 1) are solved and decoded as given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.solvers.errors import DegenerateInstanceError
from ptrnet.solvers.knapsack import (
    check_items,
    greedy_knapsack,
    ratio_order,
    search_knapsack,
    solve_knapsack,
    total_fits,
)
from ptrnet.tasks.base import Reference, Task, check_indices

if TYPE_CHECKING:
    import torch

    from ptrnet.tasks.constraints import DecodeState

MAX_CAPACITY = 25.0  # Bello et al.'s capacity at n = 100 and 200
#: The largest number a float32 holds; past it (past half an ulp above it) the cast is inf.
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Slack of the decoding mask's float64 sums, a share of the capacity: far below the spacing
#: of float32 weights in [0, 1) (2**-24), so for them the mask is exact; for other inputs a
#: label always passes it (module :func:`KnapsackTask.allowed_next`).
SLACK = 2.0**-32


def capacity(n: int | np.ndarray | torch.Tensor):
    """The capacity for n items: ``min(n / 4, 25)`` (12.5 at n = 50, 25 at 100 and 200)."""
    if isinstance(n, int | float | np.integer):
        return min(n / 4, MAX_CAPACITY)
    return (n / 4).clip(max=MAX_CAPACITY)


def item_weights(points: np.ndarray) -> np.ndarray:
    """(n,) the weights as they count: the first column at float32 precision."""
    return np.asarray(points, dtype=np.float64)[:, 0].astype(np.float32).astype(np.float64)


def total_value(points: np.ndarray, seq: np.ndarray) -> float:
    """The correctly rounded sum of the chosen items' values."""
    return math.fsum(np.asarray(points, dtype=np.float64)[np.asarray(seq, dtype=np.int64), 1])


class KnapsackTask(Task):
    name = "knapsack"
    dim = 2
    min_n = 1
    metric_keys = ("valid_rate", "mean_value", "mean_gap", "optimal_rate")
    validation_metric = "mean_gap"
    lower_is_better = True
    validity_metric = "valid_rate"
    summary_metrics = ("mean_value", "mean_gap")
    demo_sizes = (50, 100, 200)
    drawing = "subset"
    rate_metrics = frozenset({"valid_rate", "mean_gap", "optimal_rate"})
    paper_results = MappingProxyType(  # Bello et al. (2016), Table 5: mean total values
        {
            ("optimal", 50): {"mean_value": 20.07},
            ("optimal", 100): {"mean_value": 40.50},
            ("optimal", 200): {"mean_value": 57.45},
            ("greedy heuristic", 50): {"mean_value": 19.24},
            ("greedy heuristic", 100): {"mean_value": 38.53},
            ("greedy heuristic", 200): {"mean_value": 55.42},
            ("rl greedy", 50): {"mean_value": 19.86},
            ("rl greedy", 100): {"mean_value": 40.27},
            ("rl greedy", 200): {"mean_value": 57.10},
            ("active search", 50): {"mean_value": 20.07},
            ("active search", 100): {"mean_value": 40.50},
            ("active search", 200): {"mean_value": 57.45},
            ("random search", 50): {"mean_value": 17.91},
            ("random search", 100): {"mean_value": 33.23},
            ("random search", 200): {"mean_value": 35.95},
        }
    )
    paper_model = "rl greedy"
    paper_source = "Bello et al. 2016, Table 5: their RL-trained Ptr-Net, greedy"
    paper_constraints = "task"  # Bello et al. never decode an overflowing set (module docstring)
    solvers = ("exact", "near_exact", "greedy")
    answer_solver = "near_exact"
    has_cost = True
    objective_cost = True
    best_pick = "most valuable load"
    shape_invariant = False  # weights count against a fixed capacity: never rescaled

    def sample_points(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n items (weight, value) uniform in [0, 1), as float32 numbers.  Returns (n, 2)."""
        return rng.random((n, 2), dtype=np.float32).astype(np.float64)

    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        return self.reference(points, solver).sequence

    def reference(self, points: np.ndarray, solver: str | None = None) -> Reference:
        """The solver's set in canonical order; ``near_exact``'s is noted where the exact
        search's bound was reached (its value and the bound on the optimum's).

        Raises:
            DegenerateInstanceError: an instance :meth:`check_points` refuses.
            SearchBoundError: solver ``exact`` past its bound on work.
        """
        self.check_points(points)
        points = np.asarray(points, dtype=np.float64)
        args = item_weights(points), points[:, 1], capacity(len(points))
        solver = self.check_solver(solver)
        if solver == "greedy":
            return Reference(self.canonical(points, greedy_knapsack(*args)))
        if solver == "exact":
            return Reference(self.canonical(points, solve_knapsack(*args)))
        found = search_knapsack(*args, exact=False)
        note = None
        if not found.optimal:
            note = (
                f"not proved optimal (the exact search's bound was reached): the set is worth "
                f"{total_value(points, found.chosen):.10g}, the optimum at most "
                f"{found.bound:.10g}"
            )
        return Reference(self.canonical(points, found.chosen), note)

    def check_points(self, points: np.ndarray) -> None:
        """Weights and values finite, >= 0 and within float32's range: a weight counts at
        float32 precision and a model reads both as float32 (5e99 would be ``inf``).

        Raises:
            DegenerateInstanceError: naming the first item that is not.
        """
        points = np.asarray(points, dtype=np.float64)
        check_items(points[:, 0], points[:, 1])
        big = np.flatnonzero((points > FLOAT32_MAX).any(axis=1))
        if big.size:
            i = int(big[0])
            what = "weight" if points[i, 0] > FLOAT32_MAX else "value"
            number = float(points[i, 0 if what == "weight" else 1])
            raise DegenerateInstanceError(
                f"knapsack {what}s must be at most {FLOAT32_MAX:.8g} (float32, what a model "
                f"reads); item {i + 1} has {what} {number!r}"
            )

    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        seq = np.asarray(seq, dtype=np.int64)
        if not len(seq):
            return seq
        points = np.asarray(points, dtype=np.float64)
        return seq[ratio_order(item_weights(points)[seq], points[seq, 1])]

    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        seq = np.asarray(seq)
        n = len(points)
        return (
            check_indices(seq, n)
            and len(np.unique(seq)) == len(seq)
            and total_fits(item_weights(points), seq, capacity(n))
        )

    def max_steps(self, n: int) -> int:
        return n

    def sequence_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The negated total value; inf for an output that is not a feasible set."""
        return -total_value(points, seq) if self.is_valid(points, seq) else math.inf

    def answer_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The total value of the chosen items (NaN for an output that is not a feasible set)."""
        return total_value(points, seq) if self.is_valid(points, seq) else math.nan

    def batch_cost(
        self, points: torch.Tensor, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> torch.Tensor:
        """(B,) negated total values; tokens past a row's end are 0 (the end symbol)."""
        import torch

        values = torch.nn.functional.pad(points[..., 1], (1, 0))  # (B, N+1), the end worth 0
        return -values.gather(1, tokens.clamp(min=0)).sum(dim=1)

    def allowed_next(self, state: DecodeState) -> torch.Tensor:
        """Items not chosen yet that fit the room left; the end once none does.

        Sums run in float64 over float32 weights, exact for weights in [0, 1) whose sum stays
        below 2**29. For other inputs :data:`SLACK` (times the capacity) covers the rounding:
        an item fits if its weight is at most the room plus the slack, and the end is allowed
        when no item fits within the room less the slack, so an exact label passes both."""
        weights = state.located()[..., 0]  # (B, n+1), the end column 0
        cap = capacity(state.lengths.to(weights.dtype))  # (B,)
        room = cap - (weights * state.visited).sum(dim=1)  # (B,)
        slack = SLACK * cap
        free = state.unvisited()
        fits = free & (weights <= (room + slack)[:, None])
        full = ~(free & (weights <= (room - slack)[:, None])).any(dim=1)
        return fits | state.end_if(full)

    def dataset_metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        values, gaps, optimal = [], [], 0
        for x, ref, pred in zip(points, refs, preds, strict=True):
            if not self.is_valid(x, pred):
                continue
            best = total_value(x, ref)
            values.append(total_value(x, pred))
            gaps.append(1.0 - values[-1] / best if best > 0 else 0.0)
            optimal += values[-1] >= best
        count = len(refs)
        return {
            "valid_rate": len(values) / count,
            "mean_value": float(np.mean(values)) if values else math.nan,
            "mean_gap": float(np.mean(gaps)) if gaps else math.nan,
            "optimal_rate": optimal / count,
            "count": count,
        }
