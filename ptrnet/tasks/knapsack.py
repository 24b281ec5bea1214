"""0-1 knapsack, the problem Bello et al. (2016, "Neural Combinatorial Optimization with
Reinforcement Learning", Sec. 5) solved with a Ptr-Net beside TSP.

Task card
    Input: n items, each a point (weight, value), uniform in [0, 1) (float32 numbers, so the
    model reads them exactly).  Shape (n, 2).
    Capacity: by default Bello et al.'s, 12.5 for n = 50 and 25 for n = 100 and 200; for any n
    the rule ``min(n / 4, 25)`` (:func:`capacity`), which gives theirs. An instance may state
    its own: shape (n, 3), the third column the capacity on every row
    (:func:`with_capacity`, the one way to build one; :func:`stated_capacity` reads it back).
    A capacity counts at float32 precision, rounded down (:func:`counted_capacity`), so a set
    that fits it fits the number given. :class:`CapacitySpec` is the ``--capacity`` option:
    a number, a share of the items' total weight (``30%``) or a range of shares drawn per
    instance (``10%-50%``, :meth:`KnapsackTask.with_capacities` for generation).
    Output: the chosen items, each once, in decreasing value-per-weight order (ties by index),
    then the end symbol; files list their 1-based indices after ``output``. A weight counts at
    float32 precision, the precision a model reads it at (generated weights are float32
    numbers, so nothing is rounded for them); values count in full.
    Constraints (``task`` mode): an item not chosen yet that still fits; the end symbol only
    once no item fits, so every output is a feasible set to which no item can be added (an
    optimal set, values being >= 0, can always be filled up so). Bello et al. stop decoding at
    the first item that overflows; the mask keeps to feasible sets instead
    (``paper_constraints = "task"``).
    Metrics: ``valid_rate`` (distinct items whose weights fit the capacity), ``mean_value``
    (total value, averaged over valid outputs), ``mean_gap`` (1 - value / optimal value, over
    valid outputs) and ``optimal_rate`` (share of all outputs worth the optimum).
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
import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.quoting import quote
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
from ptrnet.tasks.state_fields import StateField, fixed

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


def counted_capacity(value: float) -> float:
    """``value`` as a capacity counts: the largest float32 number at most ``value``, so a model
    (which reads float32) and the solvers measure against the same number, and a set that fits
    it fits ``value``.

    Raises:
        ValueError: ``value`` not a finite number > 0 within float32's range, or below float32's
            smallest positive number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ValueError(f"a knapsack capacity is a number, got {quote(value)}")
    value = float(value)
    if not (math.isfinite(value) and 0 < value <= FLOAT32_MAX):
        raise ValueError(
            f"a knapsack capacity is a finite number > 0 and at most {FLOAT32_MAX:.8g} "
            f"(float32), not {value!r}"
        )
    counted = np.float32(value)
    if float(counted) > value:
        counted = np.nextafter(counted, np.float32(0))
    if counted <= 0:
        raise ValueError(
            f"a knapsack capacity is at least float32's smallest positive number, not {value!r}"
        )
    return float(counted)


def with_capacity(points: np.ndarray, value: float) -> np.ndarray:
    """Items (n, 2) (or an instance that states a capacity, (n, 3), whose capacity is
    replaced) under capacity ``value``: (n, 3) float64, the third column
    :func:`counted_capacity` of ``value`` on every row.

    Raises:
        ValueError: a capacity :func:`counted_capacity` refuses, or ``points`` of another shape.
    """
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] not in (2, 3):
        raise ValueError(f"knapsack items are an (n, 2) array; got shape {points.shape}")
    column = np.full((len(points), 1), counted_capacity(value))
    return np.concatenate([points[:, :2], column], axis=1)


def stated_capacity(points: np.ndarray) -> float | None:
    """The capacity an instance states (its third column), or None for items (n, 2)."""
    points = np.asarray(points)
    return float(points[0, 2]) if points.ndim == 2 and points.shape[1] == 3 else None


def instance_capacity(points: np.ndarray) -> float:
    """The capacity an instance is solved against: the one it states, else Bello et al.'s
    :func:`capacity` of its size."""
    stated = stated_capacity(points)
    return capacity(len(points)) if stated is None else counted_capacity(stated)


@dataclass(frozen=True)
class CapacitySpec:
    """The ``--capacity`` option: a number (``12.5``), a share of each instance's total weight
    (``30%``), or shares drawn uniformly per instance (``10%-50%``).

    Attributes:
        value: the capacity itself, or None for a share.
        share: (lo, hi) fractions of the total weight, 0 < lo <= hi <= 1, or None.
    """

    value: float | None = None
    share: tuple[float, float] | None = None

    @classmethod
    def parse(cls, text: str | float) -> CapacitySpec:
        """``"12.5"``, ``"30%"`` or ``"10%-50%"`` (or a number) as a spec.

        Raises:
            ValueError: one line naming the text and the forms taken.
        """
        if not isinstance(text, str):
            return cls(value=counted_capacity(text))
        forms = "a number > 0 (12.5), a share of the total weight (30%) or a range (10%-50%)"
        number = r"\s*(\d+(?:\.\d*)?|\.\d+)\s*"
        shares = re.fullmatch(f"{number}%(?:-{number}%)?\\s*", text)
        try:
            value = None if shares else float(text)
        except ValueError:
            raise ValueError(f"{quote(text)}: expected {forms}") from None
        if shares is None:
            try:
                return cls(value=counted_capacity(value))
            except ValueError as err:
                raise ValueError(f"{quote(text)}: {err}") from None
        lo = float(shares.group(1)) / 100
        hi = float(shares.group(2) or shares.group(1)) / 100
        if not 0 < lo <= hi <= 1:
            raise ValueError(
                f"{quote(text)}: a share of the total weight lies in (0%, 100%], low end first"
            )
        return cls(share=(lo, hi))

    def draw(self, weights: np.ndarray, rng: np.random.Generator | None = None) -> float:
        """The capacity for items of ``weights``: the number, or a share of their sum (a range
        drawn from ``rng``, the instance's own generator).

        Raises:
            ValueError: a share of items that weigh nothing (no capacity > 0 comes of it).
        """
        if self.value is not None:
            return self.value
        lo, hi = self.share
        share = lo if lo == hi else float(rng.uniform(lo, hi))
        total = math.fsum(np.asarray(weights, dtype=np.float64).tolist())
        if not total > 0:
            raise ValueError(f"the items weigh 0 in all, so no share ({self}) of it is a capacity")
        return counted_capacity(share * total)

    def __str__(self) -> str:
        if self.value is not None:
            return repr(self.value)
        lo, hi = (f"{100 * x:g}%" for x in self.share)
        return lo if lo == hi else f"{lo}-{hi}"


def item_weights(points: np.ndarray) -> np.ndarray:
    """(n,) the weights as they count: the first column at float32 precision."""
    return np.asarray(points, dtype=np.float64)[:, 0].astype(np.float32).astype(np.float64)


def total_value(points: np.ndarray, seq: np.ndarray) -> float:
    """The correctly rounded sum of the chosen items' values."""
    return math.fsum(np.asarray(points, dtype=np.float64)[np.asarray(seq, dtype=np.int64), 1])


def row_capacities(state: DecodeState) -> torch.Tensor:
    """(B,) float64 each row's capacity: the one its instance states (a third column, the same
    on every item), else Bello et al.'s :func:`capacity` of its size."""
    located = state.located()  # (B, n+1, dim), the end column 0
    if located.shape[-1] == 3 and located.shape[1] > 1:
        return located[:, 1, 2]  # item 1's (every row has one)
    return capacity(state.lengths.to(located.dtype))


def _room_left(room, state: DecodeState, token, moved) -> torch.Tensor:
    taken = state.own["weights"].gather(1, token[:, None])[:, 0]  # (B,), the end's 0
    return (room - taken).where(moved, room)


#: The knapsack rule's own decoding state (:meth:`KnapsackTask.allowed_next`): each row's
#: weights (B, n+1) float64 as the model reads them (the end column 0), the slack of its sums
#: (B,) (:data:`SLACK` times the capacity), both fixed, and the room left (B,): the capacity
#: less the weights chosen so far.
ROOM = (
    StateField("weights", lambda state: state.located()[..., 0], fixed),
    StateField("slack", lambda state: SLACK * row_capacities(state), fixed),
    StateField("room", row_capacities, _room_left),
)


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
    shape_invariant = False  # weights count against the capacity in their own units: never rescaled
    state_fields = ROOM

    capacity_column = True  # an instance may state its capacity: (n, 3)

    def __init__(self, capacities: CapacitySpec | None = None) -> None:
        self.capacities = capacities

    def with_capacities(self, capacities: CapacitySpec | None) -> KnapsackTask:
        """This task generating instances under ``capacities`` (None: Bello et al.'s, stated
        by none): what ``ptrnet generate knapsack --capacity`` draws from."""
        return KnapsackTask(capacities)

    def with_capacity(self, points: np.ndarray, capacity: float | str | CapacitySpec) -> np.ndarray:
        """Items (n, 2) (or an instance stating another capacity) under ``capacity``: a number,
        or a :class:`CapacitySpec` (or its text) of one share of their total weight.

        Raises:
            ValueError: a capacity :func:`counted_capacity` refuses, a range of shares (drawn
                only where instances are generated), or a share of items weighing nothing.
        """
        spec = capacity if isinstance(capacity, CapacitySpec) else CapacitySpec.parse(capacity)
        if spec.share is not None and spec.share[0] != spec.share[1]:
            raise ValueError(
                f"a range of shares ({spec}) is drawn for generated instances only; give one "
                "share (30%) or a number"
            )
        return with_capacity(points, spec.draw(item_weights(points)))

    def stated_capacity(self, points: np.ndarray) -> float | None:
        return stated_capacity(points)

    def instance_capacity(self, points: np.ndarray) -> float:
        return instance_capacity(points)

    def model_rows(self, points: np.ndarray, input_dim: int) -> np.ndarray:
        """Rows for a model reading ``input_dim`` numbers: a capacity-reading model (3) gets
        items without one under Bello et al.'s :func:`capacity`, stated.

        Raises:
            ValueError: an instance stating its capacity for a model that reads none (it was
                trained under Bello et al.'s only), or rows of another width.
        """
        points = np.asarray(points, dtype=np.float64)
        if input_dim == 3 and points.shape[1:] == (2,):
            return with_capacity(points, capacity(len(points)))
        if input_dim == 2 and points.shape[1:] == (3,):
            raise ValueError(
                f"the instance states capacity {stated_capacity(points)!r}, and this model reads "
                f"no capacity: it was trained under Bello et al.'s min(n / 4, 25) only; decode "
                "it with a model trained with --features capacity (the bundled knapsack model "
                "routes stated capacities to one)"
            )
        return super().model_rows(points, input_dim)

    def sample_points(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n items (weight, value) uniform in [0, 1), as float32 numbers: (n, 2); with
        ``capacities`` (n, 3), the capacity drawn after the items from the same ``rng``, so
        the items are those of the same seed without it."""
        items = rng.random((n, 2), dtype=np.float32).astype(np.float64)
        if self.capacities is None:
            return items
        return with_capacity(items, self.capacities.draw(item_weights(items), rng))

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
        args = item_weights(points), points[:, 1], instance_capacity(points)
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
        float32 precision and a model reads both as float32 (5e99 would be ``inf``); a stated
        capacity as :meth:`check_capacity` takes it.

        Raises:
            DegenerateInstanceError: naming the first item that is not.
        """
        points = np.asarray(points, dtype=np.float64)
        check_items(points[:, 0], points[:, 1])
        self.check_capacity(points)
        big = np.flatnonzero((points[:, :2] > FLOAT32_MAX).any(axis=1))
        if big.size:
            i = int(big[0])
            what = "weight" if points[i, 0] > FLOAT32_MAX else "value"
            number = float(points[i, 0 if what == "weight" else 1])
            raise DegenerateInstanceError(
                f"knapsack {what}s must be at most {FLOAT32_MAX:.8g} (float32, what a model "
                f"reads); item {i + 1} has {what} {number!r}"
            )

    @staticmethod
    def check_capacity(points: np.ndarray) -> None:
        """A stated capacity (the third column) the same on every row and one that
        :func:`counted_capacity` takes; nothing to check for items (n, 2).

        Raises:
            DegenerateInstanceError: naming the problem.
        """
        if points.shape[1] != 3:
            return
        column = points[:, 2]
        if not (column == column[0]).all():
            row = int(np.flatnonzero(column != column[0])[0])
            raise DegenerateInstanceError(
                f"a knapsack instance states one capacity; item {row + 1} has {column[row]!r}, "
                f"item 1 {column[0]!r}"
            )
        try:
            counted_capacity(float(column[0]))
        except ValueError as err:
            raise DegenerateInstanceError(str(err)) from None

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
            and total_fits(item_weights(points), seq, instance_capacity(points))
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
        """Items not chosen yet that fit the room left under each row's capacity (stated, else
        Bello et al.'s: :data:`ROOM`); the end once none does.

        The room is kept in float64 from float32 weights, exact for weights in [0, 1) whose sum
        stays below 2**29. For other inputs :data:`SLACK` (times the capacity) covers the
        rounding: an item fits if its weight is at most the room plus the slack, and the end is
        allowed when no item fits within the room less the slack, so an exact label passes
        both."""
        weights, room, slack = state.own["weights"], state.own["room"], state.own["slack"]
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
