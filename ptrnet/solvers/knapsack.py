"""Exact 0-1 knapsack: the most valuable set of items whose weights fit a capacity.

The solver is a dynamic programme over Pareto-optimal partial solutions (Nemhauser and
Ullmann 1969) with the linear-relaxation bound of Dantzig (1957) pruning partial solutions that
cannot reach the best value found, in exact integer arithmetic.

Exactness: every finite float is an integer multiple of a power of two, so
:func:`integer_units` scales the weights and the capacity by one power of two, and the values by
another, into Python integers without rounding; sums and comparisons are then exact. After items
``0..k`` (taken in decreasing value-per-weight order) the programme keeps, for every set of them
that fits, one set of least weight among those of at least its value (dominance: whatever
completes a dominated set completes its dominator, at least as well), and drops a set whose
Dantzig bound (its value plus the fractional greedy fill of the remaining capacity with the items
left) is below the value of a set already known to fit. That bound is an upper bound on every
completion, so a set that completes to an optimum is never dropped, and the best set at the end
is optimal. Items heavier than the capacity never fit and are left out first; items of weight 0
are always taken. The answer is then filled up: any item that still fits (one of value 0, since
the set is optimal) is added, so that no item fits beside it.

On random instances (weights and values uniform in [0, 1], Bello et al.'s protocol) the bound
keeps a few hundred partial solutions at n = 200 (under 200,000 over all items at n = 100,000).
The front can grow as 2^n where many subsets are worth the same per weight (value = weight, or
value = weight + a constant), so the search is bounded: it keeps at most :data:`MAX_STATES`
partial solutions over all items, counted as it goes. :func:`solve_knapsack` stops at the bound
with :class:`SearchBoundError`; :func:`search_knapsack` with ``exact=False`` (solver
``near_exact``) then searches again keeping at most ``MAX_STATES // m`` sets per item (m items):
where a front is longer, of the sets whose values fall in one band of width ``step`` (the
root's Dantzig bound / (cap - 1)) only the lightest is kept, which loses less than ``step`` of
value per item. Whatever completes the optimum's prefix completes its kept stand-in, so the set
returned is worth at least the optimum less the sum of those losses; that and Dantzig's bound
give the upper bound on the optimum it reports.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cmp_to_key
from typing import NamedTuple

import numpy as np

from ptrnet.solvers.errors import DegenerateInstanceError, SearchBoundError

INT64_ROOM = 2**62  # sums below this fit numpy's int64; larger ones use Python integers
#: Partial solutions one search keeps over all its items: the trail that rebuilds the answer
#: holds 9 bytes each (19 MB), the largest front's arrays about 100 bytes each.
MAX_STATES = 2**21
#: A search whose sums need Python integers (past :data:`INT64_ROOM`) keeps 1/8 as many
#: (262,144): their arithmetic and sorting cost about 8-16 times more per set. Random
#: instances of 100,000 items keep about 170,000.
WIDE_SHARE = 8


def integer_units(numbers: np.ndarray, *extra: float) -> tuple[list[int], list[int]]:
    """``numbers`` and ``extra`` (finite floats >= 0) as integers over one common power of two:
    ``numbers[i] == units[i] / 2**k`` exactly for all of them (the returned pair is the units of
    ``numbers``, then those of ``extra``)."""
    units, extra_units, _ = _scaled(numbers, *extra)
    return units, extra_units


def _scaled(numbers: np.ndarray, *extra: float) -> tuple[list[int], list[int], int]:
    """:func:`integer_units`, and the power of two ``2**k`` they are over."""
    ratios = [float(x).as_integer_ratio() for x in (*np.asarray(numbers).tolist(), *extra)]
    scale = max((q for _, q in ratios), default=1)  # every q is a power of two
    units = [p * (scale // q) for p, q in ratios]
    count = len(units) - len(extra)
    return units[:count], units[count:], scale


def check_items(weights: np.ndarray, values: np.ndarray) -> None:
    """Raises DegenerateInstanceError unless every weight and value is finite and >= 0 (a
    negative weight would make room, and the problem another one)."""
    for what, numbers in (("weight", weights), ("value", values)):
        bad = np.flatnonzero(~(np.asarray(numbers, dtype=np.float64) >= 0) | ~np.isfinite(numbers))
        if bad.size:
            i = int(bad[0])
            raise DegenerateInstanceError(
                f"knapsack {what}s must be finite and >= 0; item {i + 1} has {what} "
                f"{float(numbers[i])!r}"
            )


def ratio_order(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Item indices by decreasing value per weight (weight 0 first), ties by index, exactly:
    sorted by the float ratios, then checked pair by pair in integers (and sorted again by
    exact comparisons where rounding misordered a pair)."""
    weights = np.asarray(weights, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(weights > 0, values / weights, np.inf)
    order = np.lexsort((np.arange(len(weights)), -ratio))
    w, v = integer_units(weights)[0], integer_units(values)[0]
    if all(
        _before(a, b, w, v) for a, b in zip(order[:-1].tolist(), order[1:].tolist(), strict=True)
    ):
        return order
    keys = sorted(range(len(w)), key=cmp_to_key(lambda a, b: -1 if _before(a, b, w, v) else 1))
    return np.array(keys, dtype=np.int64)


def _before(a: int, b: int, w: list[int], v: list[int]) -> bool:
    """Whether item ``a`` comes before item ``b``: a higher exact value per weight (weight 0
    highest), or the same and a lower index."""
    if w[a] == 0 or w[b] == 0:
        left, right = int(w[a] == 0), int(w[b] == 0)
    else:
        left, right = v[a] * w[b], v[b] * w[a]
    return left > right or (left == right and a < b)


def total_fits(weights: np.ndarray, chosen: np.ndarray, capacity: float) -> bool:
    """Whether the exact sum of ``weights[chosen]`` is at most ``capacity``."""
    units, (cap,) = integer_units(np.asarray(weights)[np.asarray(chosen, dtype=np.int64)], capacity)
    return sum(units) <= cap


class KnapsackSet(NamedTuple):
    """A set :func:`search_knapsack` found.

    Attributes:
        chosen: (k,) int64 item indices, ascending; no further item fits beside them.
        optimal: whether the set is proved optimal.
        bound: an upper bound on the optimal total value (rounded up to a float); the set's own
            value when ``optimal``.
        states: the partial solutions the search that found it kept over all items (at most
            its bound, :data:`MAX_STATES` or a share of it).
    """

    chosen: np.ndarray
    optimal: bool
    bound: float
    states: int


def solve_knapsack(weights: np.ndarray, values: np.ndarray, capacity: float) -> np.ndarray:
    """The indices (ascending) of an optimal set: maximum total value, total weight at most
    ``capacity``, filled up so no further item fits (module docstring).

    Raises:
        DegenerateInstanceError: a negative or non-finite weight or value.
        SearchBoundError: the search would keep more than :data:`MAX_STATES` partial solutions.
    """
    return search_knapsack(weights, values, capacity).chosen


def search_knapsack(
    weights: np.ndarray,
    values: np.ndarray,
    capacity: float,
    *,
    exact: bool = True,
    max_states: int | None = None,
) -> KnapsackSet:
    """The best set the search finds within ``max_states`` partial solutions (None:
    :data:`MAX_STATES`; a search in Python integers keeps 1/:data:`WIDE_SHARE` of it, and the
    bounded one at least 2 per item): an optimal one
    (``exact``, else :class:`SearchBoundError` at the bound), or, with ``exact`` false, an
    optimal one where the bound allows and otherwise one within the reported bound of the
    optimum (module docstring).

    Raises:
        DegenerateInstanceError: a negative or non-finite weight or value.
        SearchBoundError: ``exact`` and the bound reached.
    """
    max_states = MAX_STATES if max_states is None else max_states
    weights = np.asarray(weights, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    check_items(weights, values)
    w_units, (cap,) = integer_units(weights, capacity)
    v_units, _, v_scale = _scaled(values)
    order = [i for i in ratio_order(weights, values).tolist() if w_units[i] <= cap]
    free = [i for i in order if w_units[i] == 0]
    items = [i for i in order if w_units[i] > 0]
    w, v = [w_units[i] for i in items], [v_units[i] for i in items]
    try:
        picked, lost, states = _pareto_search(w, v, cap, max_states, None)
    except _BoundReached as reached:
        if exact:
            raise SearchBoundError(
                f"the exact knapsack search passed its bound of {reached.args[0]:,} partial "
                f"solutions on {len(items):,} items; solver 'near_exact' answers within a "
                "stated bound of the optimum",
                "near_exact",
            ) from None
        front_cap = max(2, max_states // len(items))
        picked, lost, states = _pareto_search(w, v, cap, max_states, front_cap)
    chosen = set(free) | {items[k] for k in picked}
    used = sum(w_units[i] for i in chosen)
    for i in order:  # fill up: only items of value 0 can still fit beside an optimal set
        if i not in chosen and used + w_units[i] <= cap:
            chosen.add(i)
            used += w_units[i]
    got = sum(v_units[i] for i in chosen)
    free_value = sum(v_units[i] for i in free)
    upper = min(Fraction(got + lost), free_value + _dantzig(w, v, cap))
    return KnapsackSet(
        np.array(sorted(chosen), dtype=np.int64), upper <= got, _float_up(upper / v_scale), states
    )


def greedy_knapsack(weights: np.ndarray, values: np.ndarray, capacity: float) -> np.ndarray:
    """The greedy heuristic's set (indices ascending): the items in decreasing value per weight,
    each taken if it still fits (exact sums), so no item fits beside the result. It is what a
    decoder that always points at the best ratio the mask allows outputs.

    Raises:
        DegenerateInstanceError: a negative or non-finite weight or value.
    """
    weights = np.asarray(weights, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    check_items(weights, values)
    w_units, (cap,) = integer_units(weights, capacity)
    chosen, used = [], 0
    for i in ratio_order(weights, values).tolist():
        if used + w_units[i] <= cap:
            chosen.append(i)
            used += w_units[i]
    return np.array(sorted(chosen), dtype=np.int64)


class _BoundReached(Exception):
    """The exact search would keep more partial solutions than its bound (the argument)."""


def _pareto_search(
    w: list[int], v: list[int], cap: int, max_states: int, front_cap: int | None
) -> tuple[list[int], int, int]:
    """The positions of an optimal set of items ``w``, ``v`` (positive integer weights, in
    decreasing value-per-weight order) under integer capacity ``cap``, the value lost to
    trimming (0: the set is optimal) and the partial solutions kept over all items.

    ``front_cap`` None: exact, raising :class:`_BoundReached` once more than ``max_states``
    sets are kept over all items. Otherwise a front longer than ``front_cap`` keeps only the
    lightest set per value band (module docstring); the answer is then the most valuable set
    ever kept (or the greedy one), which is worth at least the optimum less the loss."""
    if not w:
        return [], 0, 0
    room = (sum(v) + 1) * (max(*w, cap) + max(v) + 1)  # the bound's largest product
    dtype = np.int64 if room < INT64_ROOM else object
    if dtype is object:
        max_states //= WIDE_SHARE
        front_cap = front_cap and max(2, front_cap // WIDE_SHARE)
    weight = np.zeros(1, dtype=dtype)  # (S,) the kept sets' weights, ascending
    value = np.zeros(1, dtype=dtype)  # (S,) their values, ascending too (Pareto front)
    prefix_w, prefix_v = _prefix(w, dtype), _prefix(v, dtype)  # (m+1,) each
    items_w, items_v = np.array(w, dtype=dtype), np.array(v, dtype=dtype)
    greedy = _greedy_fill(w, cap)
    best, best_at = sum(v[k] for k in greedy), None  # a set known to fit, and where it is kept
    step = max(1, -(-math.floor(_dantzig(w, v, cap)) // (front_cap - 1))) if front_cap else 1
    trail = []  # per item: (parent of each kept set, whether it took the item)
    kept = lost = 0
    for k in range(len(w)):
        take = weight + w[k] <= cap
        parent = np.concatenate([np.arange(len(take)), np.flatnonzero(take)])
        weight = np.concatenate([weight, weight[take] + w[k]])
        value = np.concatenate([value, value[take] + v[k]])
        took = np.arange(len(weight)) >= len(take)
        keep = _pareto(weight, value)
        if front_cap is None:
            best = max(best, value[keep].max())
        bound = _bound_reaches(
            cap - weight[keep], value[keep], best, k + 1, prefix_w, prefix_v, items_w, items_v
        )
        keep = keep[bound]
        if front_cap is not None and len(keep) > front_cap:
            band = value[keep] // step  # ascending, as the front's values are
            keep = keep[np.concatenate([[True], band[1:] != band[:-1]])]
            lost += step - 1
        kept += len(keep)
        if front_cap is None and kept > max_states:
            raise _BoundReached(max_states)
        weight, value = weight[keep], value[keep]
        trail.append((parent[keep], took[keep]))
        if not len(value):  # trimmed stand-ins all below the best kept: it is the answer
            break
        if front_cap is not None and value[-1] > best:  # the front's most valuable set is last
            best, best_at = value[-1], (k, len(value) - 1)
    if front_cap is None:  # the lightest set of the best value
        best_at = (len(w) - 1, int(np.flatnonzero(value == value.max())[0]))
    return (greedy if best_at is None else _rebuild(trail, *best_at)), lost, kept


def _rebuild(trail: list[tuple[np.ndarray, np.ndarray]], last: int, at: int) -> list[int]:
    """The item positions of the set kept at index ``at`` after item ``last``."""
    picked = []
    for k in range(last, -1, -1):
        parent, took = trail[k]
        if took[at]:
            picked.append(k)
        at = int(parent[at])
    return picked


def _pareto(weight: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Indices of the sets no other dominates (as light or lighter, and worth at least as
    much), ascending by weight; of equal sets the first."""
    if weight.dtype == object:
        order = sorted(range(len(weight)), key=lambda i: (weight[i], -value[i], i))
        order = np.array(order, dtype=np.int64)
    else:
        order = np.lexsort((np.arange(len(weight)), -value, weight))
    ordered = value[order]
    before = np.maximum.accumulate(ordered)  # the best value at most this heavy
    strict = np.concatenate([[True], ordered[1:] > before[:-1]])
    return order[strict]


def _bound_reaches(room, value, best, start, prefix_w, prefix_v, items_w, items_v) -> np.ndarray:
    """(S,) bool: whether each set's Dantzig bound reaches ``best``.

    The bound adds to ``value`` the items ``start, start+1, ...`` whole while they fit in
    ``room``, then the next one (the break item) fractionally. ``prefix_w[j]`` is the weight of
    the first j items; the fractional comparison is multiplied out so it stays in integers."""
    reach = np.searchsorted(prefix_w, room + prefix_w[start], side="right") - 1  # items < reach
    head = value + prefix_v[reach] - prefix_v[start] - best
    keep = head >= 0
    partial = reach < len(items_w)  # a break item exists
    if partial.any():
        at = reach[partial]
        rest = room[partial] - (prefix_w[at] - prefix_w[start])
        keep[partial] = head[partial] * items_w[at] + rest * items_v[at] >= 0
    return keep


def _prefix(numbers: list[int], dtype) -> np.ndarray:
    """(m+1,) the sums of the first j numbers, j = 0 .. m."""
    out = np.zeros(len(numbers) + 1, dtype=dtype)
    out[1:] = np.cumsum(np.array(numbers, dtype=dtype))
    return out


def _greedy_fill(w: list[int], cap: int) -> list[int]:
    """The positions the greedy fill takes in the given order: a set known to fit."""
    used, picked = 0, []
    for k, wk in enumerate(w):
        if used + wk <= cap:
            used += wk
            picked.append(k)
    return picked


def _dantzig(w: list[int], v: list[int], cap: int) -> Fraction:
    """Dantzig's bound on the value of any set of items ``w``, ``v`` (positive weights, in
    decreasing value-per-weight order) under ``cap``: the greedy fill, then the break item
    fractionally."""
    total, room = 0, cap
    for wk, vk in zip(w, v, strict=True):
        if wk > room:
            return total + Fraction(room * vk, wk)
        total, room = total + vk, room - wk
    return Fraction(total)


def _float_up(x: Fraction) -> float:
    """The least float >= ``x`` (inf past the largest float)."""
    try:
        out = float(x)
    except OverflowError:
        return math.inf
    return out if out >= x else math.nextafter(out, math.inf)
