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
keeps a few hundred partial solutions at n = 200; the worst case is pseudo-polynomial in the
Pareto front's size, as for every exact knapsack method.
"""

from __future__ import annotations

from functools import cmp_to_key

import numpy as np

from ptrnet.solvers.errors import DegenerateInstanceError

INT64_ROOM = 2**62  # sums below this fit numpy's int64; larger ones use Python integers


def integer_units(numbers: np.ndarray, *extra: float) -> tuple[list[int], list[int]]:
    """``numbers`` and ``extra`` (finite floats >= 0) as integers over one common power of two:
    ``numbers[i] == units[i] / 2**k`` exactly for all of them (the returned pair is the units of
    ``numbers``, then those of ``extra``)."""
    ratios = [float(x).as_integer_ratio() for x in (*np.asarray(numbers).tolist(), *extra)]
    scale = max((q for _, q in ratios), default=1)  # every q is a power of two
    units = [p * (scale // q) for p, q in ratios]
    count = len(units) - len(extra)
    return units[:count], units[count:]


def check_items(weights: np.ndarray, values: np.ndarray) -> None:
    """Raises DegenerateInstanceError unless every weight and value is finite and >= 0 (a
    negative weight would make room, and the problem another one)."""
    for what, numbers in (("weight", weights), ("value", values)):
        bad = np.flatnonzero(~(np.asarray(numbers, dtype=np.float64) >= 0) | ~np.isfinite(numbers))
        if bad.size:
            i = int(bad[0])
            raise DegenerateInstanceError(
                f"knapsack {what}s must be finite and >= 0; item {i + 1} has {what} {numbers[i]!r}"
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


def solve_knapsack(weights: np.ndarray, values: np.ndarray, capacity: float) -> np.ndarray:
    """The indices (ascending) of an optimal set: maximum total value, total weight at most
    ``capacity``, filled up so no further item fits (module docstring).

    Raises:
        DegenerateInstanceError: a negative or non-finite weight or value.
    """
    weights = np.asarray(weights, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    check_items(weights, values)
    w_units, (cap,) = integer_units(weights, capacity)
    v_units, _ = integer_units(values)
    order = [i for i in ratio_order(weights, values).tolist() if w_units[i] <= cap]
    free = [i for i in order if w_units[i] == 0]
    items = [i for i in order if w_units[i] > 0]
    chosen = set(free) | set(
        _pareto_search([w_units[i] for i in items], [v_units[i] for i in items], cap, items)
    )
    used = sum(w_units[i] for i in chosen)
    for i in order:  # fill up: only items of value 0 can still fit beside an optimal set
        if i not in chosen and used + w_units[i] <= cap:
            chosen.add(i)
            used += w_units[i]
    return np.array(sorted(chosen), dtype=np.int64)


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


def _pareto_search(w: list[int], v: list[int], cap: int, ids: list[int]) -> list[int]:
    """The ids of an optimal set of items ``w``, ``v`` (positive integer weights, in decreasing
    value-per-weight order) under integer capacity ``cap``."""
    if not w:
        return []
    room = (sum(v) + 1) * (max(*w, cap) + max(v) + 1)  # the bound's largest product
    dtype = np.int64 if room < INT64_ROOM else object
    weight = np.zeros(1, dtype=dtype)  # (S,) the kept sets' weights, ascending
    value = np.zeros(1, dtype=dtype)  # (S,) their values, ascending too (Pareto front)
    prefix_w, prefix_v = _prefix(w, dtype), _prefix(v, dtype)  # (m+1,) each
    items_w, items_v = np.array(w, dtype=dtype), np.array(v, dtype=dtype)
    best = _greedy_value(w, v, cap)
    trail = []  # per item: (parent of each kept set, whether it took the item)
    for k in range(len(w)):
        take = weight + w[k] <= cap
        parent = np.concatenate([np.arange(len(take)), np.flatnonzero(take)])
        weight = np.concatenate([weight, weight[take] + w[k]])
        value = np.concatenate([value, value[take] + v[k]])
        took = np.arange(len(weight)) >= len(take)
        keep = _pareto(weight, value)
        best = max(best, value[keep].max())
        bound = _bound_reaches(
            cap - weight[keep], value[keep], best, k + 1, prefix_w, prefix_v, items_w, items_v
        )
        keep = keep[bound]
        weight, value = weight[keep], value[keep]
        trail.append((parent[keep], took[keep]))
    at = int(np.flatnonzero(value == value.max())[0])  # the lightest set of the best value
    picked = []
    for k in range(len(w) - 1, -1, -1):
        parent, took = trail[k]
        if took[at]:
            picked.append(ids[k])
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


def _greedy_value(w: list[int], v: list[int], cap: int) -> int:
    """The value of the greedy fill in the given order: a set known to fit."""
    used = total = 0
    for wi, vi in zip(w, v, strict=True):
        if used + wi <= cap:
            used, total = used + wi, total + vi
    return total
