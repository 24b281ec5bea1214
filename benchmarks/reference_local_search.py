"""The numpy 2-opt and Or-opt that ptrnet used before its compiled kernels
(ptrnet/solvers/local_search_kernels.py), kept as their oracle: the kernels must reach the same
tours, move for move (tests/test_local_search_kernels.py)."""

from __future__ import annotations

import numpy as np

OR_OPT_RUNS = (1, 2, 3)


def two_opt(dist: np.ndarray, tour: np.ndarray, max_passes: int | None = None) -> np.ndarray:
    """The numpy 2-opt: the contract and moves of :func:`ptrnet.solvers.tsp_heuristics.two_opt`,
    each first edge's second edges evaluated as one array."""
    tour = np.array(tour, dtype=np.int64)
    n = len(tour)
    # A relative threshold keeps float noise from cycling between equal-length tours.
    threshold = -1e-12 * float(dist.max(initial=0.0))
    passes = 0
    improved = n >= 4
    while improved and (max_passes is None or passes < max_passes):
        improved = False
        for i in range(n - 2):
            # For i = 0, j = n-1 would pick the edge that shares city t[0]: skip it.
            j = np.arange(i + 2, n if i > 0 else n - 1)
            a, b, c, e = tour[i], tour[i + 1], tour[j], tour[(j + 1) % n]
            delta = dist[a, c] + dist[b, e] - dist[a, b] - dist[c, e]
            k = int(np.argmin(delta))
            if delta[k] < threshold:
                tour[i + 1 : j[k] + 1] = tour[i + 1 : j[k] + 1][::-1]
                improved = True
        passes += 1
    return tour


def or_opt(dist: np.ndarray, tour: np.ndarray, max_passes: int | None = None) -> np.ndarray:
    """The numpy Or-opt: the contract and moves of :func:`ptrnet.solvers.or_opt.or_opt`, each
    run's places evaluated as one array."""
    tour = np.array(tour, dtype=np.int64)
    # A relative threshold keeps float noise from cycling between equal-length tours.
    threshold = -1e-12 * float(dist.max(initial=0.0))
    passes = 0
    improved = True
    while improved and (max_passes is None or passes < max_passes):
        improved = False
        for run in OR_OPT_RUNS:
            if len(tour) < run + 3:  # the run, and at least three cities to put it between
                break
            for start in range(len(tour)):
                moved = best_run_move(dist, tour, start, run, threshold)
                if moved is not None:
                    tour, improved = moved, True
        passes += 1
    return tour


def best_run_move(
    dist: np.ndarray, tour: np.ndarray, start: int, run: int, threshold: float
) -> np.ndarray | None:
    """``tour`` with its ``run`` cities from position ``start`` on moved to the place (and way
    round) that shortens the tour most, or None when no place shortens it by more than
    ``-threshold``. The returned tour starts at the city after the run's old place."""
    turned = np.roll(tour, -start)
    cities, rest = turned[:run], turned[run:]  # rest: the cycle q ... p without the run
    first, last = cities[0], cities[-1]
    p, q = rest[-1], rest[0]
    saved = dist[p, first] + dist[last, q] - dist[p, q]  # taking the run out, p-q joined
    a, b = rest[:-1], rest[1:]  # (n - run - 1,) every edge of the rest except p-q itself
    joined = dist[a, b]
    ahead = dist[a, first] + dist[last, b] - joined  # (n - run - 1,) the run put in a-b
    behind = dist[a, last] + dist[first, b] - joined  # the same, reversed
    best_ahead, best_behind = int(np.argmin(ahead)), int(np.argmin(behind))
    if ahead[best_ahead] <= behind[best_behind]:
        where, cost, piece = best_ahead, ahead[best_ahead], cities
    else:
        where, cost, piece = best_behind, behind[best_behind], cities[::-1]
    if cost - saved >= threshold:
        return None
    return np.concatenate([rest[: where + 1], piece, rest[where + 1 :]])


def two_opt_or_opt(dist: np.ndarray, tour: np.ndarray) -> np.ndarray:
    """2-opt to a local optimum, then Or-opt and 2-opt in turn until neither moves: a tour that
    no single 2-opt or Or-opt move shortens. Deterministic; never longer than ``tour``."""
    tour = two_opt(dist, tour)
    while True:
        moved = or_opt(dist, tour)
        if np.array_equal(moved, tour):
            return tour
        tour = two_opt(dist, moved)
