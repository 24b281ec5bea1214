"""Exact and near-exact TSP solvers on a distance matrix (paper Sec. 4: "exact labels by
Held–Karp, O(2^n n^2), up to n = 20").

Every function takes a symmetric ``(n, n)`` float64 distance matrix and returns a tour: an int64
permutation of ``0..n-1`` without the closing index, in any rotation and direction.

* :func:`brute_force` and :func:`held_karp` work on the float distances and are the oracles.
* :func:`fast_tsp_exact` and :func:`fast_tsp_near_exact` call fast-tsp (MIT licence), which only
  accepts integer distances up to 65535. :func:`integer_distances` scales the largest distance to
  ``INTEGER_SCALE`` and rounds. The tour that is optimal for the rounded distances can be longer
  in float distances than the float optimum, by at most ``n * max_distance / INTEGER_SCALE``
  (each of the 2n edges of the two tours rounds by at most half a unit). For points in the unit
  square at n = 20 that bound is 7e-4; measured, the excess is 0 on almost every instance and a
  few 1e-6 relative on the rest (docs/solvers.md).
"""

from __future__ import annotations

import itertools
import time

import fast_tsp
import numpy as np

INTEGER_SCALE = 40_000
"""The largest distance maps to this integer; below fast-tsp's uint16 limit with headroom."""

EXACT_MAX_N = 20

NEAR_EXACT_TRIES = 8
"""Calls of fast-tsp per near-exact tour at most, each twice as long as the last (so up to 255
times the budget in wall clock on a starved machine)."""
CPU_SHARE = 0.8
"""A near-exact search that got at least this share of its budget as CPU time is accepted."""
BRUTE_FORCE_MAX_N = 9
LOCAL_EXACT_MAX_N = 15
""":func:`fast_tsp_local` solves up to this n exactly (under 2 ms); beyond, it searches."""


def check_size(solver: str, n: int, max_n: int) -> None:
    """Raise ValueError naming ``solver`` when ``n > max_n``."""
    if n > max_n:
        raise ValueError(f"TSP solver {solver!r} handles n <= {max_n}, got n = {n}")


def cycle_cost(dist: np.ndarray, tour: np.ndarray) -> float:
    """Length of the closed ``tour`` (no closing index) under ``dist``, return edge included."""
    tour = np.asarray(tour, dtype=np.int64)
    return float(dist[tour, np.roll(tour, -1)].sum())


def brute_force(dist: np.ndarray) -> np.ndarray:
    """An optimal tour by enumerating every permutation that starts at city 0 (oracle, n <= 9).

    Raises:
        ValueError: if n > 9.
    """
    n = len(dist)
    check_size("brute_force", n, BRUTE_FORCE_MAX_N)
    if n <= 3:
        return np.arange(n, dtype=np.int64)
    rest = np.array(list(itertools.permutations(range(1, n))), dtype=np.int64)  # ((n-1)!, n-1)
    tours = np.hstack([np.zeros((len(rest), 1), dtype=np.int64), rest])  # ((n-1)!, n)
    lengths = dist[tours, np.roll(tours, -1, axis=1)].sum(axis=1)
    return tours[np.argmin(lengths)]


def held_karp(dist: np.ndarray) -> np.ndarray:
    """An optimal tour by the Held–Karp bitmask DP on the float distances, vectorised over subsets.

    City 0 is the fixed start; bit b of a subset stands for city b + 1. ``cost[S, j]`` is the
    shortest path that leaves city 0, visits exactly the cities in S and ends at city j + 1.
    Time O(2^n n^2), memory 2^(n-1) (n-1) float64 (80 MB at n = 20).

    Raises:
        ValueError: if n > 20.
    """
    n = len(dist)
    check_size("held_karp", n, EXACT_MAX_N)
    if n <= 3:
        return np.arange(n, dtype=np.int64)
    m = n - 1
    inner = dist[1:, 1:]
    bits = 1 << np.arange(m)
    masks = np.arange(1 << m)
    sizes = sum((masks >> b) & 1 for b in range(m))
    cost = np.full((1 << m, m), np.inf)
    parent = np.zeros((1 << m, m), dtype=np.int8)
    cost[bits, np.arange(m)] = dist[0, 1:]
    for k in range(2, m + 1):
        layer = masks[sizes == k]
        for j in range(m):
            sel = layer[(layer & bits[j]) != 0]
            # Cities outside S \ {j} have infinite cost there, so the min only sees valid i.
            via = cost[sel ^ bits[j]] + inner[:, j]  # (len(sel), m): reach i, then step i -> j
            best = via.argmin(axis=1)
            cost[sel, j] = via[np.arange(len(sel)), best]
            parent[sel, j] = best
    return _held_karp_tour(cost, parent, dist[1:, 0], bits)


def _held_karp_tour(
    cost: np.ndarray, parent: np.ndarray, to_start: np.ndarray, bits: np.ndarray
) -> np.ndarray:
    """Walk the Held–Karp parent table back from the full subset to a tour starting at 0."""
    mask = len(cost) - 1
    j = int(np.argmin(cost[mask] + to_start))
    backwards = []
    while mask:
        backwards.append(j + 1)
        mask, j = mask ^ int(bits[j]), int(parent[mask, j])
    return np.array([0, *backwards[::-1]], dtype=np.int64)


def integer_distances(dist: np.ndarray) -> np.ndarray:
    """``dist`` scaled so its largest entry is ``INTEGER_SCALE``, rounded to int64.

    Scaling by the largest distance makes any coordinate range work. All-zero input (every point
    identical) stays all zero.
    """
    largest = float(dist.max(initial=0.0))
    if largest == 0.0:
        return np.zeros(dist.shape, dtype=np.int64)
    return np.rint(dist * (INTEGER_SCALE / largest)).astype(np.int64)


def fast_tsp_exact(dist: np.ndarray) -> np.ndarray:
    """An optimal tour for the integer-scaled distances, by fast-tsp's compiled Held–Karp.

    Optimal in float distances up to the rounding bound in the module docstring.

    Raises:
        ValueError: if n > 20.
    """
    n = len(dist)
    check_size("exact", n, EXACT_MAX_N)
    if n <= 3:
        return np.arange(n, dtype=np.int64)
    return np.asarray(fast_tsp.solve_tsp_exact(integer_distances(dist)), dtype=np.int64)


def near_exact_budget(n: int) -> float:
    """fast-tsp time budget in seconds for n cities: ``max(2 ms, 2e-6 n^2 s)``.

    That is 5 ms at n = 50 and 20 ms at n = 100. Measured on 20 uniform instances at each of
    n = 50 and 100, these budgets gave the same length as LKH (10 runs) and as a 1 s fast-tsp run
    every time. At n <= 20 fast-tsp solves exactly and returns without using the budget.
    """
    return max(0.002, 2e-6 * n * n)


def fast_tsp_near_exact(dist: np.ndarray, budget_s: float | None = None) -> np.ndarray:
    """A near-optimal tour by fast-tsp's time-budgeted local search on integer-scaled distances.

    Args:
        dist: (n, n) symmetric distances.
        budget_s: CPU budget in seconds; ``near_exact_budget(n)`` when None.

    fast-tsp stops on the wall clock. On a loaded machine (more busy processes than cores) the
    search can lose its whole budget while descheduled and return a tour 10-40% above the
    optimum (measured with two trainings and two labelling processes on two cores). So the
    search is timed in this thread's CPU time: a call that got less than ``CPU_SHARE`` of the
    budget as CPU is repeated with twice the wall-clock duration, up to ``NEAR_EXACT_TRIES``
    calls, and the shortest tour is kept. Unloaded, one call suffices. The result depends on
    the clock, so it is not reproducible bit for bit for n > 20; for n <= 20 fast-tsp is exact
    and returns at once.
    """
    n = len(dist)
    if n <= 3:
        return np.arange(n, dtype=np.int64)
    budget = near_exact_budget(n) if budget_s is None else budget_s
    scaled = integer_distances(dist)
    best, best_cost = None, float("inf")
    duration = budget
    for _ in range(NEAR_EXACT_TRIES):
        wall, cpu = time.perf_counter(), time.thread_time()
        tour = np.asarray(fast_tsp.find_tour(scaled, duration_seconds=duration), dtype=np.int64)
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        cost = cycle_cost(scaled, tour)
        if cost < best_cost:
            best, best_cost = tour, cost
        if cpu >= CPU_SHARE * budget or wall < duration:  # had its CPU, or finished early
            break
        duration *= 2
    return best


def fast_tsp_local(dist: np.ndarray) -> np.ndarray:
    """A near-optimal tour by fast-tsp's local search at every n: fast labels for training.

    Like :func:`fast_tsp_near_exact`, except at 16 <= n <= 20, where fast-tsp would solve
    exactly (106 ms at n = 20 on an AMD EPYC core, 18 ms at n = 18) and this searches instead:
    the instance gets copies of city 0 until it has 21 cities, so fast-tsp runs its local
    search (2 ms), and the copies are dropped from the tour. The padded instance has the same
    optimum (a copy sits beside city 0 at no cost), and dropping a copy never lengthens a tour
    (triangle inequality). n <= 15 is solved exactly (under 2 ms). Measured on 100 uniform
    instances at each n of 16-20: every tour was optimal (docs/solvers.md, "`local`").
    """
    n = len(dist)
    if n <= LOCAL_EXACT_MAX_N:
        return fast_tsp_exact(dist)
    if n > EXACT_MAX_N:
        return fast_tsp_near_exact(dist)
    padded = np.concatenate([np.arange(n), np.zeros(EXACT_MAX_N + 1 - n, dtype=np.int64)])
    tour = fast_tsp_near_exact(dist[np.ix_(padded, padded)])  # (21,) over the padded cities
    return tour[tour < n]
