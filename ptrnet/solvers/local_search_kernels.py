"""Compiled loops of the 2-opt and Or-opt local searches (numba, cached on disk after the first
call in a fresh install).

The public functions are :func:`ptrnet.solvers.tsp_heuristics.two_opt`,
:func:`ptrnet.solvers.or_opt.or_opt` and :func:`ptrnet.solvers.or_opt.two_opt_or_opt`; their
docstrings state the moves. These kernels make the same moves in the same order, so they reach
the same tours as the vectorised numpy code they replaced (benchmarks/reference_local_search.py
keeps that code as the oracle), 30-165x faster on one instance of 20-200 cities, where
numpy's per-call overhead had dominated (benchmarks/bench_local_search.py).

Contract of every kernel: ``dist`` a C-contiguous (n, n) float64 matrix, ``tour`` an int64
permutation of 0..n-1 (n >= 0) that the kernel modifies in place or replaces, ``max_passes`` < 0
for no limit. Ties go to the first candidate, as ``np.argmin`` gave them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

OR_OPT_RUNS = (1, 2, 3)  # the run lengths tried, in this order


def kernel_inputs(dist: np.ndarray, tour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``dist`` and a fresh copy of ``tour`` in the types every kernel here takes: C-contiguous
    float64 and int64 (the public searches call this, so any caller's arrays work)."""
    return np.ascontiguousarray(dist, dtype=np.float64), np.array(tour, dtype=np.int64)


@njit(cache=True)
def move_threshold(dist: np.ndarray) -> float:
    """The improvement a move must beat: relative, so that float noise cannot cycle between
    tours of equal length."""
    top = 0.0
    for value in dist.ravel():
        top = max(top, value)
    return -1e-12 * top


@njit(cache=True)
def two_opt_kernel(dist: np.ndarray, tour: np.ndarray, max_passes: int) -> np.ndarray:
    """2-opt passes on ``tour`` in place: for each first edge (t[i], t[i+1]) in order, the best
    second edge (t[j], t[j+1]), its reversal of t[i+1..j] applied if it shortens the tour."""
    n = tour.shape[0]
    if n < 4:
        return tour
    threshold = move_threshold(dist)
    passes = 0
    improved = True
    while improved and (max_passes < 0 or passes < max_passes):
        improved = False
        for i in range(n - 2):
            a, b = tour[i], tour[i + 1]
            best, best_j = np.inf, -1
            # For i = 0, j = n-1 would pick the edge that shares city t[0]: skip it.
            for j in range(i + 2, n if i > 0 else n - 1):
                c, e = tour[j], tour[(j + 1) % n]
                delta = dist[a, c] + dist[b, e] - dist[a, b] - dist[c, e]
                if delta < best:
                    best, best_j = delta, j
            if best < threshold:
                tour[i + 1 : best_j + 1] = tour[i + 1 : best_j + 1][::-1].copy()
                improved = True
        passes += 1
    return tour


@njit(cache=True)
def run_move(
    dist: np.ndarray, tour: np.ndarray, start: int, run: int, threshold: float
) -> np.ndarray:
    """``tour`` with the ``run`` cities from position ``start`` on moved to the place (and way
    round) that shortens it most, starting at the city after the run's old place; an empty
    array when no place shortens it by more than ``-threshold``."""
    n = tour.shape[0]
    turned = np.roll(tour, -start)
    rest = turned[run:]  # the cycle q ... p without the run
    first, last = turned[0], turned[run - 1]
    p, q = rest[-1], rest[0]
    saved = dist[p, first] + dist[last, q] - dist[p, q]  # taking the run out, p-q joined
    ahead_best, ahead_at = np.inf, -1
    behind_best, behind_at = np.inf, -1
    for w in range(n - run - 1):  # every edge a-b of the rest except p-q itself
        a, b = rest[w], rest[w + 1]
        joined = dist[a, b]
        ahead = dist[a, first] + dist[last, b] - joined  # the run put in a-b
        behind = dist[a, last] + dist[first, b] - joined  # the same, reversed
        if ahead < ahead_best:
            ahead_best, ahead_at = ahead, w
        if behind < behind_best:
            behind_best, behind_at = behind, w
    reverse = not ahead_best <= behind_best
    where, cost = (behind_at, behind_best) if reverse else (ahead_at, ahead_best)
    if cost - saved >= threshold:
        return tour[:0]
    piece = turned[:run][::-1] if reverse else turned[:run]
    return np.concatenate((rest[: where + 1], piece, rest[where + 1 :]))


@njit(cache=True)
def or_opt_kernel(dist: np.ndarray, tour: np.ndarray, max_passes: int) -> np.ndarray:
    """Or-opt passes: each run length in turn, each start position in turn, the best move of
    that run applied when it shortens the tour; until a pass moves nothing."""
    n = tour.shape[0]
    threshold = move_threshold(dist)
    passes = 0
    improved = True
    while improved and (max_passes < 0 or passes < max_passes):
        improved = False
        for run in OR_OPT_RUNS:
            if n < run + 3:  # the run, and at least three cities to put it between
                break
            for start in range(n):
                moved = run_move(dist, tour, start, run, threshold)
                if moved.shape[0]:
                    tour, improved = moved, True
        passes += 1
    return tour


@njit(cache=True)
def two_opt_or_opt_kernel(dist: np.ndarray, tour: np.ndarray) -> np.ndarray:
    """2-opt to a local optimum, then Or-opt and 2-opt in turn until Or-opt moves nothing."""
    tour = two_opt_kernel(dist, tour, -1)
    while True:
        moved = or_opt_kernel(dist, tour.copy(), -1)
        if np.array_equal(moved, tour):
            return tour
        tour = two_opt_kernel(dist, moved, -1)
